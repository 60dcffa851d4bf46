package main

// One way to name the memory: a command works on the store --store (or
// MEMFS_STORE, or the default) names, and when a running memfs serves that
// store, through its mount; --mount names a mount outright, and a command
// run inside a mount with no store named uses that mount. Precedence:
// --mount, --store, MEMFS_STORE, the mount the working directory is in,
// the default store.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/internal/lockfile"
	"github.com/memfs/memfs/internal/paths"
)

// givenFlag is a string flag that remembers whether the command line gave
// it. urfave/cli's IsSet is true for a value taken from the environment
// too, and only a --store typed on the command line conflicts with
// --mount: MEMFS_STORE is a default, which an explicit --mount overrides.
type givenFlag struct{ *cli.StringFlag }

// Apply registers the flag, then wraps its value: the flag package calls
// Set only for a value on the command line (urfave/cli puts the
// environment's in as the default).
func (f givenFlag) Apply(set *flag.FlagSet) error {
	if err := f.StringFlag.Apply(set); err != nil {
		return err
	}
	for _, name := range f.Names() {
		if fl := set.Lookup(name); fl != nil {
			fl.Value = &givenValue{Value: fl.Value}
		}
	}
	return nil
}

type givenValue struct {
	flag.Value
	given bool // Set was called: the command line holds the flag
}

func (v *givenValue) Set(s string) error {
	v.given = true
	return v.Value.Set(s)
}

// flagGiven reports whether the command line (not the environment) gave
// the givenFlag name.
func flagGiven(c *cli.Context, name string) bool {
	v, ok := c.Generic(name).(*givenValue)
	return ok && v.given
}

// target is what a command works on: a live mount, or a store to open.
type target struct {
	spec storeSpec
	mnt  string // the live memfs mount serving spec; "" to open the store
	pid  int    // the memfs process serving mnt
	dev  uint64 // the device of the mount at mnt
}

// locate finds what the command c works on (see the top of the file).
func locate(c *cli.Context) (target, error) {
	if m := c.String("mount"); m != "" {
		return namedMount(c, m)
	}
	v := c.String("store")
	if v == "" {
		if t, ok := enclosingMount(); ok {
			return t, nil
		}
	}
	spec, err := parseStore(v)
	if err != nil {
		return target{}, err
	}
	if t, ok := servingMount(spec); ok {
		return t, nil
	}
	return target{spec: spec}, nil
}

// namedMount is the target of --mount m: a live memfs mount (liveMount),
// which must serve the store a --store on the command line names, if any.
func namedMount(c *cli.Context, m string) (target, error) {
	abs, err := filepath.Abs(m)
	if err != nil {
		return target{}, err
	}
	t, err := liveMount(abs, true)
	if err != nil {
		return target{}, fmt.Errorf("--mount %s: %w", m, err)
	}
	if flagGiven(c, "store") {
		spec, err := parseStore(c.String("store"))
		if err != nil {
			return target{}, err
		}
		if !sameStore(spec, t.spec) {
			return target{}, fmt.Errorf("--store %s and --mount %s name two stores: that mount serves %s; give one of them", spec, m, t.spec)
		}
	}
	return t, nil
}

