// Package quota bounds what a prefix of the namespace holds: its bytes,
// its files, and its largest file.
//
//	memfs mount --quota memory/=100MiB,10000files,1MiB
//
// A Tracker knows the size of every file under a limited prefix (filled
// once at mount from the session, kept by its changes), so that a write
// is checked in O(limits), never by a walk. A write that would pass a
// limit fails with an *Error: EDQUOT for bytes and files, EFBIG for the
// size of one file; the error, the log and .memfs/status say what is
// over, by how much, and which files under the prefix are the largest
// (what to remove).
package quota

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dustin/go-humanize"
)

// A Limit bounds the files under Prefix ("" for the whole namespace).
// A zero field is no bound.
type Limit struct {
	Prefix   string
	Bytes    int64 // the sum of the files' sizes
	Files    int64 // how many files (each name of a hard link counts)
	FileSize int64 // the largest one file may be
}

// String is the limit as --quota takes it.
func (l Limit) String() string {
	var parts []string
	if l.Bytes > 0 {
		parts = append(parts, "bytes="+humanize.IBytes(uint64(l.Bytes)))
	}
	if l.Files > 0 {
		parts = append(parts, "files="+strconv.FormatInt(l.Files, 10))
	}
	if l.FileSize > 0 {
		parts = append(parts, "file="+humanize.IBytes(uint64(l.FileSize)))
	}
	return l.Prefix + "=" + strings.Join(parts, ",")
}

