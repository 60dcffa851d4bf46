package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/etcdtest"
)

// Damage is local: one damaged record is that key's EIO (or the event
// log's recorded break), never a failed mount or command for the rest.

// etcdRaw is a plain client of srv, for damage no Store would do (what
// etcdctl put does).
func etcdRaw(t *testing.T, srv *etcdtest.Server) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func etcdPut(t *testing.T, cli *clientv3.Client, key string, value []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, key, string(value)); err != nil {
		t.Fatal(err)
	}
}

// damagedStore is a store whose value of damagedKey is damaged (and the
// environment its commands and mounts need).
type damagedStore struct {
	store string
	env   []string
}

// localDamageCases make a store holding memory/small.md and
// memory/big.md, then damage memory/big.md's value, each its own way.
func localDamageCases(t *testing.T) map[string]func(t *testing.T) damagedStore {
	big := bytes.Repeat([]byte("a line of a long note that goes to the value log\n"), 5400) // 270,000 bytes
	mid := bytes.Repeat([]byte("a middling note, kept inline on etcd\n"), 300)              // 11,100 bytes
	fill := func(t *testing.T, store string, value []byte) {
		mustRun(t, "small\n", "put", "--store", store, "memory/small.md")
		mustRun(t, string(value), "put", "--store", store, "memory/big.md")
	}
	etcd := func(t *testing.T, value []byte, damage func(t *testing.T, cli *clientv3.Client, prefix string)) damagedStore {
		srv := etcdtest.Start(t)
		env := sharedEnv(t)
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		store := etcdStoreURL("dmg", srv.Endpoint())
		fill(t, store, value)
		damage(t, etcdRaw(t, srv), "/memfs/dmg/")
		return damagedStore{store, env}
	}
	return map[string]func(t *testing.T) damagedStore{
		"badger truncated value log": func(t *testing.T) damagedStore {
			dir := t.TempDir()
			store := "badger:" + dir
			fill(t, store, big)
			truncateValueLogs(t, dir)
			return damagedStore{store: store}
		},
		"etcd short value": func(t *testing.T) damagedStore {
			return etcd(t, mid, func(t *testing.T, cli *clientv3.Client, prefix string) {
				etcdPut(t, cli, prefix+"v/memory/big.md", mid[:100])
			})
		},
		"etcd rewritten chunk": func(t *testing.T) damagedStore {
			return etcd(t, big, func(t *testing.T, cli *clientv3.Client, prefix string) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				resp, err := cli.Get(ctx, prefix+"c/", clientv3.WithPrefix())
				if err != nil || len(resp.Kvs) == 0 {
					t.Fatalf("chunks: %v, %v", resp, err)
				}
				for _, kv := range resp.Kvs {
					v := bytes.Clone(kv.Value)
					v[len(v)/2] ^= 0x5A
					etcdPut(t, cli, string(kv.Key), v)
				}
			})
		},
	}
}

// truncateValueLogs cuts 200,000 bytes off each value log over 100,000.
func truncateValueLogs(t *testing.T, dir string) {
	t.Helper()
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	cut := false
	for _, v := range vlogs {
		fi, err := os.Stat(v)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 100_000 {
			if err := os.Truncate(v, fi.Size()-200_000); err != nil {
				t.Fatal(err)
			}
			cut = true
		}
	}
	if !cut {
		t.Fatalf("no value log to truncate among %v", vlogs)
	}
}

