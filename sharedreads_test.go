package memfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/session"
)

// What reads on a mount of a shared store cost in etcd requests, counted
// by the server (its grpc_server_started_total for the KV service), not
// timed. Beside the mount's own background requests (see background),
// the budgets are:
//
//   - a stat of every file, twice: no request. The mount's index holds
//     every key's attributes, and the watch brings other writers'
//     changes: nothing asks the store.
//   - a cold read of every file of a directory of 100 small files: 2
//     requests (Txn). The first open loads the directory's unloaded small files
//     with it (backend.ReadAheader), in Load transactions of 64 keys
//     each; the other 99 opens find their values loaded. One request per
//     file, as before, made a cold read 3.3x the badger store's.
func TestSharedStoreReadBudgets(t *testing.T) {
	needFUSE(t)
	srv := etcdtest.Start(t)
	const ns, dirs, perDir = "budgets", 3, 100
	openStore := func() *etcdstore.Store {
		t.Helper()
		st, err := etcdstore.Open(context.Background(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	var entries []backend.Entry
	want := map[string]string{}
	for d := range dirs {
		for i := range perDir {
			k := fmt.Sprintf("notes/d%d/f%03d.md", d, i)
			v := fmt.Sprintf("note %d of %d\n%0*d\n", i, d, 1000+i*30, i)
			entries = append(entries, backend.Entry{Key: k, Value: []byte(v),
				Info: backend.Info{Mode: 0o644, MTime: time.Now(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}})
			want[k] = v
		}
	}
	seed := openStore()
	if err := seed.Save(t.Context(), entries...); err != nil {
		t.Fatal(err)
	}
	seed.Close()

	f, err := memfs.Open(context.Background(), openStore(), memfs.Options{
		JournalPath: filepath.Join(t.TempDir(), "journal"),
		Bootstrap:   []string{"memory/"},
		Session:     session.Options{MaxFileSize: 1 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	// No collector: its election and marks are Txn requests of its
	// own, at any time.
	serve(t, f, mnt, memfs.MountOptions{CollectInterval: -1})

	before := srv.KVRequests(t)
	t0 := time.Now()
	for range 2 {
		for _, e := range entries {
			if _, err := os.Lstat(filepath.Join(mnt, e.Key)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := since(srv.KVRequests(t), before); n["Txn"] != 0 || n["Range"]+n["Put"] > background(time.Since(t0)) {
		t.Errorf("a stat of %d files, twice: etcd requests %v, want no Txn and at most %d Range or Put (the mount's background)", len(entries), n, background(time.Since(t0)))
	}

	before = srv.KVRequests(t)
	t0 = time.Now()
	for _, e := range entries[:perDir] {
		b, err := os.ReadFile(filepath.Join(mnt, e.Key))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want[e.Key] {
			t.Fatalf("%s: read %q, want %q", e.Key, b, want[e.Key])
		}
	}
	n := since(srv.KVRequests(t), before)
	t.Logf("cold read of %d files: etcd requests %v", perDir, n)
	if n["Txn"] > 2 || n["Range"]+n["Put"] > background(time.Since(t0)) {
		t.Errorf("a cold read of the %d files of one directory: etcd requests %v, want at most 2 Txn (the loads) and %d Range or Put (the mount's background)",
			perDir, n, background(time.Since(t0)))
	}
}

// since is the requests of each method from before to now, those with
// none left out.
func since(now, before map[string]int) map[string]int {
	d := map[string]int{}
	for m, n := range now {
		if n > before[m] {
			d[m] = n - before[m]
		}
	}
	return d
}

// background bounds the Range and Put requests a mount of a shared store
// makes by itself in d, whatever the processes on it do: right after the
// mount the watch's reconcile (a listing) and the presence record, then a
// refresh of the event log every 3 s (serve.go, refreshEvents). None of them is per file: a request per
// stat or per open would be hundreds.
func background(d time.Duration) int {
	return 3 + int(d/(3*time.Second))
}

// Under a small memory budget, a cold open reads ahead at most a quarter
// of the budget's room: what it reads ahead must not push out what is
// open, nor be trimmed before it is read.
func TestReadAheadWithinTheMemoryBudget(t *testing.T) {
	srv := etcdtest.Start(t)
	st, err := etcdstore.Open(context.Background(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "budget"})
	if err != nil {
		t.Fatal(err)
	}
	const files, size, budget = 100, 2000, 64 << 10
	var entries []backend.Entry
	for i := range files {
		entries = append(entries, backend.Entry{Key: fmt.Sprintf("notes/f%03d.md", i), Value: make([]byte, size),
			Info: backend.Info{Mode: 0o644, MTime: time.Now(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}})
	}
	if err := st.Save(t.Context(), entries...); err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), st, memfs.Options{
		JournalPath: filepath.Join(t.TempDir(), "journal"),
		Session:     session.Options{MaxMemory: budget},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	h, err := f.Session().Open(t.Context(), entries[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, loaded, _, _ := f.Session().Stats().Counts()
	if max := 1 + budget/4/size; loaded < 2 || loaded > max {
		t.Errorf("one cold open under a budget of %d bytes loaded %d files of %d bytes, want 2 to %d (a quarter of the budget)", budget, loaded, size, max)
	}
}
