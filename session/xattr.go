package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// Extended attributes live in file.xattrs, a map that is replaced on every
// change and never modified in place, so that an Info handed to a flush or
// the journal can share it.

// XAttrFlags are setxattr(2)'s flags.
type XAttrFlags uint32

const (
	XAttrCreate  XAttrFlags = 1 // fail if the attribute exists
	XAttrReplace XAttrFlags = 2 // fail if it does not
)

type writerKey struct{}

// WithWriter returns a context that attributes the session operations
// made with it (Rename, SetAttr, XAttrs.Set, Open) to w.
func WithWriter(ctx context.Context, w meta.WriterInfo) context.Context {
	return context.WithValue(ctx, writerKey{}, &w)
}

func writerFrom(ctx context.Context) *meta.WriterInfo {
	w, _ := ctx.Value(writerKey{}).(*meta.WriterInfo)
	return w
}

// Get returns the value of attribute name of file key. A directory
// has none.
func (xa *XAttrs) Get(key, name string) ([]byte, error) {
	c := xa.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	var x xattrList
	if f, ok := c.mu.tree.files[key]; ok {
		x = f.xattrs
	} else if d, ok := c.mu.tree.dirs[key]; ok {
		x = d.xattrs
	} else {
		return nil, notExist("getxattr", key)
	}
	if f, ok := c.mu.tree.files[key]; ok && f.mode.Type() != 0 {
		return nil, pathErr("getxattr", key, ErrNoXAttr)
	}
	if name == meta.Rev {
		if f, ok := c.mu.tree.files[key]; ok {
			if rev, ok := f.revLocked(); ok {
				return []byte(strconv.FormatInt(rev, 10)), nil
			}
		}
		return nil, pathErr("getxattr", key, ErrNoXAttr)
	}
	v, ok := x.get(name)
	if !ok {
		return nil, pathErr("getxattr", key, ErrNoXAttr)
	}
	return v, nil
}

// List returns the names of the attributes of key, sorted.
func (xa *XAttrs) List(key string) ([]string, error) {
	c := xa.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	if f, ok := c.mu.tree.files[key]; ok {
		names := f.xattrs.names()
		if _, ok := f.revLocked(); ok && f.mode.Type() == 0 {
			names = slices.Insert(names, sort.SearchStrings(names, meta.Rev), meta.Rev)
		}
		return names, nil
	}
	if d, ok := c.mu.tree.dirs[key]; ok {
		return d.xattrs.names(), nil
	}
	return nil, notExist("listxattr", key)
}

// Set sets attribute name of file key. Only user.* attributes are
// kept; memfs's own (user.memfs.*) are validated (user.memfs.type against
// Options.Types), and created and writer are read-only. The change is
// flushed with the entry and journaled.
func (xa *XAttrs) Set(ctx context.Context, key, name string, value []byte, flags XAttrFlags) error {
	c := xa.c
	if name == AttrSignal && c.attrAnnounced(key) {
		return nil // the helper's request: the change is in the session already
	}
	if err := c.checkXAttrWrite("setxattr", key, name); err != nil {
		return err
	}
	if err := meta.ValidateWith(c.opts.Types, name, value); err != nil {
		if errors.Is(err, meta.ErrReadOnly) {
			return pathErr("setxattr", key, fmt.Errorf("%w: %w", ErrReadOnly, err))
		}
		c.log.Info("invalid memfs attribute refused (EINVAL)", "key", key, "attr", name, "err", err)
		return pathErr("setxattr", key, fmt.Errorf("%w: %w", ErrInvalidOp, err))
	}
	return c.changeXAttr(ctx, "setxattr", key, func(x map[string][]byte) error {
		_, exists := x[name]
		switch {
		case flags&XAttrCreate != 0 && exists:
			return ErrXAttrExists
		case flags&XAttrReplace != 0 && !exists:
			return ErrNoXAttr
		}
		x[name] = append([]byte{}, value...)
		return nil
	})
}

// Remove removes attribute name of file key.
func (xa *XAttrs) Remove(ctx context.Context, key, name string) error {
	c := xa.c
	if err := c.checkXAttrWrite("removexattr", key, name); err != nil {
		return err
	}
	if meta.ReadOnly(name) {
		return pathErr("removexattr", key, fmt.Errorf("%w: %w: %s", ErrReadOnly, meta.ErrReadOnly, name))
	}
	return c.changeXAttr(ctx, "removexattr", key, func(x map[string][]byte) error {
		if _, ok := x[name]; !ok {
			return ErrNoXAttr
		}
		delete(x, name)
		return nil
	})
}

