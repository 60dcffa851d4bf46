package memfs_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/session"
)

// Two mounts of one etcd namespace: one of them is elected and collects by
// itself the chunks of a large value that was overwritten, and logs how
// many it removed (a count, no name); the value kept reads back whole.
func TestMountsCollectTheStore(t *testing.T) {
	needFUSE(t)
	srv := etcdtest.Start(t)
	const ns = "mountgc"
	var logs [2]syncbuf.Buffer
	var mnts [2]string
	var mounts [2]*served
	var fss [2]*memfs.FS
	for i := range 2 {
		st, err := etcdstore.Open(context.Background(), etcdstore.Config{
			Endpoints: []string{srv.Endpoint()}, Namespace: ns, ChunkGrace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		fss[i], err = memfs.Open(context.Background(), st, memfs.Options{
			JournalPath: filepath.Join(t.TempDir(), "journal"),
			Session:     session.Options{MaxFileSize: 4 << 20},
			Logger:      slog.New(slog.NewTextHandler(&logs[i], &slog.HandlerOptions{Level: slog.LevelDebug})),
		})
		if err != nil {
			t.Fatal(err)
		}
		mnts[i] = t.TempDir()
		mounts[i] = serve(t, fss[i], mnts[i], memfs.MountOptions{CollectInterval: 100 * time.Millisecond})
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	chunks := func() int64 {
		resp, err := cli.Get(context.Background(), "/memfs/"+ns+"/c/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count
	}
	r := rand.New(rand.NewPCG(1, 2))
	big := func() []byte {
		b := make([]byte, 600<<10) // two chunks
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	old, cur := big(), big()
	p := filepath.Join(mnts[0], "big.bin")
	for _, v := range [][]byte{old, cur} {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(v); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil { // the store has it when Sync returns
			t.Fatal(err)
		}
		f.Close()
	}
	if n := chunks(); n < 2 {
		t.Fatalf("%d chunks after two saves of a large value, want at least 2", n)
	}
	logged := func() bool {
		return strings.Contains(logs[0].String()+logs[1].String(), "collected unnamed data")
	}
	if !await.Cond(60*time.Second, 20*time.Millisecond, func() bool { return chunks() == 2 && logged() }) {
		t.Fatalf("60 s on, %d chunks are left; want the current value's 2, and a log line\nlog A:\n%s\nlog B:\n%s", chunks(), logs[0].String(), logs[1].String())
	}
	// While both live, one of them is elected (the other takes over
	// when it leaves).
	var seen [2]string
	for i := range 2 {
		seen[i] = logs[i].String()
	}
	for i := range 2 {
		mounts[i].stop(t)
		if err := fss[i].Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	elected, collected := 0, 0
	for _, l := range seen {
		elected += strings.Count(l, "elected to collect")
		if strings.Contains(l, "collected unnamed data") {
			collected++
			if !strings.Contains(l, "removed=") || strings.Contains(l, "big.bin") {
				t.Errorf("the collection's log line names something, or no count:\n%s", l)
			}
		}
	}
	if elected != 1 || collected != 1 {
		t.Errorf("%d elections and %d mounts that collected; want one of each\nlog A:\n%s\nlog B:\n%s", elected, collected, seen[0], seen[1])
	}
	st, err := etcdstore.Open(context.Background(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Load(context.Background(), "big.bin")
	if err != nil || !bytes.Equal(got[0].Value, cur) {
		t.Fatalf("the current value after the collection: %v (equal: %v)", err, err == nil && bytes.Equal(got[0].Value, cur))
	}
}

// A mount of a store it holds alone (badger) collects history by itself:
// versions past their retention go (a line in the log says how many), the
// key's latest stays and reads back.
func TestMountCollectsHistory(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := history.New(st)
	ctx := context.Background()
	old := time.Now().Add(-100 * 24 * time.Hour)
	for i := range 3 {
		v := fmt.Appendf(nil, "version %d", i)
		a, _, err := h.Put(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := h.PlanVersions([]history.Version{history.NewVersion(uint64(i+1), history.OpWrite,
			&backend.Entry{Key: "memory/a.md", Value: v, Info: backend.Info{Mode: 0o644, CTime: old.Add(time.Duration(i) * time.Minute)}}, a)})
		if err == nil {
			err = h.Write(ctx, recs)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var log syncbuf.Buffer
	f, err := memfs.Open(ctx, st, memfs.Options{JournalPath: filepath.Join(t.TempDir(), "journal"),
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	m := serve(t, f, t.TempDir(), memfs.MountOptions{CollectInterval: 5 * time.Millisecond,
		Retention: history.RetentionOptions{Default: history.Retention{Last: 1}}})
	versions := func() []history.Version {
		vs, err := h.Versions(ctx, "memory/a.md")
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	if !await.Cond(60*time.Second, 20*time.Millisecond, func() bool { return len(versions()) == 1 && strings.Contains(log.String(), "collected history") }) {
		t.Fatalf("60 s on, %d versions; want 1, and a log line\n%s", len(versions()), log.String())
	}
	if got, err := h.Get(ctx, versions()[0].Addr); err != nil || string(got) != "version 2" {
		t.Errorf("the latest version: %q, %v", got, err)
	}
	m.stop(t)
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
