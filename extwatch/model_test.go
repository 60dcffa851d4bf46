package extwatch_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/session"
)

// The two-writer model test (issue 26, "Done when"): two sessions over
// one etcd namespace, each following the other, make random content and
// metadata changes (writes, chmod, chown, utimes, setxattr, removexattr,
// removal, a name removed and made again, mkdir, rmdir, rename, hard
// links, symlinks, a file in a directory; see mountOp) with random
// flushes. Afterwards, both flushed, both views (every node: type, mode,
// owner, mtime, link count, value or target, tags) and a fresh session's
// must be equal. MEMFS_TWO_WRITER_SEED
// sets the seed (default: the clock, printed); MEMFS_TWO_WRITER_OPS the
// operations (default 200; a seventh of them for each of ten rounds on a
// directory store: about 15 s under -race on 2 loaded cores). On the
// directory store, the last change made to each name must be found at
// the end (see otherProgramModel). Watchers' inotify events for each
// remote change are checked through real mounts: TestTwoWriterInotify
// (cmd/memfs).
func TestTwoWriterModel(t *testing.T) {
	seed, ops := modelParams(t)
	t.Logf("seed %d (rerun with MEMFS_TWO_WRITER_SEED=%d)", seed, seed)
	t.Run("etcd", func(t *testing.T) { twoMountModel(t, seed, ops) })
	// Short rounds, each over a fresh store: the final state is where a
	// lost or undone change shows, so many ends find more than one long
	// run.
	for r := range 10 {
		t.Run(fmt.Sprintf("dir/seed=%d", seed+uint64(r)), func(t *testing.T) { otherProgramModel(t, seed+uint64(r), max(ops/7, 1)) })
	}
}

func modelParams(t *testing.T) (uint64, int) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("MEMFS_TWO_WRITER_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		must(t, err)
		seed = n
	}
	ops := 200
	if v := os.Getenv("MEMFS_TWO_WRITER_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		must(t, err)
		ops = n
	}
	return seed, ops
}

