package session

import (
	"slices"
	"strings"
	"sync"
)

// xattrList is a file's extended attributes, sorted by name. It is
// replaced on every change and never modified in place, so that a flush or
// the journal may hold it without a copy. A slice rather than a map: with
// user.memfs.created and .writer on every file, maps cost ~450 bytes per
// key, this ~180 (100,000 keys indexed at mount).
type xattrList []xattrKV

type xattrKV struct {
	name  string
	value []byte
}

// names interns attribute names: nearly every file has the same few.
var names sync.Map // string -> string

func intern(s string) string {
	if v, ok := names.Load(s); ok {
		return v.(string)
	}
	v, _ := names.LoadOrStore(s, strings.Clone(s))
	return v.(string)
}

// toXAttrList copies m.
func toXAttrList(m map[string][]byte) xattrList {
	if len(m) == 0 {
		return nil
	}
	l := make(xattrList, 0, len(m))
	for k, v := range m {
		l = append(l, xattrKV{name: intern(k), value: v})
	}
	slices.SortFunc(l, func(a, b xattrKV) int { return strings.Compare(a.name, b.name) })
	return l
}

func (l xattrList) find(name string) (int, bool) {
	return slices.BinarySearchFunc(l, name, func(kv xattrKV, n string) int { return strings.Compare(kv.name, n) })
}

func (l xattrList) get(name string) ([]byte, bool) {
	if i, ok := l.find(name); ok {
		return l[i].value, true
	}
	return nil, false
}

func (l xattrList) names() []string {
	out := make([]string, len(l))
	for i, kv := range l {
		out[i] = kv.name
	}
	return out
}

// toMap returns the attributes as a backend.Info wants them (nil for
// none). The values are shared.
func (l xattrList) toMap() map[string][]byte {
	if len(l) == 0 {
		return nil
	}
	m := make(map[string][]byte, len(l))
	for _, kv := range l {
		m[kv.name] = kv.value
	}
	return m
}

// with returns a copy of l with name set to value.
func (l xattrList) with(name string, value []byte) xattrList {
	i, ok := l.find(name)
	out := make(xattrList, 0, len(l)+1)
	out = append(out, l[:i]...)
	out = append(out, xattrKV{name: intern(name), value: value})
	if ok {
		i++
	}
	return append(out, l[i:]...)
}

// without returns a copy of l without name (nil when empty).
func (l xattrList) without(name string) xattrList {
	i, ok := l.find(name)
	if !ok {
		return l
	}
	if len(l) == 1 {
		return nil
	}
	return append(append(make(xattrList, 0, len(l)-1), l[:i]...), l[i+1:]...)
}