// TestDamagedValueIsLocal: with memory/big.md's value damaged, a new
// mount comes up (bootstrap loads memory/), the other note reads, the
// damaged one is EIO, a write flushes, .memfs/status lists the damaged
// key, and the read commands still work.
func TestDamagedValueIsLocal(t *testing.T) {
	for name, mk := range localDamageCases(t) {
		t.Run(name, func(t *testing.T) {
			ds := mk(t)
			m := startMount(t, ds.store, filepath.Join(t.TempDir(), "mnt"), ds.env)
			if got := readBack(filepath.Join(m.mnt, "memory/small.md")); got != "small\n" {
				t.Errorf("the undamaged note: %q", got)
			}
			_, err := os.ReadFile(filepath.Join(m.mnt, "memory/big.md"))
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("read of the damaged note: %v, want EIO", err)
			}
			if err := writeSync(filepath.Join(m.mnt, "memory/new.md"), []byte("new\n")); err != nil {
				t.Fatalf("a write beside the damaged note: %v", err)
			}
			status := readBack(filepath.Join(m.mnt, ".memfs/status"))
			if !strings.Contains(status, "damaged: memory/big.md") {
				t.Errorf(".memfs/status does not list the damaged key:\n%s", status)
			}
			if err := m.terminate(t); err != nil {
				t.Fatalf("unmount: %v\n%s", err, m.log)
			}
			if got := mustRun(t, "", "cat", "--store", ds.store, "memory/new.md"); got != "new\n" {
				t.Errorf("the write after the damage: %q", got)
			}
			if out := mustRun(t, "", "ls", "--store", ds.store, "memory"); !strings.Contains(out, "big.md") || !strings.Contains(out, "small.md") {
				t.Errorf("memfs ls: %q", out)
			}
			// A second mount, after the first recorded what it found.
			m2 := startMount(t, ds.store, filepath.Join(t.TempDir(), "mnt"), ds.env)
			if got := readBack(filepath.Join(m2.mnt, "memory/new.md")); got != "new\n" {
				t.Errorf("the second mount: %q", got)
			}
		})
	}
}

// TestDamagedEventHeadIsLocal: garbage in events.head (what `etcdctl put
// /memfs/NS/s/events.head garbage` does; a hand edit on the other stores)
// fails no command and no mount: the log continues past it with the break
// recorded and the bytes kept, and log --verify reports it. On etcd a
// mount that was live when the head was damaged goes on recording events.
func TestDamagedEventHeadIsLocal(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		store func(t *testing.T, garbage []byte) headDamage
	}{{"dir", dirHeadDamage}, {"badger", badgerHeadDamage}, {"etcd", etcdHeadDamage}} {
		t.Run(tc.kind, func(t *testing.T) {
			garbage := []byte("garbage " + tc.kind)
			hd := tc.store(t, garbage)
			store, env := hd.store, hd.env
			mustRun(t, "a\n", "put", "--store", store, "memory/a.md")
			var live *memfsProc
			if hd.live {
				live = startMount(t, store, filepath.Join(t.TempDir(), "live"), env)
			}
			hd.damage()

			checkCommandsPastDamagedHead(t, store)
			if live != nil {
				if err := writeSync(filepath.Join(live.mnt, "memory/live.md"), []byte("live\n")); err != nil {
					t.Fatal(err)
				}
				waitLogged(t, store, "memory/live.md")
			}
			m := startMount(t, store, filepath.Join(t.TempDir(), "mnt"), env)
			if got := readBack(filepath.Join(m.mnt, "memory/a.md")); got != "a\n" {
				t.Errorf("a new mount after the damage: %q", got)
			}
			if err := writeSync(filepath.Join(m.mnt, "memory/b.md"), []byte("b\n")); err != nil {
				t.Fatal(err)
			}
			for _, p := range []*memfsProc{m, live} {
				if p == nil {
					continue
				}
				if err := p.terminate(t); err != nil {
					t.Fatalf("unmount: %v\n%s", err, p.log)
				}
			}
			waitLogged(t, store, "memory/b.md")
			if out := mustRun(t, "", "log", "--store", store, "--op", "break"); !strings.Contains(out, "events.head") {
				t.Errorf("memfs log --op break: %q, want the head's break", out)
			}
			if !hd.kept() {
				t.Error("the damaged head's bytes are nowhere in the store")
			}
			if _, errOut, err := run(t, "", "log", "--store", store, "--verify"); err == nil || !strings.Contains(err.Error()+errOut, "events.head") {
				t.Errorf("memfs log --verify after the break was recorded: %v, %q; want the break reported", err, errOut)
			}
		})
	}
}

