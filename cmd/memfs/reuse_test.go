package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A reused name is the mount's own change (issue 26, finding 2), through
// the kernel on etcd: `mkdir notes; fsync; rmdir notes; echo x > notes;
// fsync` and `ln a b; fsync; rm a; echo two > a; fsync` with one mount
// log no conflict, make no conflict copy, and a remount shows the last
// writes (no directory coming back, no old data under a).
func TestNameReuseThroughTheMount(t *testing.T) {
	store := sharedEtcdStore(t)
	env := sharedEnv(t)
	mnt := filepath.Join(t.TempDir(), "m")
	p := startMount(t, store, mnt, env)
	m := func(k string) string { return filepath.Join(mnt, "memory", k) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	syncDir := func(d string) {
		t.Helper()
		f, err := os.Open(d)
		must(err)
		must(f.Sync())
		f.Close()
	}
	must(os.Mkdir(m("notes"), 0o755))
	syncDir(m("notes"))
	must(os.Remove(m("notes")))
	must(writeSync(m("notes"), []byte("x\n")))

	must(writeSync(m("a"), []byte("one\n")))
	must(os.Link(m("a"), m("b")))
	syncDir(filepath.Join(mnt, "memory"))
	must(os.Remove(m("a")))
	must(writeSync(m("a"), []byte("two\n")))

	if got := conflictCopies(t, mnt, ""); len(got) > 0 {
		t.Errorf("conflict copies with one mount: %v", got)
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.log)
	}
	if log := p.log.String(); strings.Contains(log, "another writer") || strings.Contains(log, "conflict") {
		t.Errorf("the mount's log speaks of another writer or a conflict:\n%s", log)
	}

	p = startMount(t, store, mnt, env)
	defer p.terminate(t)
	if fi, err := os.Lstat(m("notes")); err != nil || !fi.Mode().IsRegular() || readBack(m("notes")) != "x\n" {
		t.Errorf("notes after a remount: %v, %v, %q; want the file x", fi, err, readBack(m("notes")))
	}
	if readBack(m("a")) != "two\n" || readBack(m("b")) != "one\n" {
		t.Errorf("after a remount: a = %q, b = %q; want two, one", readBack(m("a")), readBack(m("b")))
	}
	if got := conflictCopies(t, mnt, ""); len(got) > 0 {
		t.Errorf("conflict copies after a remount: %v", got)
	}
}