func twoMountModel(t *testing.T, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	srv := etcdtest.Start(t)
	open := func() *etcdstore.Store {
		st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "model"})
		must(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	start := func(st *etcdstore.Store, agent string) *session.Context {
		lg := slog.New(slog.NewTextHandler(tlogWriter{t, agent}, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c, err := session.New(st, session.Options{OnConflict: session.KeepBoth, Agent: agent, Logger: lg})
		must(t, err)
		must(t, c.Bootstrap(t.Context(), ""))
		w, err := extwatch.Start(st, c, extwatch.Options{Debounce: 10 * time.Millisecond, Logger: lg, OnProcessed: func(k string) { t.Logf("%s processed %s", agent, k) }})
		must(t, err)
		t.Cleanup(func() { w.Close() })
		return c
	}
	sides := []*session.Context{start(open(), "a"), start(open(), "b")}
	names := []string{"n1", "n2", "n3"}
	// The changes of files' content and metadata, and of names and node
	// types (a name reused as a directory, rmdir, rename, hard link,
	// symlink, a file in a directory): gated until round 6 (faults in
	// 74c5184, 468cdb8, then 1 of 20 etcd runs). At r6-twowriter: 0
	// failures in 80 etcd runs, then seed 119 (a dirty directory's owner
	// put back, fixed); 2 of 25 runs at load ~35 (seeds 411, 422: a
	// directory's owner differs between the mounts and the store after
	// both flushed; not reproduced in 4 reruns): issue 26. At
	// r6-etcdmodel, about 1 run in 10 failed: seed 1796559418141034822
	// (a directory whose record a session had, not yet the key under it,
	// removed or made a file at a matching version: etcdstore now refuses
	// that) and 1796560258411632750 (a node with two names moved beside
	// their directory kept the name in its link group); then 0 failures
	// in 90 runs and 10 under -race, seeds 119, 411, 422 passing.
	const kinds = 14
	for i := range ops {
		side := rng.IntN(2)
		c := sides[side]
		t.Logf("op %d side %d", i, side)
		if err := mountOp(t, c, rng, i, names, kinds); err != nil {
			t.Fatalf("seed %d: op %d: %v", seed, i, err)
		}
		if rng.IntN(3) == 0 {
			t.Logf("flush side %d", side)
			must(t, c.Flush(t.Context()))
		}
	}
	view := func(c *session.Context) string { return nodeView(t, c, names) }
	var va, vb string
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool {
		for _, c := range sides {
			must(t, c.Flush(t.Context()))
		}
		va, vb = view(sides[0]), view(sides[1])
		return va == vb
	}) {
		t.Fatalf("seed %d: the views differ after both flushed:\nA: %s\nB: %s", seed, va, vb)
	}
	fresh := session.NewContext(open(), session.Options{})
	must(t, fresh.Bootstrap(t.Context(), ""))
	if vf := view(fresh); vf != va {
		t.Fatalf("seed %d: a fresh session differs:\nfresh: %s\nA:     %s", seed, vf, va)
	}
}

// mountOp makes one random change on c to one of names, as a process on
// a mount would: a write, chmod, chown, utimes, setxattr, removexattr,
// removal, a name removed and made again (as a file or a directory),
// mkdir, rmdir, symlink, rename and hard link. It returns only an error
// the operation must not give: one whose precondition does not hold (the
// name absent, or of the other type) is the process's own.
func mountOp(t *testing.T, c *session.Context, rng *rand.Rand, i int, names []string, kinds int) error {
	k, to := names[rng.IntN(len(names))], names[rng.IntN(len(names))]
	st, statErr := c.Stat(k)
	op := rng.IntN(kinds)
	t.Logf("  %s (to %s) op %d stat %v", k, to, op, statErr)
	var err error
	switch {
	case statErr != nil && op < 10:
		err = c.Set(k, []byte(fmt.Sprintf("op %d\n", i)))
	case statErr != nil:
		err = c.Mkdir(k, 0o755, 0, 0)
	case op <= 6:
		err = attrOp(t, c, rng, k, st, op, i)
	default:
		err = nameOp(t, c, k, to, st, op, i)
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) || errors.Is(err, session.ErrIsDir) ||
		errors.Is(err, session.ErrNotEmpty) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EISDIR) {
		err = nil // the process's own: a precondition that does not hold
	}
	if err != nil {
		return fmt.Errorf("%s (to %s): %w", k, to, err)
	}
	return nil
}

// attrOp is mountOp's change of k's content or attributes (op 0 to 6).
func attrOp(t *testing.T, c *session.Context, rng *rand.Rand, k string, st session.Stat, op, i int) error {
	ctx := t.Context()
	regular := !st.IsDir && st.Mode.IsRegular()
	switch {
	case op <= 1 && regular:
		return c.Set(k, []byte(fmt.Sprintf("op %d\n", i)))
	case op == 2:
		mode := fs.FileMode([]int{0o600, 0o640, 0o644, 0o755}[rng.IntN(4)])
		_, err := c.SetAttr(ctx, k, session.Attr{Mode: &mode})
		return err
	case op == 3:
		uid, gid := uint32(1000+rng.IntN(3)), uint32(1000+rng.IntN(3))
		_, err := c.SetAttr(ctx, k, session.Attr{UID: &uid, GID: &gid})
		return err
	case op == 4:
		mt := time.Unix(1700000000+int64(i), 0)
		_, err := c.SetAttr(ctx, k, session.Attr{MTime: &mt})
		return err
	case op == 5 && regular:
		return c.XAttrs().Set(ctx, k, "user.memfs.tags", []byte(fmt.Sprintf("t%d", i)), 0)
	case op == 6 && regular:
		if err := c.XAttrs().Remove(ctx, k, "user.memfs.tags"); !errors.Is(err, session.ErrNoXAttr) {
			return err
		}
	}
	return nil
}

