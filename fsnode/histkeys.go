package fsnode

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/session"
)

// histDir is .memfs/history/KEY/ ("" for .memfs/history/ itself): the
// keys under KEY that are or ever were, and when KEY had file or symlink
// versions, one file per version (its seq in 8 digits; a lookup of the
// bare number finds it too) and log.
type histDir struct {
	gofs.Inode
	noRemoval
	root *Root
	hist History
	key  string
}

// version returns the key's version at seq that has a file, nil for none:
// from the versions a listing kept, else by its one record, else (a
// version from before a rename, recorded under the old name) from all.
func (d *histDir) version(ctx context.Context, seq uint64) (*history.Version, error) {
	find := func(vs []history.Version) *history.Version {
		i, ok := slices.BinarySearchFunc(vs, seq, func(v history.Version, s uint64) int { return cmp.Compare(v.Seq, s) })
		if !ok || !contentVersion(&vs[i]) {
			return nil
		}
		v := vs[i]
		return &v
	}
	vs, ok, err := d.root.keptVersions(ctx, d.key)
	if err != nil || ok {
		return find(vs), err
	}
	v, err := d.hist.Version(ctx, d.key, seq)
	if err == nil {
		return find([]history.Version{v}), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if vs, err = d.root.versions(ctx, d.key); err != nil {
		return nil, err
	}
	return find(vs), nil
}

var (
	_ gofs.NodeLookuper  = (*histDir)(nil)
	_ gofs.NodeReaddirer = (*histDir)(nil)
	_ gofs.NodeGetattrer = (*histDir)(nil)
)

// histLogName is the file of a key's history that lists its versions.
const histLogName = "log"

func (d *histDir) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if d.key == "" {
		d.root.pastTop(pastIno("history", ""), &out.Attr)
	} else {
		d.root.readOnlyDir(pastIno("history", d.key), &out.Attr)
	}
	return 0
}

// contentVersion reports whether v has a file of its own under the key's
// history: a value a reader can read back (a file or a symlink). A
// conflict's version names no value (the other writer's bytes, which
// history never held): it is in the log only, not a file that reads ENOENT.
func contentVersion(v *history.Version) bool {
	return v.Op != history.OpDelete && history.HasValue(v.Mode) && !(v.Op == history.OpConflict && v.Addr.IsZero())
}

// versionName is a version's file name: ls sorts 8 digits in seq order
// up to 10^8 events.
func versionName(seq uint64) string { return fmt.Sprintf("%08d", seq) }

func (d *histDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	if d.key != "" && !d.root.nowVisible(ctx, d.key) {
		return nil, syscall.EACCES
	}
	var out []fuse.DirEntry
	if d.key != "" {
		vs, err := d.root.versions(ctx, d.key)
		if err != nil {
			return nil, d.root.pastErrno(d.key, err)
		}
		for i := range vs {
			if contentVersion(&vs[i]) {
				out = append(out, fuse.DirEntry{Name: versionName(vs[i].Seq), Mode: backend.UnixMode(vs[i].Mode) & syscall.S_IFMT,
					Ino: pastIno("version", d.key, strconv.FormatUint(vs[i].Seq, 10))})
			}
		}
		if len(vs) > 0 {
			out = append(out, fuse.DirEntry{Name: histLogName, Mode: syscall.S_IFREG, Ino: pastIno("log", d.key)})
		}
	}
	names, err := d.children(ctx)
	if err != nil {
		return nil, d.root.pastErrno(d.key, err)
	}
	cr := callerCred(ctx)
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = backend.Join(d.key, n)
	}
	seen := d.root.c.Access().Seeable(cr, keys...)
	for i, n := range names {
		if seen[i] {
			out = append(out, fuse.DirEntry{Name: n, Mode: syscall.S_IFDIR, Ino: pastIno("history", keys[i])})
		}
	}
	return gofs.NewListDirStream(out), 0
}

