package etcdstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
)

// TestMoveAsideKeepsEverything: a damaged value moved aside is gone from
// the namespace, its record and value are kept as stored under x/, and a
// chunk collection keeps the chunks its record names.
func TestMoveAsideKeepsEverything(t *testing.T) {
	srv := etcdtest.Start(t)
	const grace = 300 * time.Millisecond
	clk := newClock()
	st := open(t, srv, "aside", func(c *etcdstore.Config) { c.ChunkGrace, c.Now = grace, clk.Now })
	cli := raw(t, srv)
	big := random(600<<10, 5) // two chunks
	if err := st.Save(t.Context(), entry("big", big), entry("small", []byte("small"))); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(t.Context(), "/memfs/aside/c/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 2 {
		t.Fatalf("chunks: %v, %v", resp, err)
	}
	bad := []byte(string(resp.Kvs[0].Value[:100]))
	if _, err := cli.Put(t.Context(), string(resp.Kvs[0].Key), string(bad)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(t.Context(), "big"); !errors.Is(err, backend.ErrCorrupt) {
		t.Fatalf("Load of the damaged value: %v, want ErrCorrupt", err)
	}
	where, err := st.MoveAside(t.Context(), "big")
	if err != nil || !strings.Contains(where, "/memfs/aside/x/") {
		t.Fatalf("MoveAside = %q, %v", where, err)
	}
	if _, err := st.Load(t.Context(), "big"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("Load after MoveAside: %v, want not found", err)
	}
	if got := keys(t, st); len(got) != 1 || got[0] != "small" {
		t.Errorf("keys after MoveAside: %v", got)
	}
	for range 2 {
		if _, err := st.Collect(t.Context()); err != nil {
			t.Fatal(err)
		}
		clk.advance(grace)
	}
	if c, err := st.Collect(t.Context()); err != nil || !c.Swept {
		t.Fatalf("the last Collect = %+v, %v; want it swept", c, err)
	}
	if n := countPrefix(t, cli, "/memfs/aside/c/"); n != 2 {
		t.Errorf("%d chunks after collections, want the 2 the moved record names", n)
	}
	if n := countPrefix(t, cli, "/memfs/aside/x/"); n != 1 {
		t.Errorf("%d records under x/, want the moved record", n)
	}
}

// TestCollectKeepsChunksOfAMovedDamagedRecord: a record that does not
// decode (here: a size that disagrees with its chunks) but still names
// its chunks is moved aside whole; collections keep those chunks, as they
// keep a moved record's that decodes. They once removed them, since the
// scan of x/ skipped every record it could not decode; and the inline
// values moved aside beside records are not taken for damaged records.
func TestCollectKeepsChunksOfAMovedDamagedRecord(t *testing.T) {
	srv := etcdtest.Start(t)
	const grace = 300 * time.Millisecond
	clk := newClock()
	st := open(t, srv, "asiderec", func(c *etcdstore.Config) { c.ChunkGrace, c.Now = grace, clk.Now })
	cli := raw(t, srv)
	if err := st.Save(t.Context(), entry("big", random(600<<10, 7)), entry("small", []byte("not json"))); err != nil {
		t.Fatal(err)
	}
	// An inline value moved aside beside its record is no record.
	if _, err := st.MoveAside(t.Context(), "small"); err != nil {
		t.Fatal(err)
	}
	rec, err := cli.Get(t.Context(), "/memfs/asiderec/m/big")
	if err != nil || len(rec.Kvs) != 1 {
		t.Fatalf("record: %v, %v", rec, err)
	}
	bad := strings.Replace(string(rec.Kvs[0].Value), `"size":`, `"size":1`, 1)
	if bad == string(rec.Kvs[0].Value) {
		t.Fatalf("record %s has no size to damage", rec.Kvs[0].Value)
	}
	if _, err := cli.Put(t.Context(), "/memfs/asiderec/m/big", bad); err != nil {
		t.Fatal(err)
	}
	if _, err := st.MoveAside(t.Context(), "big"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := st.Collect(t.Context()); err != nil {
			t.Fatal(err)
		}
		clk.advance(grace)
	}
	if c, err := st.Collect(t.Context()); err != nil || !c.Swept {
		t.Fatalf("the last Collect = %+v, %v; want it swept", c, err)
	}
	if n := countPrefix(t, cli, "/memfs/asiderec/c/"); n != 2 {
		t.Errorf("%d chunks after collections, want the 2 the moved record names", n)
	}
}