// headDamage is a store whose event-log head TestDamagedEventHeadIsLocal
// damages.
type headDamage struct {
	store  string
	env    []string
	live   bool        // a mount is live while the head is damaged
	damage func()      // writes the garbage over the head
	kept   func() bool // the damaged bytes are somewhere in the store
}

// dirHeadDamage: a hand edit of a dir store's head.
func dirHeadDamage(t *testing.T, garbage []byte) headDamage {
	dir := t.TempDir()
	return headDamage{
		store: "dir:" + dir,
		damage: func() {
			if err := os.WriteFile(filepath.Join(dir, ".memfs-sys", "events.head"), garbage, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		kept: func() bool { return treeHolds(t, filepath.Join(dir, ".memfs-sys"), garbage) },
	}
}

// badgerHeadDamage: the head's system record replaced in a badger store.
func badgerHeadDamage(t *testing.T, garbage []byte) headDamage {
	dir := t.TempDir()
	return headDamage{
		store:  "badger:" + dir,
		damage: func() { saveBadgerSys(t, dir, "events.head", garbage) },
		kept: func() bool {
			st, err := badgerstore.Open(dir, badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			recs, err := st.ListSys(t.Context(), "events.damaged/")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if b, err := st.LoadSys(t.Context(), r.Key); err == nil && bytes.Equal(b, garbage) {
					return true
				}
			}
			return false
		},
	}
}

// etcdHeadDamage: `etcdctl put /memfs/NS/s/events.head garbage` while a
// mount is live.
func etcdHeadDamage(t *testing.T, garbage []byte) headDamage {
	srv := etcdtest.Start(t)
	env := sharedEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cli := etcdRaw(t, srv)
	return headDamage{
		store:  etcdStoreURL("head", srv.Endpoint()),
		env:    env,
		live:   true,
		damage: func() { etcdPut(t, cli, "/memfs/head/s/events.head", garbage) },
		kept: func() bool {
			resp, err := cli.Get(t.Context(), "/memfs/head/s/events.damaged/", clientv3.WithPrefix())
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range resp.Kvs {
				if bytes.Contains(kv.Value, garbage) {
					return true
				}
			}
			return false
		},
	}
}

// checkCommandsPastDamagedHead: ls and cat work on a store whose event
// head is damaged, and log --verify names the head.
func checkCommandsPastDamagedHead(t *testing.T, store string) {
	t.Helper()
	if out := mustRun(t, "", "ls", "--store", store, "memory"); !strings.Contains(out, "a.md") {
		t.Errorf("memfs ls after the damage: %q", out)
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/a.md"); got != "a\n" {
		t.Errorf("memfs cat after the damage: %q", got)
	}
	if _, errOut, err := run(t, "", "log", "--store", store, "--verify"); err == nil || !strings.Contains(err.Error()+errOut, "events.head") {
		t.Errorf("memfs log --verify: %v, %q; want a failure naming the head record", err, errOut)
	}
}

// waitLogged waits until memfs log shows an event of key.
func waitLogged(t *testing.T, store, key string) {
	t.Helper()
	var out string
	var err error
	if !await.Cond(20*time.Second, 50*time.Millisecond, func() bool {
		out, _, err = run(t, "", "log", "--store", store, "--limit", "100")
		return err == nil && strings.Contains(out, key)
	}) {
		t.Fatalf("memfs log never showed %s: %v\n%s", key, err, out)
	}
}

// treeHolds reports whether a regular file under dir holds exactly data.
func treeHolds(t *testing.T, dir string, data []byte) bool {
	t.Helper()
	found := false
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Equal(b, data) {
				found = true
			}
		}
		return nil
	})
	return found
}

