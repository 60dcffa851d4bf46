package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/internal/etcdtest"
)

// snapshot is every regular file under dir with its bytes, but the lock
// file (its holder's PID is rewritten by every open: see issue 27,
// "read commands never write").
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && fi.Name() != ".memfs.lock" && p != filepath.Join(dir, ".memfs-sys/.lock") {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func sameSnapshot(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	for p, v := range a {
		if w, ok := b[p]; !ok || w != v {
			t.Errorf("%s changed %s", what, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			t.Errorf("%s made %s", what, p)
		}
	}
}

// TestFsckReportsAndMovesAside: memfs fsck names each damaged key and
// fails, changing nothing; --repair moves the damaged records aside (the
// bytes kept, the place named) and the key is gone from the namespace.
func TestFsckReportsAndMovesAside(t *testing.T) {
	t.Run("badger value log", fsckBadgerValueLog)
	t.Run("etcd", fsckEtcd)
	t.Run("etcd event chunk", fsckEtcdEventChunk)
	t.Run("dir event head", fsckDirEventHead)
}

// fsckBadgerValueLog: a damaged value in badger's value log is named;
// --repair cannot move it aside and says so.
func fsckBadgerValueLog(t *testing.T) {
	ds := localDamageCases(t)["badger truncated value log"](t)
	out, _, err := run(t, "", "fsck", "--store", ds.store)
	if err == nil || !strings.Contains(out, "damaged value memory/big.md") || strings.Contains(out, "memory/small.md") {
		t.Errorf("memfs fsck: %v, %q; want a failure naming memory/big.md alone", err, out)
	}
	if strings.Contains(out, "a line of a long note") {
		t.Errorf("memfs fsck printed a value: %q", out)
	}
	// badger cannot move a value aside: --repair says so and changes nothing.
	out, _, err = run(t, "", "fsck", "--repair", "--store", ds.store)
	if err == nil || !strings.Contains(out, "not moved") {
		t.Errorf("memfs fsck --repair on badger: %v, %q; want the damage left and said", err, out)
	}
}

// fsckEtcd: a damaged inline value and a damaged record on etcd are
// named without a write; --repair keeps both aside under x/, and the key
// leaves the namespace.
func fsckEtcd(t *testing.T) {
	srv := etcdtest.Start(t)
	for _, kv := range sharedEnv(t) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	store := etcdStoreURL("fsck", srv.Endpoint())
	mid := strings.Repeat("a middling note, kept inline on etcd\n", 300)
	mustRun(t, "small\n", "put", "--store", store, "memory/small.md")
	mustRun(t, mid, "put", "--store", store, "memory/big.md")
	mustRun(t, "other\n", "put", "--store", store, "memory/rec.md")
	cli := etcdRaw(t, srv)
	etcdPut(t, cli, "/memfs/fsck/v/memory/big.md", []byte(mid[:100]))
	etcdPut(t, cli, "/memfs/fsck/m/memory/rec.md", []byte("garbage record"))
	rev := func() int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := cli.Get(ctx, "/memfs/fsck/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	before := rev()
	out, _, err := run(t, "", "fsck", "--store", store)
	if err == nil || !strings.Contains(out, "damaged value memory/big.md") || !strings.Contains(out, "damaged record memory/rec.md") || strings.Contains(out, "small.md") {
		t.Errorf("memfs fsck: %v, %q; want a failure naming memory/big.md and memory/rec.md alone", err, out)
	}
	if after := rev(); after != before {
		t.Errorf("memfs fsck wrote to etcd: revision %d -> %d", before, after)
	}
	out, _, _ = run(t, "", "fsck", "--repair", "--store", store)
	if strings.Count(out, "moved aside to etcd keys /memfs/fsck/x/") != 2 {
		t.Fatalf("memfs fsck --repair: %q; want both moved aside, with where", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/memfs/fsck/x/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, kv := range resp.Kvs {
		kept[string(kv.Value)] = true
	}
	if !kept[mid[:100]] || !kept["garbage record"] {
		t.Errorf("the damaged records are not kept aside: %d keys under x/", len(resp.Kvs))
	}
	if out, errOut, err := run(t, "", "fsck", "--store", store); err != nil {
		t.Errorf("memfs fsck after --repair: %v, %q %q", err, out, errOut)
	}
	if out := mustRun(t, "", "ls", "--store", store, "memory"); strings.Contains(out, "big.md") || !strings.Contains(out, "small.md") {
		t.Errorf("memfs ls after --repair: %q", out)
	}
}

// fsckEtcdEventChunk: a damaged chunk of the event log on etcd is named;
// the values still read.
func fsckEtcdEventChunk(t *testing.T) {
	srv := etcdtest.Start(t)
	for _, kv := range sharedEnv(t) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	store := etcdStoreURL("chunk", srv.Endpoint())
	mustRun(t, "a\n", "put", "--store", store, "memory/a.md")
	cli := etcdRaw(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/memfs/chunk/s/events/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("event chunks: %v, %v", resp, err)
	}
	chunk := string(resp.Kvs[len(resp.Kvs)-1].Key)
	etcdPut(t, cli, chunk, []byte("garbage"))
	out, _, err := run(t, "", "fsck", "--store", store)
	if name := strings.TrimPrefix(chunk, "/memfs/chunk/s/"); err == nil || !strings.Contains(out, "damaged system record "+name) {
		t.Errorf("memfs fsck: %v, %q; want a failure naming %s", err, out, name)
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/a.md"); got != "a\n" {
		t.Errorf("memfs cat: %q", got)
	}
}

// fsckDirEventHead: a damaged event-log head in a dir store is named
// without a write; --repair copies it aside, and the log says so.
func fsckDirEventHead(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	mustRun(t, "a\n", "put", "--store", store, "memory/a.md")
	if err := os.WriteFile(filepath.Join(dir, ".memfs-sys", "events.head"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	out, _, err := run(t, "", "fsck", "--store", store)
	if err == nil || !strings.Contains(out, "damaged event log") || !strings.Contains(out, "events.head") {
		t.Errorf("memfs fsck: %v, %q; want the head's damage", err, out)
	}
	sameSnapshot(t, "memfs fsck", before, snapshot(t, dir))
	out, _, _ = run(t, "", "fsck", "--repair", "--store", store)
	if !strings.Contains(out, "moved aside to events.damaged/") {
		t.Errorf("memfs fsck --repair: %q; want the head copied aside, with where", out)
	}
	if !treeHolds(t, filepath.Join(dir, ".memfs-sys"), []byte("garbage")) {
		t.Error("the damaged head's bytes are gone")
	}
	if out := mustRun(t, "", "log", "--store", store, "--op", "break"); !strings.Contains(out, "events.head") {
		t.Errorf("memfs log --op break after --repair: %q", out)
	}
}