// ParseAll reads limits as --quota takes them (Parse), given as a flag
// that splits its values at commas gives them: a piece that does not
// start with "PREFIX/=" goes on the limit before it.
func ParseAll(pieces []string) ([]Limit, error) {
	var specs []string
	for _, p := range pieces {
		if before, _, ok := strings.Cut(p, "="); (!ok || !strings.HasSuffix(before, "/")) && len(specs) > 0 {
			specs[len(specs)-1] += "," + p
			continue
		}
		specs = append(specs, p)
	}
	var ls []Limit
	for _, s := range specs {
		l, err := Parse(s)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// Parse reads a limit as --quota takes it: PREFIX/=LIMITS, where LIMITS
// is a comma-separated list of bytes=SIZE, files=N and file=SIZE, or in
// short: SIZE (the bytes), Nfiles, and a second SIZE (the largest file):
// "memory/=100MiB,10000files,1MiB". PREFIX "/" is the whole namespace,
// which df on the mount shows.
func Parse(s string) (Limit, error) {
	prefix, spec, ok := strings.Cut(s, "=")
	if !ok || spec == "" || !strings.HasSuffix(prefix, "/") {
		return Limit{}, fmt.Errorf("quota %q: want PREFIX/=LIMITS (memory/=100MiB,10000files,1MiB; /=1GiB)", s)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	l := Limit{Prefix: prefix}
	sizes := 0
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		name, v, named := strings.Cut(p, "=")
		var err error
		switch {
		case named && name == "bytes":
			l.Bytes, err = size(v)
		case named && name == "files":
			l.Files, err = strconv.ParseInt(v, 10, 64)
		case named && name == "file":
			l.FileSize, err = size(v)
		case named:
			err = fmt.Errorf("unknown limit %q (bytes, files, file)", name)
		case strings.HasSuffix(p, "files"):
			l.Files, err = strconv.ParseInt(strings.TrimSuffix(p, "files"), 10, 64)
		case sizes == 0:
			l.Bytes, err = size(p)
			sizes++
		case sizes == 1:
			l.FileSize, err = size(p)
			sizes++
		default:
			err = errors.New("more than two sizes")
		}
		if err != nil {
			return Limit{}, fmt.Errorf("quota %q: %s: %w", s, p, err)
		}
	}
	if l.Bytes < 0 || l.Files < 0 || l.FileSize < 0 || l == (Limit{Prefix: prefix}) {
		return Limit{}, fmt.Errorf("quota %q: want at least one positive limit", s)
	}
	return l, nil
}

func size(v string) (int64, error) {
	n, err := humanize.ParseBytes(v)
	if err != nil || n == 0 || n > 1<<62 {
		return 0, fmt.Errorf("%q: want a size (100MiB, 1GiB, or bytes)", v)
	}
	return int64(n), nil
}

// ErrOver is wrapped by the *Error of a write past a limit of bytes or
// files (EDQUOT through a mount); ErrFileSize by one past the largest a
// file may be (EFBIG).
var (
	ErrOver     = errors.New("quota exceeded")
	ErrFileSize = errors.New("file larger than its quota allows")
)

// Error is a write refused by a limit: what is over, by how much, and
// the largest files under the prefix.
type Error struct {
	Limit   Limit
	What    string // "bytes", "files", "file size"
	Over    int64  // by how much the write would pass the limit
	Largest []Item // the largest files under the prefix, largest first
}

// Item is a file and its size.
type Item struct {
	Key  string
	Size int64
}

func (e *Error) Error() string {
	var b strings.Builder
	name := cmp.Or(e.Limit.Prefix, "/")
	switch e.What {
	case "files":
		fmt.Fprintf(&b, "quota of %s: %d files allowed, the write would make %d more", name, e.Limit.Files, e.Over)
	case "file size":
		fmt.Fprintf(&b, "quota of %s: a file may hold %s, the write would pass it by %s", name, humanize.IBytes(uint64(e.Limit.FileSize)), humanize.IBytes(uint64(e.Over)))
	default:
		fmt.Fprintf(&b, "quota of %s: %s allowed, the write would pass it by %s", name, humanize.IBytes(uint64(e.Limit.Bytes)), humanize.IBytes(uint64(e.Over)))
	}
	if len(e.Largest) > 0 {
		b.WriteString("; largest: ")
		for i, it := range e.Largest {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%s)", it.Key, humanize.IBytes(uint64(it.Size)))
		}
	}
	return b.String()
}

func (e *Error) Unwrap() error {
	if e.What == "file size" {
		return ErrFileSize
	}
	return ErrOver
}

// Largest is how many of the largest files an Error and a Usage name.
const Largest = 5

// A Tracker knows the files under its limits and checks writes against
// them. It is safe for concurrent use.
type Tracker struct {
	limits []Limit
	mu     sync.Mutex
	sizes  map[string]int64 // every file under a limit's prefix
	used   []usage          // per limit
}

type usage struct{ bytes, files int64 }

// NewTracker returns a Tracker of limits, which hold no file yet.
func NewTracker(limits []Limit) *Tracker {
	return &Tracker{limits: slices.Clone(limits), sizes: map[string]int64{}, used: make([]usage, len(limits))}
}

// Limits returns the tracker's limits.
func (t *Tracker) Limits() []Limit { return slices.Clone(t.limits) }

// under reports whether key is under limit i.
func (t *Tracker) under(i int, key string) bool { return strings.HasPrefix(key, t.limits[i].Prefix) }

// limited reports whether any limit covers key.
func (t *Tracker) limited(key string) bool {
	for i := range t.limits {
		if t.under(i, key) {
			return true
		}
	}
	return false
}

// Set records that the file key now holds size bytes (a new file, or a
// changed one).
func (t *Tracker) Set(key string, size int64) {
	if !t.limited(key) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, had := t.sizes[key]
	t.sizes[key] = size
	for i := range t.limits {
		if t.under(i, key) {
			t.used[i].bytes += size - old
			if !had {
				t.used[i].files++
			}
		}
	}
}

// Remove records that the file key is gone.
func (t *Tracker) Remove(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(key)
}

func (t *Tracker) removeLocked(key string) {
	old, had := t.sizes[key]
	if !had {
		return
	}
	delete(t.sizes, key)
	for i := range t.limits {
		if t.under(i, key) {
			t.used[i].bytes -= old
			t.used[i].files--
		}
	}
}

// RemovePrefix records that every file under the directory dir is gone.
func (t *Tracker) RemovePrefix(dir string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	under := dir + "/"
	for k := range t.sizes {
		if strings.HasPrefix(k, under) {
			t.removeLocked(k)
		}
	}
}

// Check returns the error of a write that would make the file key hold
// size bytes (creating it when it is new), or nil.
func (t *Tracker) Check(key string, size int64) error {
	if !t.limited(key) {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, had := t.sizes[key]
	for i, l := range t.limits {
		if !t.under(i, key) {
			continue
		}
		u := t.used[i]
		switch {
		case l.FileSize > 0 && size > l.FileSize:
			return t.errLocked(i, "file size", size-l.FileSize)
		case l.Files > 0 && !had && u.files+1 > l.Files:
			return t.errLocked(i, "files", u.files+1-l.Files)
		case l.Bytes > 0 && size > old && u.bytes+size-old > l.Bytes:
			return t.errLocked(i, "bytes", u.bytes+size-old-l.Bytes)
		}
	}
	return nil
}

// Moves reports whether moving a to b changes the limits that cover them
// or what is under them (a rename between them is EXDEV, so that mv
// copies and each file is checked): a and b under different limits, or
// either a directory that holds a limit's prefix (moving x onto memory
// when memory/ is limited).
func (t *Tracker) Moves(a, b string) bool {
	for i, l := range t.limits {
		if t.under(i, a) != t.under(i, b) || holds(a, l.Prefix) || holds(b, l.Prefix) {
			return true
		}
	}
	return false
}

// holds reports whether the directory dir is prefix's directory or above
// it ("memory" holds "memory/" and "memory/notes/").
func holds(dir, prefix string) bool {
	return prefix != "" && strings.HasPrefix(prefix, dir+"/")
}

func (t *Tracker) errLocked(i int, what string, over int64) *Error {
	return &Error{Limit: t.limits[i], What: what, Over: over, Largest: t.largestLocked(i, nil)}
}

// largestLocked returns the Largest largest files under limit i that
// show allows (nil: all).
func (t *Tracker) largestLocked(i int, show func(key string) bool) []Item {
	var items []Item
	for k, s := range t.sizes {
		if t.under(i, k) && (show == nil || show(k)) {
			items = append(items, Item{k, s})
		}
	}
	slices.SortFunc(items, func(a, b Item) int { return cmp.Or(cmp.Compare(b.Size, a.Size), strings.Compare(a.Key, b.Key)) })
	return items[:min(len(items), Largest)]
}

// Usage is what a limit's prefix holds.
type Usage struct {
	Limit   Limit
	Bytes   int64
	Files   int64
	Largest []Item // those the caller may see
	// Hidden: the caller may not see every file under the prefix, and
	// Bytes and Files are 0 (the sums would tell of the others).
	Hidden bool
}

// Usage returns each limit's usage as a caller sees it: the largest files
// show allows, and the sums only when it allows every file under the
// prefix (nil shows all).
func (t *Tracker) Usage(show func(key string) bool) []Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Usage, len(t.limits))
	for i, l := range t.limits {
		out[i] = Usage{Limit: l, Bytes: t.used[i].bytes, Files: t.used[i].files, Largest: t.largestLocked(i, show)}
		if show == nil {
			continue
		}
		for k := range t.sizes {
			if t.under(i, k) && !show(k) {
				out[i].Bytes, out[i].Files, out[i].Hidden = 0, 0, true
				break
			}
		}
	}
	return out
}

// Recount reports the usage of every limit counted anew from sizes, the
// files (key -> size) of the namespace: what the Tracker's must equal.
func Recount(limits []Limit, sizes map[string]int64) []Usage {
	t := NewTracker(limits)
	for k, s := range sizes {
		t.Set(k, s)
	}
	return t.Usage(nil)
}