// liveMount is the target of the memfs mount at mnt, which must be live
// and the caller's own: the mount table has a FUSE mount of a memfs store
// at that very point, made by the caller's user; its .memfs/status, read
// through the directory whose device is that mount's, names the same
// store and a process of that user's that is alive (and, when the caller
// may look, holds /dev/fuse open). A copy of a mount (cp -a keeps
// .memfs/status, with the PID of a process that may still run) is no
// mount point. Another user's mount is not the caller's memory: only
// with shared (a --mount the caller named) is one taken, and only one its
// owner mounted with allow_other, offering it to other users.
func liveMount(mnt string, shared bool) (target, error) {
	real, err := filepath.EvalSymlinks(mnt)
	if err != nil {
		return target{}, notLive(mnt, err)
	}
	var m mountEntry
	found := false
	for _, e := range mountTable() {
		if e.point == real {
			m, found = e, true // the last one is the mount on top
		}
	}
	uid := uint32(os.Getuid())
	switch {
	case !found:
		return target{}, notLive(mnt, errors.New("no mount there"))
	case !strings.HasPrefix(m.fstype, "fuse") || !strings.HasPrefix(m.source, "memfs:"):
		return target{}, notLive(mnt, fmt.Errorf("a %s mount of %s", m.fstype, m.source))
	case m.uid != uid && !(shared && m.allowOther):
		return target{}, notLive(mnt, fmt.Errorf("a mount of user %d, not yours (%d), and not shared with allow_other", m.uid, uid))
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return target{}, notLive(mnt, err)
	}
	defer r.Close()
	t, err := rootStatus(r, mnt, m.dev)
	if err != nil {
		return target{}, notLive(mnt, err)
	}
	if src, err := parseStore(strings.TrimPrefix(m.source, "memfs:")); err != nil || !sameStore(src, t.spec) {
		return target{}, notLive(mnt, fmt.Errorf("it is mounted as %s, and its status names %s", m.source, t.spec))
	}
	if err := servingProcess(t.pid, m.uid); err != nil {
		return target{}, notLive(mnt, err)
	}
	return t, nil
}

// notLive is liveMount's error.
func notLive(mnt string, why error) error {
	return fmt.Errorf("%s is not a live memfs mount (%v): nothing was done through it", mnt, why)
}

// rootStatus reads .memfs/status through r, the root of the mount at mnt,
// whose device must be dev: a directory that is not that mount (a copy,
// or the mountpoint after an unmount) has another.
func rootStatus(r *os.Root, mnt string, dev uint64) (target, error) {
	fi, err := r.Stat(".")
	if err != nil {
		return target{}, err
	}
	if d := fi.Sys().(*syscall.Stat_t).Dev; d != dev {
		return target{}, fmt.Errorf("device %d:%d, not the mount's %d:%d", unix.Major(d), unix.Minor(d), unix.Major(dev), unix.Minor(dev))
	}
	b, err := r.ReadFile(filepath.Join(".memfs", "status"))
	if err != nil {
		return target{}, err
	}
	t, err := parseStatus(mnt, b)
	t.dev = dev
	return t, err
}

// servingProcess checks that pid is a live process of user uid (the
// mount's) holding /dev/fuse open, as the process serving a memfs mount
// does; the descriptors of another user's process are not checked when
// the caller may not list them.
func servingProcess(pid int, uid uint32) error {
	dir := "/proc/" + strconv.Itoa(pid)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("its process %d is gone", pid)
	}
	if owner := fi.Sys().(*syscall.Stat_t).Uid; owner != uid {
		return fmt.Errorf("its process %d is user %d's, not the mount's (%d)", pid, owner, uid)
	}
	fds, err := os.ReadDir(dir + "/fd")
	if errors.Is(err, fs.ErrPermission) && uid != uint32(os.Getuid()) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(dir + "/fd/" + fd.Name()); err == nil && l == "/dev/fuse" {
			return nil
		}
	}
	return fmt.Errorf("its process %d serves no FUSE mount", pid)
}

// parseStatus reads the store and the process from the .memfs/status b of
// the mount at mnt.
func parseStatus(mnt string, b []byte) (target, error) {
	t := target{mnt: mnt}
	var err error
	var store string
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "store: "); ok {
			store = v
		} else if v, ok := strings.CutPrefix(line, "pid: "); ok {
			t.pid, _ = strconv.Atoi(v)
		}
	}
	if t.spec, err = parseStore(store); err != nil || store == "" || t.pid <= 0 {
		return target{}, fmt.Errorf("%s/.memfs/status names no store and process", mnt)
	}
	return t, nil
}

// sameStore compares two stores with every symlink in their paths
// resolved.
func sameStore(a, b storeSpec) bool {
	if !a.local() || !b.local() {
		return a == b
	}
	return a.kind == b.kind && paths.Resolved(a.path) == paths.Resolved(b.path)
}

// lockPath is the lock file of the store spec: it names the PID of the
// process holding it (or that last held it).
func lockPath(spec storeSpec) string {
	if spec.kind == "dir" {
		return dirstore.LockPath(spec.path)
	}
	return badgerstore.LockPath(spec.path)
}