func (c *Context) checkXAttrWrite(op, key, name string) error {
	if err := c.attrWritable(op, key); err != nil {
		return err
	}
	if !strings.HasPrefix(name, backend.XAttrPrefix) {
		return pathErr(op, key, ErrXAttrNotSupported)
	}
	if err := backend.ValidateXAttrName(name); err != nil {
		return pathErr(op, key, fmt.Errorf("%w: %w", ErrXAttrName, err))
	}
	if op == "setxattr" {
		// A name is stored as it is (values are redacted): one that
		// holds a secret is refused.
		if err := c.checkName(op, name); err != nil {
			return err
		}
	}
	c.mu.RLock()
	f, isFile := c.mu.tree.files[key]
	special := isFile && f.mode.Type() != 0
	c.mu.RUnlock()
	if special {
		// Linux keeps user.* attributes on regular files and
		// directories only.
		return pathErr(op, key, ErrXAttrNotSupported)
	}
	return nil
}

// changeXAttr applies edit to a copy of key's attributes and installs the
// copy if it fits the store's limit.
func (c *Context) changeXAttr(ctx context.Context, op, key string, edit func(map[string][]byte) error) error {
	c.mu.Lock()
	if d, ok := c.mu.tree.dirs[key]; ok {
		x, err := editedXAttrs(op, key, d.xattrs, edit)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		d.xattrs = x
		d.ctime = c.now().UnixNano()
		c.markDirDirtyLocked(d)
		gen := c.mu.pending.gen
		c.mu.Unlock()
		c.emit(Change{Op: OpAttr, Key: key})
		return c.journalDir(gen, key)
	}
	c.mu.Unlock()
	// Persisting an attribute means saving the entry, which needs its value.
	defer unpin(c.pinKey(key))
	if err := c.Resolve(ctx, key); err != nil {
		return err
	}
	c.mu.Lock()
	f, ok := c.mu.tree.files[key]
	if !ok || !f.loaded {
		c.mu.Unlock()
		return notExist(op, key)
	}
	x, err := editedXAttrs(op, key, f.xattrs, edit)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	if maps.EqualFunc(x.toMap(), f.xattrs.toMap(), bytes.Equal) {
		c.mu.Unlock()
		return nil // the value it has: no save, no version (as a chmod to the same mode)
	}
	f.xattrs = x
	f.by = writerFrom(ctx)
	c.markDirtyLocked(f)
	c.mu.Unlock()
	c.emit(Change{Op: OpAttr, Key: key})
	return c.journalKey(key)
}

// editedXAttrs applies edit to a copy of old and returns it, if it fits
// the store's limit (ErrXAttrSpace otherwise).
func editedXAttrs(op, key string, old xattrList, edit func(map[string][]byte) error) (xattrList, error) {
	x := old.toMap()
	if x == nil {
		x = make(map[string][]byte)
	}
	if err := edit(x); err != nil {
		return nil, pathErr(op, key, err)
	}
	if err := backend.ValidateXAttrs(x); err != nil {
		return nil, pathErr(op, key, fmt.Errorf("%w: %w", ErrXAttrSpace, err))
	}
	return toXAttrList(x), nil
}

// setWriterLocked records w as the writer of f's value (user.memfs.writer).
func (c *Context) setWriterLocked(f *file, w *meta.WriterInfo) {
	if w == nil {
		w = c.opts.Self
	}
	f.by = w
	if w == nil {
		return
	}
	v := w.Encode()
	if old, _ := f.xattrs.get(meta.Writer); string(old) == string(v) {
		return
	}
	f.xattrs = f.xattrs.with(meta.Writer, v)
}

// revLocked is user.memfs.rev of f: the store's revision of its content,
// when f is clean, the store holds it under its key and numbers its
// writes.
func (f *file) revLocked() (int64, bool) {
	if f.gen != 0 || f.key == "" || f.from != f.key || f.base.Rev == 0 {
		return 0, false
	}
	return f.base.Rev, true
}

// FilesWith returns the files that have any of the attributes names, in
// no order, each with its times and those of the attributes it has (no
// value, no other field), copying only that (a mount's expiry finds the
// files that will expire among 100,000 with it). It takes the keys under
// the read lock, then looks at them in batches, letting the lock go
// between them: a write waits for one batch, never for the whole pass.
func (xa *XAttrs) FilesWith(names ...string) []backend.Entry {
	c := xa.c
	c.mu.RLock()
	keys := make([]string, 0, len(c.mu.tree.files))
	for k := range c.mu.tree.files {
		keys = append(keys, k)
	}
	c.mu.RUnlock()
	var out []backend.Entry
	for batch := range slices.Chunk(keys, 4096) {
		out = c.filesWith(out, batch, names)
	}
	return out
}

// filesWith appends to out those of keys that XAttrs.FilesWith returns.
func (c *Context) filesWith(out []backend.Entry, keys, names []string) []backend.Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, k := range keys {
		f, ok := c.mu.tree.files[k]
		if !ok {
			continue // gone meanwhile
		}
		var x map[string][]byte
		for _, n := range names {
			if v, ok := f.xattrs.get(n); ok {
				if x == nil {
					x = make(map[string][]byte, len(names))
				}
				x[n] = v
			}
		}
		if x != nil {
			out = append(out, backend.Entry{Key: k, Info: backend.Info{MTime: time.Unix(0, f.mtime), CTime: time.Unix(0, f.ctime), XAttrs: x}})
		}
	}
	return out
}