// nameOp is mountOp's change of names and node types (op 7 to 13).
func nameOp(t *testing.T, c *session.Context, k, to string, st session.Stat, op, i int) error {
	ctx := t.Context()
	file := !st.IsDir
	switch {
	case op == 7 && file:
		return c.Delete(k)
	case op == 8 && file:
		// A name reused: removed and made again as the other type.
		if err := c.Delete(k); err != nil {
			return err
		}
		return c.Mkdir(k, 0o755, 0, 0)
	case op == 8:
		if err := c.Rmdir(k); err != nil {
			return err
		}
		return c.Set(k, []byte(fmt.Sprintf("again %d\n", i)))
	case op == 9 && !file:
		return c.Rmdir(k)
	case op == 10 && file && k != to:
		return c.Rename(ctx, k, to, 0)
	case op == 11 && file && st.Mode.IsRegular() && k != to && !c.Has(to):
		return c.Link(ctx, k, to)
	case op == 12 && file:
		// A symlink in the place of a file.
		if err := c.Delete(k); err != nil {
			return err
		}
		return c.Symlink(ctx, k, to, 0, 0)
	case op == 13 && !file:
		return c.Set(k+"/in.md", []byte(fmt.Sprintf("in %d\n", i)))
	}
	return nil
}

// nodeView is every node of c under names, and in them: its type and
// permissions, owner, mtime, link count, value or target, and tags.
func nodeView(t *testing.T, c *session.Context, names []string) string {
	var out []string
	var walk func(k string)
	walk = func(k string) {
		st, err := c.Stat(k)
		if err != nil {
			return
		}
		line := fmt.Sprintf("%s %v %d:%d %d n%d", k, st.Mode, st.UID, st.GID, st.MTime.Unix(), st.Nlink)
		switch {
		case st.IsDir:
			ents, err := c.ReadDir(k)
			if err != nil {
				out = append(out, k+" "+err.Error())
				return
			}
			for _, e := range ents {
				walk(k + "/" + e.Name)
			}
			line = fmt.Sprintf("%s %v %d:%d", k, st.Mode, st.UID, st.GID) // its mtime moves with what is in it
		case st.Mode.Type() == fs.ModeSymlink:
			target, err := c.Readlink(t.Context(), k)
			line += fmt.Sprintf(" -> %q %v", target, err)
		default:
			if err := c.Resolve(t.Context(), k); err != nil {
				line += " " + err.Error()
			}
			v, _ := c.Get(k)
			tag, _ := c.XAttrs().Get(k, "user.memfs.tags")
			line += fmt.Sprintf(" %q %q", v, tag)
		}
		out = append(out, line)
	}
	for _, k := range names {
		walk(k)
	}
	// Conflict copies of the names.
	for _, k := range c.Keys() {
		if !slices.Contains(names, k) && !strings.Contains(k, "/") {
			walk(k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// sessionView is every node of c: key, type and permissions, owner; a
// file's mtime, link count, value and tags; a symlink's target.
func sessionView(t *testing.T, c *session.Context) string {
	var out []string
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := c.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			k := e.Name
			if dir != "" {
				k = dir + "/" + e.Name
			}
			if c.Local(k) {
				continue
			}
			st, err := c.Stat(k)
			if err != nil {
				return err
			}
			line := fmt.Sprintf("%s %v %d:%d", k, st.Mode, st.UID, st.GID)
			switch {
			case st.IsDir:
				if err := walk(k); err != nil {
					return err
				}
			case st.Mode.Type() == fs.ModeSymlink:
				target, err := c.Readlink(t.Context(), k)
				if err != nil {
					return err
				}
				line += fmt.Sprintf(" -> %q", target)
			default:
				if err := c.Resolve(t.Context(), k); err != nil {
					return err
				}
				v, _ := c.Get(k)
				tag, _ := c.XAttrs().Get(k, "user.memfs.tags")
				line += fmt.Sprintf(" %d n%d %q %q", st.MTime.Unix(), st.Nlink, v, tag)
			}
			out = append(out, line)
		}
		return nil
	}
	if err := walk(""); err != nil {
		return err.Error()
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// storeView is sessionView of what st holds.
func storeView(t *testing.T, st backend.Store) string {
	es, err := st.List(t.Context())
	if err != nil {
		return err.Error()
	}
	names := map[string]int{} // link group -> names
	for _, e := range es {
		if e.Info.Link != "" {
			names[e.Info.Link]++
		}
	}
	var out []string
	for _, e := range es {
		line := fmt.Sprintf("%s %v %d:%d", e.Key, e.Info.Mode, e.Info.UID, e.Info.GID)
		if !e.Info.Mode.IsDir() {
			got, err := st.Load(t.Context(), e.Key)
			if err != nil {
				return err.Error()
			}
			g := got[0]
			if g.Info.Mode.Type() == fs.ModeSymlink {
				line += fmt.Sprintf(" -> %q", g.Value)
			} else {
				line += fmt.Sprintf(" %d n%d %q %q", g.Info.MTime.Unix(), max(names[g.Info.Link], 1), g.Value, g.Info.XAttrs["user.memfs.tags"])
			}
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// The other writer is another program writing a directory store: its
// writes, chmods, setxattrs and removals, and the session's, with random
// flushes; afterwards the session's view and the store's must be equal,
// and the last change made to each name found: a value written (under
// the name, or in a conflict copy of it), or the other program's chmod
// (never undone: at most narrowed by the most-restrictive rule, or kept
// beside with their version). A flush that runs before the watcher has
// seen the other program's change neither saves over it unseen (the
// version covers the whole node) nor deletes it (conditional deletes).
func otherProgramModel(t *testing.T, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x51ed27))
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	must(t, err)
	defer st.Close()
	lg := slog.New(slog.NewTextHandler(tlogWriter{t, "s"}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := session.NewContext(st, session.Options{Logger: lg})
	must(t, c.Bootstrap(t.Context(), ""))
	w, err := extwatch.Start(st, c, extwatch.Options{Debounce: 10 * time.Millisecond, Logger: lg,
		OnProcessed: func(k string) { t.Logf("processed %s", k) }})
	must(t, err)
	defer w.Close()
	names := []string{"n1.md", "n2.md", "n3.md"}
	// The last change made to each name, by either side, that must be
	// found afterwards: a value written (under the name, or in a
	// conflict copy of it), or the other program's chmod (never undone:
	// at most narrowed by the most-restrictive rule).
	// Hard links on either side are part of every round. They ran
	// behind a gate (MEMFS_TWO_WRITER_LINKS) until rounds 7 and 8 of
	// issue 26 mended what loops of thousands of rounds found (each with
	// a focused test in links_test.go, here and in session): after the
	// last fixes, 0 of 6,000 rounds failed (seeds 70000-76000, six loops
	// at once on 2 cores) and 0 of 16,000 (80000-96000, eight loops).
	// Without links, 4 of 250 rounds at load ~35 failed once (seeds 403,
	// 407, 423: a directory 0700 in the session, 0755 in the store: the
	// watcher saw dirstore's own 0700 of a directory it was making,
	// fixed in dirstore (TestSaveMakesDirectoriesWithTheirMode); 416: a
	// file's older value in the session, not reproduced since).
	// MEMFS_TWO_WRITER_TRACE=1 logs both views after each operation.
	trace := os.Getenv("MEMFS_TWO_WRITER_TRACE") != ""
	last := map[string]lastOp{}
	// Names that have been one of a node's several: a change made under
	// one shows under the others, so no claim is made for them.
	linked := map[string]bool{}
	claim := func(k string, op lastOp) {
		if !linked[k] {
			last[k] = op
		}
	}
	for i := range ops {
		k, to := names[rng.IntN(len(names))], names[rng.IntN(len(names))]
		op := rng.IntN(12)
		delete(last, k)
		var moved bool
		if rng.IntN(2) == 0 {
			// The session.
			t.Logf("op %d: session %d %s (to %s)", i, op, k, to)
			moved = sessionDirOp(t, c, rng, seed, i, k, to, op, claim)
			if rng.IntN(3) == 0 {
				t.Logf("flush")
				must(t, c.Flush(t.Context()))
			}
		} else {
			// The other program; its failures (a precondition that does
			// not hold) are its own.
			t.Logf("op %d: program %d %s (to %s)", i, op, k, to)
			moved = programDirOp(rng, dir, i, k, to, op, claim)
			if rng.IntN(4) == 0 {
				time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // random timing against the watcher
			}
		}
		switch {
		case moved && op == 9: // a rename: the links move with the node
			// and stay with the old name too: a flush may keep the old
			// name, as another writer changed it (seed 5105: a name
			// the session renamed stayed the program's link).
			delete(last, to)
			linked[to] = linked[to] || linked[k]
		case moved: // a hard link
			delete(last, to)
			linked[k], linked[to] = true, true
		}
		if trace {
			t.Logf("session: %s\nstore:   %s", sessionView(t, c), storeView(t, st))
		}
	}
	var vs, vd string
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool {
		must(t, c.Flush(t.Context()))
		vs, vd = sessionView(t, c), storeView(t, st)
		return vs == vd
	}) {
		t.Fatalf("seed %d: the session and the store differ after a flush:\nsession: %s\nstore:   %s", seed, vs, vd)
	}
	checkLast(t, st, seed, vd, last)
}

// checkLast checks that the last change made to each name in a
// directory store's round (last) is found in st, whose view is vd.
func checkLast(t *testing.T, st backend.Store, seed uint64, vd string, last map[string]lastOp) {
	t.Helper()
	es := mustList(t, st)
	for k, op := range last {
		// A chmod under the name, or kept beside it whole (keep-both:
		// their version, with its mode, when the session's changes were
		// made on an older one); a value (each is written once)
		// anywhere: a rename of the name made on an older version
		// carries the newer (dirstore moves the file).
		found := false
		base := strings.TrimSuffix(k, ".md")
		for _, e := range es {
			if op.mode != 0 && e.Key != k && !strings.HasPrefix(e.Key, base+".conflict-") || !e.Info.Mode.IsRegular() {
				continue
			}
			if op.mode != 0 {
				found = found || e.Info.Mode.Perm()&^op.mode == 0
				continue
			}
			got, err := st.Load(t.Context(), e.Key)
			found = found || (err == nil && string(got[0].Value) == op.value)
		}
		switch {
		case !found && op.mode != 0:
			t.Errorf("seed %d: %s: the other program's last change, chmod %v, undone\nstore: %s", seed, k, op.mode, vd)
		case !found:
			t.Errorf("seed %d: %s: the last write, %q, is lost\nstore: %s", seed, k, op.value, vd)
		}
	}
}

// lastOp is a change made to a name that must be found at the end of a
// directory store's round: a value written (mode 0), or the other
// program's chmod.
type lastOp struct {
	value string
	mode  fs.FileMode
}

// sessionDirOp is one random change the session makes in a directory
// store's round: a write, chmod, setxattr, removal, chown, utimes,
// mkdir, symlink, rename or hard link of k (to to). It reports whether k
// was renamed or linked to to; claim records a value written.
func sessionDirOp(t *testing.T, c *session.Context, rng *rand.Rand, seed uint64, i int, k, to string, op int, claim func(string, lastOp)) bool {
	ctx := t.Context()
	st, statErr := c.Stat(k)
	regular := statErr == nil && !st.IsDir && st.Mode.IsRegular()
	var err error
	moved := false
	switch {
	case op <= 1 && (regular || statErr != nil):
		v := fmt.Sprintf("op %d\n", i)
		if err = c.Set(k, []byte(v)); err == nil {
			claim(k, lastOp{value: v})
		}
	case statErr != nil && op != 7 && op != 8:
	case op == 2 && st.Mode.Type() != fs.ModeSymlink: // chmod(2) follows a symlink before the mount sees it
		mode := fs.FileMode([]int{0o600, 0o640, 0o644}[rng.IntN(3)])
		_, err = c.SetAttr(ctx, k, session.Attr{Mode: &mode})
	case op == 3 && regular:
		err = c.XAttrs().Set(ctx, k, "user.memfs.tags", []byte(fmt.Sprintf("s%d", i)), 0)
	case (op == 4 || op == 11) && st.IsDir:
		err = c.Rmdir(k)
	case op == 4 || op == 11:
		err = c.Delete(k)
	case op == 5:
		uid, gid := uint32(1000+rng.IntN(3)), uint32(1000+rng.IntN(3))
		_, err = c.SetAttr(ctx, k, session.Attr{UID: &uid, GID: &gid})
	case op == 6:
		mt := time.Unix(1700000000+int64(i), 0)
		_, err = c.SetAttr(ctx, k, session.Attr{MTime: &mt})
	default:
		moved, err = sessionNameOp(ctx, c, k, to, st, op)
	}
	if err != nil && !ownErr(err) {
		t.Fatalf("seed %d: op %d on %s (to %s): %v", seed, i, k, to, err)
	}
	return moved
}

// ownErr reports whether err is a process's own: a precondition that
// does not hold (the name absent or there, of the other type, a
// directory not empty, no such attribute).
func ownErr(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) || errors.Is(err, session.ErrIsDir) ||
		errors.Is(err, session.ErrNotEmpty) || errors.Is(err, session.ErrNotDir) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.EISDIR) || errors.Is(err, session.ErrNoXAttr)
}

// sessionNameOp is sessionDirOp's mkdir, symlink, rename or hard link
// (op 7 to 10) of k, of st, to to; it reports whether k was renamed or
// linked.
func sessionNameOp(ctx context.Context, c *session.Context, k, to string, st session.Stat, op int) (bool, error) {
	var err error
	switch {
	case op == 7:
		err = c.Mkdir(k, 0o755, 0, 0)
	case op == 8:
		err = c.Symlink(ctx, k, to, 0, 0)
	case op == 9 && k != to && !st.IsDir:
		// rename(2) of a name onto another of its node's does nothing.
		if dst, derr := c.Stat(to); derr == nil && dst.Ino == st.Ino {
			return false, nil
		}
		err = c.Rename(ctx, k, to, 0)
		return err == nil, err
	case op == 10 && !st.IsDir && st.Mode.IsRegular() && k != to:
		err = c.Link(ctx, k, to)
		return err == nil, err
	}
	return false, err
}

// programDirOp is sessionDirOp's change made by another program in the
// store's directory dir.
func programDirOp(rng *rand.Rand, dir string, i int, k, to string, op int, claim func(string, lastOp)) bool {
	p, q := filepath.Join(dir, k), filepath.Join(dir, to)
	switch op {
	case 0, 1:
		// Never through a symlink: the write would land on its target.
		v := fmt.Sprintf("other %d\n", i)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o644)
		if err != nil {
			break
		}
		_, err = f.WriteString(v)
		if f.Close() == nil && err == nil {
			claim(k, lastOp{value: v})
		}
	case 2:
		mode := fs.FileMode([]int{0o600, 0o640, 0o644}[rng.IntN(3)])
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && os.Chmod(p, mode) == nil {
			claim(k, lastOp{mode: mode})
		}
	case 3:
		unix.Lsetxattr(p, "user.memfs.tags", []byte(fmt.Sprintf("o%d", i)), 0)
	case 5:
		os.Lchown(p, 1000+rng.IntN(3), 1000+rng.IntN(3))
	case 6:
		mt := unix.NsecToTimespec(time.Unix(1700000000+int64(i), 0).UnixNano())
		unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{mt, mt}, unix.AT_SYMLINK_NOFOLLOW)
	case 7:
		os.Mkdir(p, 0o755)
	case 8:
		os.Symlink(to, p)
	case 9:
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() && k != to {
			// rename(2) of a name onto another of its node's does nothing.
			if dst, err := os.Lstat(q); err == nil && os.SameFile(fi, dst) {
				return false
			}
			return os.Rename(p, q) == nil
		}
	case 10:
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && k != to {
			return os.Link(p, q) == nil
		}
	default:
		os.Remove(p)
	}
	return false
}

type tlogWriter struct {
	t     *testing.T
	agent string
}

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s log: %s", w.agent, strings.TrimSpace(string(p)))
	return len(p), nil
}
