package memfs

import (
	"context"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/quota"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/status"
)

// This file holds what the engine does for a mount's limits and routes:
// its quotas' tracker (Options.Quotas), kept by the session's changes,
// and what .memfs/status and df say of them.

// newQuota makes the tracker of Options.Quotas, nil for none; trackQuota
// fills it once the session is up.
func (f *FS) newQuota() *quota.Tracker {
	if len(f.opts.Quotas) == 0 {
		return nil
	}
	return quota.NewTracker(f.opts.Quotas)
}

// trackQuota fills the quotas' tracker with every file the session knows
// and keeps it by the session's changes: synchronously, so that the next
// request is checked against what this one did.
func (f *FS) trackQuota() {
	t := f.quota
	if t == nil {
		return
	}
	f.c.Watch(func(ch session.Change) {
		keys, dirs := f.touched(ch)
		for _, key := range keys {
			t.Remove(key)
			if dirs {
				t.RemovePrefix(key)
			}
			for _, e := range f.filesAt(key, dirs) {
				t.Set(e.Key, e.Info.Size)
			}
		}
	})
	for _, e := range f.c.Entries("") {
		t.Set(e.Key, e.Info.Size)
	}
}

// touched returns the keys whose files a change may have changed, for
// the trackers of quotas and expiry to look at again: both names of a
// rename (an exchange leaves both), every name of a file with several;
// dirs says that one is a directory, whose files to look at too (the
// rename of a directory), which costs a pass over every key. (A removed
// directory was empty.)
func (f *FS) touched(ch session.Change) (keys []string, dirs bool) {
	switch ch.Op {
	case session.OpRename:
		isDir := func(k string) bool { st, err := f.c.Stat(k); return err == nil && st.IsDir }
		return []string{ch.OldKey, ch.Key}, isDir(ch.Key) || isDir(ch.OldKey)
	case session.OpRmdir, session.OpRemove:
		return []string{ch.Key}, false
	case session.OpCreate, session.OpWrite, session.OpContent, session.OpAttr, session.OpConflict:
		if st, err := f.c.Stat(ch.Key); err == nil && st.Nlink > 1 && !st.IsDir {
			return append(f.c.External().OtherNames(ch.Key, ""), ch.Key), false
		}
		return []string{ch.Key}, false
	}
	return nil, false
}

// filesAt returns what the session holds at key now: the file, or with
// dirs a directory's files; none when key is gone.
func (f *FS) filesAt(key string, dirs bool) []backend.Entry {
	if e, ok := f.c.Entry(key); ok {
		return []backend.Entry{e}
	}
	if st, err := f.c.Stat(key); dirs && err == nil && st.IsDir {
		return f.c.Entries(key + "/")
	}
	return nil
}

// quotaStatus is what .memfs/status says of the quotas to cr: the usage
// of each, and its largest files that cr may read.
func (f *FS) quotaStatus(cr session.Cred) []status.Quota {
	if f.quota == nil {
		return nil
	}
	var out []status.Quota
	for _, u := range f.quota.Usage(func(key string) bool { return f.c.Access().Readable(cr, key)[0] }) {
		q := status.Quota{Prefix: u.Limit.Prefix, Bytes: u.Bytes, MaxBytes: u.Limit.Bytes, Files: u.Files,
			MaxFiles: u.Limit.Files, MaxFileSize: u.Limit.FileSize, UsageHidden: u.Hidden}
		for _, it := range u.Largest {
			q.Largest = append(q.Largest, status.File{Key: it.Key, Size: it.Size})
		}
		out = append(out, q)
	}
	return out
}

// routesStatus is what .memfs/status says of the routes.
func (f *FS) routesStatus() []status.Route {
	var out []status.Route
	for _, r := range f.opts.Routes.Routes() {
		s := status.Route{Prefix: r.Prefix, Store: r.Store, Tier: r.Tier.String(), ReadOnly: r.ReadOnly}
		if r.TTL > 0 {
			s.TTL = r.TTL.String()
		}
		out = append(out, s)
	}
	return out
}

// routeName names the route of a key, for its events; nil for a mount
// of one store.
func (f *FS) routeName() func(key string) string {
	if f.opts.Routes.Empty() {
		return nil
	}
	return func(key string) string { return f.opts.Routes.Of(key).Name() }
}

// steady reports the keys the kernel may keep long
// (fsnode.Options.Steady): every key (MountOptions.Steady), or those of
// read-only routes; nil for none.
func (f *FS) steady(all bool) func(key string) bool {
	if all {
		return func(string) bool { return true }
	}
	for _, r := range f.opts.Routes.Routes() {
		if r.ReadOnly {
			return f.opts.Routes.ReadOnly
		}
	}
	return nil
}

// space is what df on the mount shows: the store's room, or the quota of
// the whole namespace (--quota /=...) when there is one.
func (f *FS) space() func(context.Context) (backend.Space, error) {
	var root *quota.Limit
	at := 0 // root's place among the limits
	for i, l := range f.opts.Quotas {
		if l.Prefix == "" && (l.Bytes > 0 || l.Files > 0) {
			root, at = &l, i
		}
	}
	sp, spacer := f.store.(backend.Spacer)
	switch {
	case root != nil:
		return func(ctx context.Context) (backend.Space, error) {
			u := f.quota.Usage(nil)[at] // df: the sums, no file named
			s := backend.Space{Used: u.Bytes, Avail: -1, Files: -1}
			if spacer {
				if st, err := sp.Space(ctx); err == nil {
					s.Avail = st.Avail
				}
			}
			if root.Bytes > 0 && (s.Avail < 0 || root.Bytes-u.Bytes < s.Avail) {
				s.Avail = max(root.Bytes-u.Bytes, 0)
			}
			if root.Files > 0 {
				s.Files = max(root.Files-u.Files, 0)
			}
			return s, nil
		}
	case spacer:
		return sp.Space
	}
	return nil
}