// saveBadgerSys replaces the system record name of the badger store in dir.
func saveBadgerSys(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SaveSys(t.Context(), name, data); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedModelTableIsAWarning: a damaged default model table (the
// embedding table memfs models install puts in place) is what a missing
// one is: a warning, at the first search that reads it, and keyword
// search. The mount starts and finds by words.
func TestDamagedModelTableIsAWarning(t *testing.T) {
	t.Parallel()
	models := t.TempDir()
	if err := os.WriteFile(filepath.Join(models, embed.DefaultTable), bytes.Repeat([]byte("not a table "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	store := "dir:" + t.TempDir()
	mustRun(t, "the quick brown fox\n", "put", "--store", store, "memory/fox.md")
	m := startMount(t, store, filepath.Join(t.TempDir(), "mnt"), []string{"MEMFS_MODEL_DIR=" + models})
	got := readBack(filepath.Join(m.mnt, ".memfs/search/fox"))
	if !strings.Contains(got, "memory/fox.md") {
		t.Errorf("keyword search with a damaged model table: %q", got)
	}
	// The warning was written before the answer, through a pipe.
	if !await.Cond(5*time.Second, 20*time.Millisecond, func() bool {
		log := m.log.String()
		return strings.Contains(log, "WARN") && strings.Contains(log, models)
	}) {
		t.Errorf("no warning naming the damaged table:\n%s", m.log.String())
	}
}

// TestSearchDuringEtcdOutageSaysSo: the first search of a mount while
// etcd is down fails (its file says the store does not answer), and the log says the store is unavailable and that
// the index opens once it answers, not that memfs reindex must rebuild
// it; once etcd is back the search answers with no reindex.
func TestSearchDuringEtcdOutageSaysSo(t *testing.T) {
	srv := etcdtest.Start(t)
	env := sharedEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	store := etcdStoreURL("outsearch", srv.Endpoint())
	mustRun(t, "the quick brown fox\n", "put", "--store", store, "memory/fox.md")
	m := startMount(t, store, filepath.Join(t.TempDir(), "mnt"), env)
	srv.Stop()
	// The answer file says the store does not answer (and its
	// user.memfs.error is EIO): no hit, and no empty answer.
	if got, err := os.ReadFile(filepath.Join(m.mnt, ".memfs/search/fox")); err != nil ||
		!strings.Contains(string(got), "the store does not answer") || strings.Contains(string(got), "memory/fox.md") {
		t.Errorf("search with etcd down: %q, %v; want the file to say the store does not answer", got, err)
	}
	waitFor(t, "the log line of the failed search", 10*time.Second, func() bool {
		return strings.Contains(m.log.String(), "search index")
	})
	log := m.log.String()
	if strings.Contains(log, "reindex rebuilds it") || !strings.Contains(log, "unavailable") {
		t.Errorf("the log of a search during an outage:\n%s", log)
	}
	srv.Restart()
	waitFor(t, "search after the outage", 30*time.Second, func() bool {
		got, err := os.ReadFile(filepath.Join(m.mnt, ".memfs/search/fox"))
		return err == nil && strings.Contains(string(got), "memory/fox.md")
	})
}

// TestDamagedRecordIsThatKeysEIO: a key whose record does not decode
// (garbage put in its place, on etcd) is listed and reads EIO in a new
// mount, and .memfs/status names it; the rest works.
func TestDamagedRecordIsThatKeysEIO(t *testing.T) {
	srv := etcdtest.Start(t)
	env := sharedEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	store := etcdStoreURL("rec", srv.Endpoint())
	mustRun(t, "small\n", "put", "--store", store, "memory/small.md")
	mustRun(t, "rec\n", "put", "--store", store, "memory/rec.md")
	etcdPut(t, etcdRaw(t, srv), "/memfs/rec/m/memory/rec.md", []byte("garbage record"))
	m := startMount(t, store, filepath.Join(t.TempDir(), "mnt"), env)
	if _, err := os.ReadFile(filepath.Join(m.mnt, "memory/rec.md")); !errors.Is(err, syscall.EIO) {
		t.Errorf("read of the key with a damaged record: %v, want EIO", err)
	}
	if got := readBack(filepath.Join(m.mnt, "memory/small.md")); got != "small\n" {
		t.Errorf("the other note: %q", got)
	}
	if err := writeSync(filepath.Join(m.mnt, "memory/new.md"), []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if status := readBack(filepath.Join(m.mnt, ".memfs/status")); !strings.Contains(status, "damaged: memory/rec.md") {
		t.Errorf(".memfs/status:\n%s", status)
	}
}
