package main

import (
	"os"
	"path"
	"strings"
	"testing"
)

// deepKey is a key of n bytes under deep/: directories of 255 bytes, and
// a last segment that starts with leaf.
func deepKey(n int, leaf string) string {
	k := "deep/"
	for n-len(k) > 255 {
		k += strings.Repeat("d", min(254, n-len(k)-len(leaf)-2)) + "/"
	}
	k += leaf
	return k + strings.Repeat("x", n-len(k))
}

// Keys of 16 KiB, 64 directories deep, through put, cat, ls, export and
// import on every kind of store (issue 36): export writes them under a
// directory whose absolute path is longer than PATH_MAX, and import reads
// them back from there.
func TestDeepKeysThroughCommands(t *testing.T) {
	stores := backends(t)
	stores["etcd"] = func() string { return sharedEtcdStore(t) }
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			key := deepKey(16<<10, "note.md")
			mustRun(t, "deep value\n", "put", "--store", store, key)
			if got := mustRun(t, "", "cat", "--store", store, key); got != "deep value\n" {
				t.Fatalf("cat of the key of %d bytes = %q", len(key), got)
			}
			if ls := mustRun(t, "", "ls", "--store", store, "deep/"); !strings.Contains(ls, key+"\n") {
				t.Fatalf("ls does not list the key of %d bytes (%d bytes of output)", len(key), len(ls))
			}
			exp := t.TempDir()
			mustRun(t, "", "export", "--store", store, exp)
			root, err := os.OpenRoot(exp)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			if b, err := root.ReadFile(key); err != nil || string(b) != "deep value\n" {
				t.Fatalf("the exported file: %q, %v", b, err)
			}
			other := "dir:" + t.TempDir()
			mustRun(t, "", "import", "--store", other, exp)
			if got := mustRun(t, "", "cat", "--store", other, key); got != "deep value\n" {
				t.Fatalf("cat after export and import = %q", got)
			}
		})
	}
}

// A key over a store's limit is refused by put and import with an error
// that names the limit: etcd holds keys of 32 KiB.
func TestDeepKeyOverTheStoresLimit(t *testing.T) {
	store := sharedEtcdStore(t)
	key := deepKey(40<<10, "note.md")
	_, _, err := run(t, "x\n", "put", "--store", store, key)
	if err == nil || !strings.Contains(err.Error(), "etcd store's limit of 32768 bytes") {
		t.Fatalf("put of a key of %d bytes into etcd = %v, want the limit named", len(key), err)
	}
	if strings.Contains(err.Error(), key[:1000]) {
		t.Errorf("the error holds the whole key: %d bytes", len(err.Error()))
	}
	src := "dir:" + t.TempDir()
	mustRun(t, "x\n", "put", "--store", src, key)
	exp := t.TempDir()
	mustRun(t, "", "export", "--store", src, exp)
	_, errOut, err := run(t, "", "import", "--store", store, exp)
	if err == nil || !strings.Contains(errOut+err.Error(), "etcd store's limit of 32768 bytes") {
		t.Fatalf("import of a key of %d bytes into etcd = %v\n%s\nwant the limit named", len(key), err, errOut)
	}
}

// A deep key closed but not flushed survives kill -9 through the journal
// (its record holds a key of 16 KiB), and a clean remount after the
// replay keeps it (issue 36).
func TestCrashKill9KeepsDeepKeys(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newStore()
			mnt := t.TempDir()
			p := startMount(t, store, mnt, nil)
			key := deepKey(16<<10, "closed.md")
			dir, _ := path.Split(key)
			withRoot(t, mnt, func(r *os.Root) {
				if err := r.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := r.WriteFile(key, []byte("closed, never flushed\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := r.Chmod(key, 0o640); err != nil {
					t.Fatal(err)
				}
			})
			p.kill9(t)
			p2 := startMount(t, store, mnt, nil)
			if !strings.Contains(p2.log.String(), "replaying the journal") {
				t.Errorf("remount did not replay a journal:\n%s", p2.log)
			}
			checkDeep := func(when string) {
				t.Helper()
				withRoot(t, mnt, func(r *os.Root) {
					b, err := r.ReadFile(key)
					fi, serr := r.Lstat(key)
					if err != nil || serr != nil || string(b) != "closed, never flushed\n" || fi.Mode().Perm() != 0o640 {
						t.Fatalf("%s: the deep file: %q, %v, %v, %v", when, b, fi, err, serr)
					}
				})
			}
			checkDeep("after kill -9 and replay")
			if err := p2.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p2.log)
			}
			p3 := startMount(t, store, mnt, nil)
			checkDeep("after a clean remount")
			if err := p3.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p3.log)
			}
			if got := mustRun(t, "", "cat", "--store", store, key); got != "closed, never flushed\n" {
				t.Fatalf("cat from the store = %q", got)
			}
		})
	}
}

// withRoot runs fn with an os.Root of dir: every access through it is
// one segment at a time, so paths under it may be longer than PATH_MAX.
func withRoot(t *testing.T, dir string, fn func(r *os.Root)) {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fn(r)
}