// servingMount finds the live memfs mount that serves spec. The holder is
// read from the store's lock; the mount is a live memfs mount of the
// caller's (liveMount) whose source is memfs:<spec> (the mount's fsname)
// and whose .memfs/status names the holder's PID.
func servingMount(spec storeSpec) (target, bool) {
	if !spec.local() {
		return target{}, false // many mounts serve a shared store, each on its own
	}
	pid := lockfile.HolderPID(lockPath(spec))
	if pid <= 0 {
		return target{}, false
	}
	for _, m := range memfsMounts() {
		src, err := parseStore(strings.TrimPrefix(m.source, "memfs:"))
		if err != nil || m.uid != uint32(os.Getuid()) || !sameStore(src, spec) {
			continue
		}
		if t, err := liveMount(m.point, false); err == nil && t.pid == pid {
			return t, true
		}
	}
	return target{}, false
}

// enclosingMount is the memfs mount the working directory is in, if any:
// the innermost mount holding it must be a live memfs mount of the
// caller's (liveMount).
func enclosingMount() (target, bool) {
	cwd, err := os.Getwd()
	if err != nil {
		return target{}, false
	}
	// The mount table holds real paths; $PWD may be reached through a
	// symlink.
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	var best mountEntry
	for _, m := range mountTable() {
		if paths.Within(cwd, m.point) && len(m.point) >= len(best.point) {
			best = m
		}
	}
	if !strings.HasPrefix(best.source, "memfs:") || !strings.HasPrefix(best.fstype, "fuse") {
		return target{}, false
	}
	t, err := liveMount(best.point, false)
	return t, err == nil
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	point, fstype, source string
	dev                   uint64 // MAJOR:MINOR, as stat's st_dev gives it
	uid                   uint32 // user_id=, for FUSE mounts
	allowOther            bool   // allow_other: the mount's owner lets other users in
	whole                 bool   // the filesystem's root is mounted (not a bind mount of a subtree)
}

// mountTable reads /proc/self/mountinfo; nil when it cannot.
func mountTable() []mountEntry {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	return parseMountinfo(string(data))
}