// children returns the names under d's key, present and past, sorted.
func (d *histDir) children(ctx context.Context) ([]string, error) {
	kept, err := d.root.pastNames(ctx, d.key)
	if err != nil {
		return nil, err
	}
	names := slices.Clone(kept) // the cache's: never sorted or appended to in place
	if ents, err := d.root.c.ReadDir(d.key); err == nil {
		for _, e := range ents {
			names = append(names, e.Name)
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool {
		return backend.ValidateName(n) != nil || (d.key == "" && n == reservedDir)
	})
	slices.Sort(names)
	return slices.Compact(names), nil
}

func (d *histDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	defer notYet(&errno, out)
	if backend.ValidateName(name) != nil || (d.key == "" && name == reservedDir) {
		return nil, syscall.ENOENT
	}
	if d.key != "" && (name == histLogName || isDigits(name)) {
		if in, errno := d.lookupVersion(ctx, name, out); errno != syscall.ENOENT {
			return in, errno
		}
	}
	child := backend.Join(d.key, name)
	ok, err := d.exists(ctx, child)
	if err != nil {
		return nil, d.root.pastErrno(child, err)
	}
	if !ok {
		return nil, syscall.ENOENT
	}
	if !d.root.nowVisible(ctx, child) {
		return nil, syscall.EACCES
	}
	c := &histDir{root: d.root, hist: d.hist, key: child}
	d.root.readOnlyDir(pastIno("history", child), &out.Attr)
	out.SetEntryTimeout(d.root.opts.EntryTimeout)
	out.SetAttrTimeout(d.root.opts.AttrTimeout)
	return d.NewInode(ctx, c, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: out.Attr.Ino}), 0
}

// exists reports whether key is or ever was: in the session, in history,
// or as a directory of a key history named.
func (d *histDir) exists(ctx context.Context, key string) (bool, error) {
	if _, err := d.root.c.Stat(key); err == nil {
		return true, nil
	}
	vs, err := d.root.versions(ctx, key)
	if err != nil || len(vs) > 0 {
		return len(vs) > 0, err
	}
	names, err := d.root.pastNames(ctx, key)
	return len(names) > 0, err
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != "" && len(s) <= 20
}

// lookupVersion finds log or the version named seq (zero-padded or not).
func (d *histDir) lookupVersion(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if !d.root.nowVisible(ctx, d.key) {
		return nil, syscall.EACCES
	}
	if name == histLogName {
		vs, err := d.root.versions(ctx, d.key)
		if err != nil {
			return nil, d.root.pastErrno(d.key, err)
		}
		if len(vs) == 0 {
			return nil, syscall.ENOENT
		}
		l := &histLog{root: d.root, hist: d.hist, key: d.key}
		l.fill(&out.Attr)
		out.SetEntryTimeout(noCache)
		out.SetAttrTimeout(noCache)
		return d.NewInode(ctx, l, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: out.Attr.Ino}), 0
	}
	seq, err := strconv.ParseUint(name, 10, 64)
	if err != nil {
		return nil, syscall.ENOENT
	}
	v, err := d.version(ctx, seq)
	if err != nil {
		return nil, d.root.pastErrno(d.key, err)
	}
	if v == nil {
		return nil, syscall.ENOENT
	}
	f := &versionFile{root: d.root, hist: d.hist, v: *v}
	fillVersion(&f.v, f.ino(), 1, &out.Attr)
	out.SetEntryTimeout(pastTimeout)
	out.SetAttrTimeout(pastTimeout)
	return d.NewInode(ctx, f, gofs.StableAttr{Mode: out.Attr.Mode & syscall.S_IFMT, Ino: out.Attr.Ino}), 0
}

// versionFile is one version of a key: its bytes, as they were, for a
// caller that may see the key now and could read the version then.
type versionFile struct {
	gofs.Inode
	root *Root
	hist History
	v    history.Version
}

var (
	_ gofs.NodeGetattrer   = (*versionFile)(nil)
	_ gofs.NodeOpener      = (*versionFile)(nil)
	_ gofs.NodeReadlinker  = (*versionFile)(nil)
	_ gofs.NodeGetxattrer  = (*versionFile)(nil)
	_ gofs.NodeListxattrer = (*versionFile)(nil)
)

func (f *versionFile) ino() uint64 {
	return pastIno("version", f.v.Key, strconv.FormatUint(f.v.Seq, 10))
}

func (f *versionFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	fillVersion(&f.v, f.ino(), 1, &out.Attr)
	out.SetTimeout(pastTimeout)
	return 0
}

// may reports whether the caller of ctx may read the version.
func (f *versionFile) may(ctx context.Context) (bool, syscall.Errno) {
	if !f.root.nowVisible(ctx, f.v.Key) {
		return false, 0
	}
	dirs, err := f.root.dirsThen(ctx, f.v.Key, []uint64{f.v.Seq})
	if err != nil {
		return false, f.root.pastErrno(f.v.Key, err)
	}
	return thenReadable(callerCred(ctx), &f.v, dirs[f.v.Seq]), 0
}