// parseMountinfo reads the lines of a mountinfo file.
func parseMountinfo(mountinfo string) []mountEntry {
	var out []mountEntry
	for line := range strings.SplitSeq(mountinfo, "\n") {
		// ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
		f := strings.Fields(line)
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(f) {
			continue
		}
		m := mountEntry{point: unescapeMount(f[4]), fstype: f[sep+1], source: unescapeMount(f[sep+2]), whole: f[3] == "/"}
		if maj, min, ok := strings.Cut(f[2], ":"); ok {
			a, aerr := strconv.ParseUint(maj, 10, 32)
			b, berr := strconv.ParseUint(min, 10, 32)
			if aerr == nil && berr == nil {
				m.dev = unix.Mkdev(uint32(a), uint32(b))
			}
		}
		m.uid = ^uint32(0)
		for o := range strings.SplitSeq(f[sep+3], ",") {
			if o == "allow_other" {
				m.allowOther = true
			}
			if v, ok := strings.CutPrefix(o, "user_id="); ok {
				if n, err := strconv.ParseUint(v, 10, 32); err == nil {
					m.uid = uint32(n)
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// memfsMounts lists the FUSE mounts whose source names a memfs store,
// whole mounts before bind mounts of a part of one.
func memfsMounts() []mountEntry { return memfsMountsIn(mountTable()) }

// memfsMountsIn is memfsMounts of a given table.
func memfsMountsIn(table []mountEntry) []mountEntry {
	var whole, parts []mountEntry
	for _, m := range table {
		if !strings.HasPrefix(m.fstype, "fuse") || !strings.HasPrefix(m.source, "memfs:") {
			continue
		}
		if m.whole {
			whole = append(whole, m)
		} else {
			parts = append(parts, m)
		}
	}
	return append(whole, parts...)
}

// needsStore refuses, for a command that needs the store to itself, a
// store a mount serves: what to do instead is named.
func needsStore(cmd string, t target, instead string) error {
	if t.mnt == "" {
		return nil
	}
	return fmt.Errorf("%s: %s is mounted at %s (memfs process %d), and %s needs the store to itself\n  %s",
		cmd, t.spec, t.mnt, t.pid, cmd, instead)
}

// mountRoot opens the mount of t (found by liveMount) for plain file
// operations that stay inside it. The root is checked again through
// itself: its device must still be the mount's and its .memfs/status
// name the same process, or the writes would land on plain disk (a
// mount gone since it was found leaves the mountpoint directory).
func mountRoot(t target) (*os.Root, error) {
	r, err := os.OpenRoot(t.mnt)
	if err != nil {
		return nil, fmt.Errorf("the mount at %s: %w", t.mnt, err)
	}
	live, err := rootStatus(r, t.mnt, t.dev)
	if err == nil && live.pid != t.pid {
		err = fmt.Errorf("served by process %d now, not %d", live.pid, t.pid)
	}
	if err != nil {
		r.Close()
		return nil, notLive(t.mnt, err)
	}
	return r, nil
}

// askThrough asks the live mount of t for the answer to the query name
// (percent-encoded words, as a file name under .memfs/DIR/ would be) in
// .memfs/DIR/ ("search" or "context"), through its query file: a query
// of any length, which no path could hold, answered for this process's
// credential as a file name's would be.
func askThrough(t target, dir, name string) ([]byte, error) {
	r, err := mountRoot(t)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.OpenFile(path.Join(".memfs", dir, memfs.QueryFile), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Write([]byte(name)); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.NewSectionReader(f, 0, math.MaxInt64))
	if errors.Is(err, syscall.EINVAL) {
		return nil, fmt.Errorf("the mount refused the query (its log says why)")
	}
	return b, err
}

// catThrough prints the values of keys read through the mount: a file's
// content, a symlink's target (as the store holds it).
func catThrough(c *cli.Context, t target, keys []string) error {
	r, err := mountRoot(t)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, k := range keys {
		fi, err := r.Lstat(k)
		if errors.Is(err, fs.ErrNotExist) {
			if err := checkTransient("cat", k); err != nil {
				return err
			}
		}
		if err != nil {
			return explain(err)
		}
		var v []byte
		switch {
		case fi.Mode().Type() == fs.ModeSymlink:
			var target string
			target, err = r.Readlink(k)
			v = []byte(target)
		case fi.Mode().IsRegular():
			v, err = r.ReadFile(k)
		default:
			return fmt.Errorf("cat: %s: a %s has no value to print", k, backend.TypeName(fi.Mode()))
		}
		if err != nil {
			return explain(err)
		}
		if _, err := c.App.Writer.Write(v); err != nil {
			return err
		}
	}
	return nil
}

// putThrough writes key through the mount with mode, and fsyncs it: the
// value is in the store when put returns, as without a mount. A name that
// is not a regular file is replaced, as in the store.
func putThrough(t target, key string, value []byte, mode fs.FileMode) error {
	r, err := mountRoot(t)
	if err != nil {
		return err
	}
	defer r.Close()
	if dir, _ := filepath.Split(key); dir != "" {
		if err := r.MkdirAll(filepath.Clean(dir), 0o755); err != nil {
			return fmt.Errorf("put: %w", err)
		}
	}
	if fi, err := r.Lstat(key); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return fmt.Errorf("put: %s is a directory", key)
		}
		if err := r.Remove(key); err != nil {
			return fmt.Errorf("put: %w", err)
		}
	}
	// Written in place, so that the file keeps its attributes (tags,
	// owner), which a rename of a new file over it would drop; when the
	// write fails (a value past the mount's --max-file-size), the old
	// value is written back.
	old, oldErr := r.ReadFile(key)
	f, err := r.OpenFile(key, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return fmt.Errorf("put: %w", explain(err))
	}
	_, err = f.Write(value)
	if err != nil && oldErr == nil {
		if _, rerr := f.WriteAt(old, 0); rerr == nil {
			rerr = f.Truncate(int64(len(old)))
			err = errors.Join(err, rerr)
		} else {
			err = errors.Join(err, fmt.Errorf("the old value could not be written back: %w", rerr))
		}
	}
	if err == nil {
		err = f.Chmod(mode) // the umask took bits off a new file; an old one keeps its mode
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("put: %s through %s: %w", key, t.mnt, err)
	}
	return nil
}

// rmThrough removes keys through the mount (with recursive, every key
// under them too), then fsyncs: the removal is in the store when rm
// returns, as without a mount.
func rmThrough(t target, keys []string, recursive, force bool) error {
	r, err := mountRoot(t)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, k := range keys {
		k = strings.TrimSuffix(k, "/")
		fi, err := r.Lstat(k)
		if errors.Is(err, fs.ErrNotExist) {
			if force {
				continue
			}
			if err := checkTransient("rm", k); err != nil {
				return err
			}
			return fmt.Errorf("rm: %s: no such key (memfs ls lists them; -r removes a prefix)", k)
		}
		if err != nil {
			return fmt.Errorf("rm: %w", err)
		}
		switch {
		case fi.IsDir() && !recursive:
			return fmt.Errorf("rm: %s is a directory: -r removes it and every key under it", k)
		case fi.IsDir():
			err = r.RemoveAll(k)
		default:
			err = r.Remove(k)
		}
		if err != nil {
			return fmt.Errorf("rm: %w", err)
		}
	}
	d, err := r.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil { // an fsync flushes the mount's whole session
		return fmt.Errorf("rm: flush through %s: %w", t.mnt, err)
	}
	return nil
}

// exportEntriesThrough lists the nodes under prefix in the mount at mnt,
// parents before children, each with its attributes as exportEntries
// gives them from a session; the names of one inode share a Link. What
// cannot be read is reported to t and left out.
func exportEntriesThrough(mnt, prefix string, t *memfs.Tally) ([]backend.Entry, error) {
	var out []backend.Entry
	err := filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == mnt {
				return err
			}
			t.Fail("export: %s: %v; skipped", p, err)
			return nil
		}
		if p == mnt {
			return nil
		}
		rel, _ := filepath.Rel(mnt, p)
		key := filepath.ToSlash(rel)
		skip := func() error {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if backend.IsReserved(key) {
			return skip() // .memfs: the mount's own files
		}
		if !strings.HasPrefix(key, prefix) {
			if d.IsDir() && strings.HasPrefix(prefix, key+"/") {
				return nil // the prefix is further down
			}
			return skip()
		}
		info, st, err := memfs.NodeInfo(p)
		if err != nil {
			t.Fail("export: %s: %v; skipped", key, err)
			return skip()
		}
		if !info.Mode.IsDir() && st.Nlink > 1 {
			info.Link = fmt.Sprintf("%d:%d", st.Dev, st.Ino)
		}
		out = append(out, backend.Entry{Key: key, Info: info})
		return nil
	})
	return out, err
}

// exportThrough writes the nodes under prefix of the mount t under dst,
// as export does from a store.
func exportThrough(ctx context.Context, c *cli.Context, t target, dst, prefix string, tally *memfs.Tally, opts memfs.ExportOptions) error {
	r, err := mountRoot(t)
	if err != nil {
		return err
	}
	defer r.Close()
	entries, err := exportEntriesThrough(t.mnt, prefix, tally)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	load := func(key string) ([]byte, error) {
		fi, err := r.Lstat(key)
		if err != nil {
			return nil, err
		}
		if fi.Mode().Type() == fs.ModeSymlink {
			target, err := r.Readlink(key)
			return []byte(target), err
		}
		return r.ReadFile(key)
	}
	if err := memfs.ExportEntries(ctx, dst, entries, load, tally, opts); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "exported %s from %s (through the mount at %s) to %s\n", tally.Summary(), t.spec, t.mnt, dst)
	return nil
}

// mountSettings warns that the write flags of a command that goes through
// a mount do not apply: the mount's own --agent and redaction do.
func mountSettings(c *cli.Context, t target) {
	var set []string
	for _, f := range []string{"agent", "no-redact", "redact-config"} {
		if c.IsSet(f) {
			set = append(set, "--"+f)
		}
	}
	if len(set) > 0 {
		logger(c, false).Warn("going through the mount, which writes with its own --agent and redaction; these flags do not apply",
			"flags", strings.Join(set, " "), "mountpoint", t.mnt)
	}
}