func (f *versionFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	may, errno := f.may(ctx)
	if errno != 0 {
		return nil, 0, errno
	}
	return f.root.openValue(ctx, f.hist, &f.v, flags, may)
}

func (f *versionFile) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	if may, errno := f.may(ctx); errno != 0 || !may {
		return nil, cmpErrno(errno, syscall.EACCES)
	}
	return f.root.readLink(ctx, f.hist, &f.v)
}

func (f *versionFile) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return pastXAttr(&f.v, attr, dest)
}

func (f *versionFile) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return pastXAttrList(&f.v, dest)
}

// cmpErrno is errno, or def when errno is 0.
func cmpErrno(errno, def syscall.Errno) syscall.Errno {
	if errno != 0 {
		return errno
	}
	return def
}

// dirsThen returns, for each seq, the versions of key's directories as
// they were at it (nil for one gone or not recorded then).
func (r *Root) dirsThen(ctx context.Context, key string, seqs []uint64) (map[uint64]map[string]*history.Version, error) {
	out := make(map[uint64]map[string]*history.Version, len(seqs))
	for _, s := range seqs {
		out[s] = map[string]*history.Version{}
	}
	for k := parentKey(key); k != ""; k = parentKey(k) {
		vs, err := r.versions(ctx, k)
		if err != nil {
			return nil, err
		}
		for _, s := range seqs {
			out[s][k] = versionAt(vs, s)
		}
	}
	return out, nil
}

// versionAt is the version of vs (oldest first) live at seq, nil for none.
func versionAt(vs []history.Version, seq uint64) *history.Version {
	i, _ := slices.BinarySearchFunc(vs, seq+1, func(v history.Version, s uint64) int {
		return cmp.Compare(v.Seq, s)
	})
	if i == 0 || vs[i-1].Op == history.OpDelete {
		return nil
	}
	return &vs[i-1]
}

// histLog is .memfs/history/KEY/log: one line per version the caller
// could read then, "SEQ TIME OP SIZE WRITER [OLDKEY] [(redacted)]" (history.Version.LogLine). It
// grows with the key's history and differs between callers: made at open,
// served as the other answers of .memfs are (size 0, DIRECT_IO).
type histLog struct {
	gofs.Inode
	root *Root
	hist History
	key  string
}

var (
	_ gofs.NodeGetattrer = (*histLog)(nil)
	_ gofs.NodeOpener    = (*histLog)(nil)
)

func (l *histLog) fill(out *fuse.Attr) {
	out.Ino = pastIno("log", l.key)
	out.Mode = syscall.S_IFREG | 0o444
	out.Nlink = 1
	now := time.Now()
	out.SetTimes(&now, &now, &now)
	st, _ := l.root.c.Stat("")
	out.Owner = fuse.Owner{Uid: st.UID, Gid: st.GID}
}

func (l *histLog) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	l.fill(&out.Attr)
	out.SetTimeout(noCache)
	return 0
}

func (l *histLog) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EROFS
	}
	if !l.root.nowVisible(ctx, l.key) {
		return nil, 0, syscall.EACCES
	}
	vs, err := l.root.versions(ctx, l.key)
	if err != nil {
		return nil, 0, l.root.pastErrno(l.key, err)
	}
	b, err := l.root.logText(ctx, callerCred(ctx), vs)
	if err != nil {
		return nil, 0, l.root.pastErrno(l.key, err)
	}
	return &staticHandle{data: b}, fuse.FOPEN_DIRECT_IO, 0
}

// logText is the log of vs for cr: the versions it could read then (a
// delete shows when the version before it did).
func (r *Root) logText(ctx context.Context, cr session.Cred, vs []history.Version) ([]byte, error) {
	var b bytes.Buffer
	dirsOf := map[string]map[uint64]map[string]*history.Version{} // per key (a rename changes it)
	for i := range vs {
		v := &vs[i]
		shown := v
		if v.Op == history.OpDelete && i > 0 {
			shown = &vs[i-1]
		}
		dirs, ok := dirsOf[v.Key]
		if !ok {
			var seqs []uint64
			for j := range vs {
				if vs[j].Key == v.Key {
					seqs = append(seqs, vs[j].Seq)
				}
			}
			var err error
			if dirs, err = r.dirsThen(ctx, v.Key, seqs); err != nil {
				return nil, err
			}
			dirsOf[v.Key] = dirs
		}
		if cr.UID != 0 && !thenReadable(cr, shown, dirs[v.Seq]) {
			continue
		}
		b.WriteString(v.LogLine())
	}
	return b.Bytes(), nil
}
