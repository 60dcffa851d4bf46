package etcdstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/etcdtest"
)

// raw is a plain etcd client of srv, for what no Store would do.
func raw(t testing.TB, srv *etcdtest.Server) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func entry(key string, value []byte) backend.Entry {
	return backend.Entry{Key: key, Value: value, Info: backend.Info{Mode: 0o644, MTime: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}}
}

func random(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func loadValue(t *testing.T, st backend.Store, key string) []byte {
	t.Helper()
	got, err := st.Load(t.Context(), key)
	if err != nil {
		t.Fatalf("Load(%s): %v", key, err)
	}
	return got[0].Value
}

func keys(t *testing.T, st backend.Store) []string {
	t.Helper()
	l, err := st.List(t.Context())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var ks []string
	for _, e := range l {
		ks = append(ks, e.Key)
	}
	return ks
}

// countPrefix counts the etcd keys under p.
func countPrefix(t *testing.T, cli *clientv3.Client, p string) int64 {
	t.Helper()
	resp, err := cli.Get(t.Context(), p, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

func TestChunkedValue(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "chunks")
	cli := raw(t, srv)
	big := random(3<<20, 1)
	e := entry("big.bin", big)
	if err := st.Save(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	if got := loadValue(t, st, "big.bin"); !bytes.Equal(got, big) {
		t.Fatalf("3 MiB value: got %d bytes back, want the %d saved", len(got), len(big))
	}
	if n := countPrefix(t, cli, "/memfs/chunks/c/"); n != 6 {
		t.Errorf("3 MiB in %d chunks, want 6 of 512 KiB", n)
	}
	if n := countPrefix(t, cli, "/memfs/chunks/v/"); n != 0 {
		t.Errorf("%d inline values for a chunked one, want 0", n)
	}
	// The same content under another name shares its chunks.
	if err := st.Save(t.Context(), entry("copy.bin", big)); err != nil {
		t.Fatal(err)
	}
	if n := countPrefix(t, cli, "/memfs/chunks/c/"); n != 6 {
		t.Errorf("two equal values in %d chunks, want 6", n)
	}
	// Made small again, the value is inline.
	if err := st.Save(t.Context(), entry("big.bin", []byte("small"))); err != nil {
		t.Fatal(err)
	}
	if got := loadValue(t, st, "big.bin"); string(got) != "small" {
		t.Fatalf("after shrinking: %q", got)
	}
}

func TestDamagedRecord(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "dmg")
	cli := raw(t, srv)
	if err := st.Save(t.Context(), entry("a", []byte("a")), entry("c", []byte("c"))); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(t.Context(), "/memfs/dmg/m/b", "\x00garbage{"); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, st); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("List with b damaged = %q, want a and c", got)
	}
	if got := st.Damaged(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("Damaged = %q, want [b]", got)
	}
	if got := loadValue(t, st, "c"); string(got) != "c" {
		t.Errorf("c = %q", got)
	}
	_, err := st.Load(t.Context(), "a", "b")
	if !errors.Is(err, backend.ErrCorrupt) || !strings.Contains(err.Error(), `b`) {
		t.Errorf("Load of a damaged record = %v, want ErrCorrupt naming b", err)
	}
	// Walk leaves it out too; saving the key again repairs it.
	var walked []string
	if err := st.Walk(t.Context(), func(b []backend.Entry) error {
		for _, e := range b {
			walked = append(walked, e.Key)
		}
		return nil
	}); err != nil || !slices.Equal(walked, []string{"a", "c"}) {
		t.Errorf("Walk = %q, %v; want a and c", walked, err)
	}
	if err := st.Save(t.Context(), entry("b", []byte("b"))); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, st); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("List after saving b again = %q", got)
	}
	if got := st.Damaged(); len(got) != 0 {
		t.Errorf("Damaged after repair = %q, want none", got)
	}
	// A damaged record removed is no longer reported after a listing.
	if _, err := cli.Put(t.Context(), "/memfs/dmg/m/d", "{"); err != nil {
		t.Fatal(err)
	}
	keys(t, st)
	if got := st.Damaged(); !slices.Equal(got, []string{"d"}) {
		t.Errorf("Damaged = %q, want [d]", got)
	}
	if err := st.Delete(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	keys(t, st)
	if got := st.Damaged(); len(got) != 0 {
		t.Errorf("Damaged after deleting d and listing = %q, want none", got)
	}
}

func TestDamagedChunk(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "dchunk")
	cli := raw(t, srv)
	if err := st.Save(t.Context(), entry("big", random(1<<20, 2)), entry("small", []byte("ok"))); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(t.Context(), "/memfs/dchunk/c/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil || len(resp.Kvs) != 2 {
		t.Fatalf("chunks: %v, %v", resp, err)
	}
	first := string(resp.Kvs[0].Key)
	if _, err := cli.Put(t.Context(), first, "flipped"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(t.Context(), "big"); !errors.Is(err, backend.ErrCorrupt) || !strings.Contains(err.Error(), "big") {
		t.Errorf("Load with a damaged chunk = %v, want ErrCorrupt naming big", err)
	}
	if _, err := cli.Delete(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(t.Context(), "big"); !errors.Is(err, backend.ErrCorrupt) {
		t.Errorf("Load with a missing chunk = %v, want ErrCorrupt", err)
	}
	if got := loadValue(t, st, "small"); string(got) != "ok" {
		t.Errorf("small = %q", got)
	}
	// An inline value of the wrong length is damage too.
	if _, err := cli.Put(t.Context(), "/memfs/dchunk/v/small", "longer"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(t.Context(), "small"); !errors.Is(err, backend.ErrCorrupt) {
		t.Errorf("Load of a value of the wrong length = %v, want ErrCorrupt", err)
	}
}

func TestOpenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	start := time.Now()
	st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{addr}, Namespace: "x", DialTimeout: time.Second, RequestTimeout: time.Second})
	took := time.Since(start)
	if err == nil {
		st.Close()
		t.Fatal("Open of an unreachable endpoint succeeded")
	}
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("Open of an unreachable endpoint = %v, want ErrUnavailable", err)
	}
	if took > 4*time.Second {
		t.Errorf("Open took %v to fail, want about DialTimeout+RequestTimeout (2 s)", took)
	}
}

func TestServerDown(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "down", func(c *etcdstore.Config) { c.RequestTimeout = time.Second })
	if err := st.Save(t.Context(), entry("a", []byte("1"))); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	for _, call := range []struct {
		name string
		fn   func() error
	}{
		{"Load", func() error { _, err := st.Load(t.Context(), "a"); return err }},
		{"Save", func() error { return st.Save(t.Context(), entry("b", []byte("2"))) }},
		{"List", func() error { _, err := st.List(t.Context()); return err }},
		{"Apply", func() error {
			_, err := st.Apply(t.Context(), backend.Batch{Saves: []backend.Entry{entry("c", nil)}})
			return err
		}},
	} {
		start := time.Now()
		err := call.fn()
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s with the server down took %v, want about RequestTimeout (1 s)", call.name, took)
		}
		if !errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("%s with the server down = %v, want ErrUnavailable", call.name, err)
		}
	}
	srv.Restart()
	// The client reconnects with a backoff: allow it a few seconds.
	var err error
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool {
		err = st.Save(t.Context(), entry("b", []byte("2")))
		return err == nil
	}) {
		t.Fatalf("Save 10 s after the restart: %v", err)
	}
	if got := keys(t, st); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("after the restart: %q, want a and b", got)
	}
}

// waitKey waits for a change of key on ch; Lost counts when lost is set.
func waitKey(t *testing.T, ch <-chan backend.Change, key string, lost bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("the watch closed before %q was reported", key)
			}
			if c.Key == key || (lost && c.Lost) {
				return
			}
		case <-deadline:
			t.Fatalf("%q not reported within 10 s", key)
		}
	}
}

func TestWatchRestart(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "wr")
	ch, err := st.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(t.Context(), entry("before", []byte("1"))); err != nil {
		t.Fatal(err)
	}
	waitKey(t, ch, "before", false)
	srv.Stop()
	srv.Restart()
	other := open(t, srv, "wr")
	if err := other.Save(t.Context(), entry("after", []byte("2"))); err != nil {
		t.Fatal(err)
	}
	waitKey(t, ch, "after", false)
}

func TestWatchCompacted(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "wc")
	other := open(t, srv, "wc")
	cli := raw(t, srv)
	if _, err := st.List(t.Context()); err != nil { // the watch starts here
		t.Fatal(err)
	}
	for i := range 5 {
		if err := other.Save(t.Context(), entry(fmt.Sprintf("k%d", i), []byte("x"))); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cli.Get(t.Context(), "anything")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(t.Context(), resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	ch, err := st.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-ch:
		if !c.Lost {
			t.Fatalf("first change after a compaction past the watch's start: %+v, want Lost", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no Lost within 10 s of a compaction past the watch's start")
	}
	// It goes on after the loss.
	if err := other.Save(t.Context(), entry("later", []byte("y"))); err != nil {
		t.Fatal(err)
	}
	waitKey(t, ch, "later", false)
}

func TestTwoClientsWatch(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := open(t, srv, "two"), open(t, srv, "two")
	cha, err := a.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	chb, err := b.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Save(t.Context(), entry("from-b", []byte("b"))); err != nil {
		t.Fatal(err)
	}
	waitKey(t, cha, "from-b", false)
	if err := a.Delete(t.Context(), "from-b"); err != nil {
		t.Fatal(err)
	}
	waitKey(t, chb, "from-b", false) // b's own save first, then a's delete
	waitKey(t, chb, "from-b", false)
	if _, err := a.Load(t.Context(), "from-b"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Fatalf("Load after delete: %v, want ErrKeyNotFound", err)
	}
}

func TestApplyTooLarge(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "big")
	cli := raw(t, srv)
	batch := func(n int) backend.Batch {
		var b backend.Batch
		for i := range n {
			b.Saves = append(b.Saves, entry(fmt.Sprintf("k%03d", i), []byte("v")))
		}
		return b
	}
	if _, err := st.Apply(t.Context(), batch(65)); !errors.Is(err, backend.ErrBatchTooLarge) {
		t.Fatalf("Apply of 65 saves (130 operations) = %v, want ErrBatchTooLarge", err)
	}
	if n := countPrefix(t, cli, "/memfs/big/"); n != 0 {
		t.Fatalf("a refused Apply wrote %d etcd keys", n)
	}
	// Values too large together for one request, chunks aside.
	var heavy backend.Batch
	for i := range 20 {
		heavy.Saves = append(heavy.Saves, entry(fmt.Sprintf("h%02d", i), random(60<<10, uint64(i))))
	}
	if _, err := st.Apply(t.Context(), heavy); !errors.Is(err, backend.ErrBatchTooLarge) {
		t.Fatalf("Apply of 1.2 MiB of inline values = %v, want ErrBatchTooLarge", err)
	}
	if n := countPrefix(t, cli, "/memfs/big/"); n != 0 {
		t.Fatalf("a refused Apply wrote %d etcd keys", n)
	}
	// At the limit it works, atomically, and Save splits what Apply
	// refuses.
	if _, err := st.Apply(t.Context(), batch(64)); err != nil {
		t.Fatalf("Apply of 64 saves: %v", err)
	}
	if err := st.Save(t.Context(), batch(500).Saves...); err != nil {
		t.Fatalf("Save of 500: %v", err)
	}
	if err := st.Save(t.Context(), heavy.Saves...); err != nil {
		t.Fatalf("Save of 1.2 MiB of inline values: %v", err)
	}
	if got := len(keys(t, st)); got != 520 {
		t.Fatalf("List = %d keys, want 520", got)
	}
}

func TestSaveIfConflict(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := open(t, srv, "cas"), open(t, srv, "cas")
	es := []backend.Entry{entry("k", []byte("base"))}
	if err := a.Save(t.Context(), es...); err != nil {
		t.Fatal(err)
	}
	base := backend.VersionOf(es[0].Info)
	if base.Rev == 0 {
		t.Fatal("Save did not write the revision into the entry")
	}
	if err := b.Save(t.Context(), entry("k", []byte("theirs"))); err != nil {
		t.Fatal(err)
	}
	// The same size and time: only the revision tells them apart.
	c, err := a.SaveIf(t.Context(), []backend.Entry{entry("k", []byte("ours"))}, []backend.Version{base})
	if err != nil || len(c) != 1 {
		t.Fatalf("SaveIf over another client's write: %v, conflicts %v; want one", c, err)
	}
	if got := loadValue(t, a, c["k"]); string(got) != "theirs" {
		t.Errorf("conflict copy = %q, want theirs", got)
	}
	if got := loadValue(t, a, "k"); string(got) != "ours" {
		t.Errorf("k = %q, want ours", got)
	}
	// FailOnConflict: nothing written, the key named.
	cur, err := a.Load(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Save(t.Context(), entry("k", []byte("theirs again"))); err != nil {
		t.Fatal(err)
	}
	_, err = a.Apply(t.Context(), backend.Batch{
		Saves:          []backend.Entry{entry("k", []byte("ours again")), entry("new", []byte("n"))},
		Deletes:        []string{c["k"]},
		Expect:         map[string]backend.Version{"k": backend.VersionOf(cur[0].Info)},
		ExpectDeleted:  map[string]backend.Version{c["k"]: {Size: 1, MTime: 1}},
		FailOnConflict: true,
	})
	var ce *backend.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 2 || !errors.Is(err, backend.ErrConflict) {
		t.Fatalf("Apply with FailOnConflict over two changed keys = %v, want a ConflictError naming both", err)
	}
	if got := loadValue(t, a, "k"); string(got) != "theirs again" {
		t.Errorf("k = %q after a refused Apply, want theirs again", got)
	}
	if _, err := a.Load(t.Context(), "new"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("a refused Apply wrote new: %v", err)
	}
}

// TestNoLostUpdate races two clients, each saving a key with SaveIf
// expecting the version it last read. Every value either client wrote must
// end up under the key, in a conflict copy, or replaced by a writer that
// had read it: no update lost.
func TestNoLostUpdate(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := open(t, srv, "race"), open(t, srv, "race")
	if err := a.Save(t.Context(), entry("k", []byte("start"))); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex                      // guards seen
	seen := map[string]bool{"start": true} // values a writer read and then replaced without a conflict
	var written []string
	var wg sync.WaitGroup
	for w, st := range []*etcdstore.Store{a, b} {
		wg.Go(func() {
			for i := range 25 {
				got, err := st.Load(context.Background(), "k")
				if err != nil {
					t.Error(err)
					return
				}
				v := fmt.Sprintf("w%d-%d", w, i)
				c, err := st.SaveIf(context.Background(), []backend.Entry{entry("k", []byte(v))}, []backend.Version{backend.VersionOf(got[0].Info)})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				written = append(written, v)
				if len(c) == 0 {
					seen[string(got[0].Value)] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	all, err := a.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, e := range all {
		kept[string(loadValue(t, a, e.Key))] = true
	}
	for _, v := range written {
		if !kept[v] && !seen[v] {
			t.Errorf("%s was lost: not under the key, not in a conflict copy, and no writer read it", v)
		}
	}
}

func TestInvalidKeys(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "inv")
	cli := raw(t, srv)
	for _, k := range []string{"../x", "../../memfs/other/m/x", "a/../b", "/abs", "", "a//b", ".memfs/x"} {
		if err := st.Save(t.Context(), entry(k, []byte("x"))); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Save(%q) = %v, want ErrInvalidKey", k, err)
		}
		if _, err := st.Load(t.Context(), k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Load(%q) = %v, want ErrInvalidKey", k, err)
		}
		if err := st.Delete(t.Context(), k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", k, err)
		}
		if _, err := st.Apply(t.Context(), backend.Batch{Deletes: []string{k}}); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Apply deleting %q = %v, want ErrInvalidKey", k, err)
		}
		if k != ".memfs/x" {
			if err := st.SaveSys(t.Context(), k, []byte("x")); !errors.Is(err, backend.ErrInvalidKey) {
				t.Errorf("SaveSys(%q) = %v, want ErrInvalidKey", k, err)
			}
		}
	}
	resp, err := cli.Get(t.Context(), "", clientv3.WithFromKey(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("refused keys left %d etcd keys", resp.Count)
	}
	for _, ns := range []string{"", "a/b", "..", "."} {
		if _, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: ns}); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Open with namespace %q = %v, want ErrInvalidKey", ns, err)
		}
	}
}

func TestNamespaces(t *testing.T) {
	srv := etcdtest.Start(t)
	a, ab := open(t, srv, "a"), open(t, srv, "ab")
	if err := a.Save(t.Context(), entry("k", []byte("in a"))); err != nil {
		t.Fatal(err)
	}
	if err := ab.Save(t.Context(), entry("k", []byte("in ab")), entry("only-ab", nil)); err != nil {
		t.Fatal(err)
	}
	if err := ab.SaveSys(t.Context(), "rec", []byte("ab's")); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, a); !slices.Equal(got, []string{"k"}) {
		t.Errorf("namespace a lists %q", got)
	}
	if got := loadValue(t, a, "k"); string(got) != "in a" {
		t.Errorf("a's k = %q", got)
	}
	if _, err := a.LoadSys(t.Context(), "rec"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("a sees ab's system record: %v", err)
	}
	if err := a.Delete(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	if got := loadValue(t, ab, "k"); string(got) != "in ab" {
		t.Errorf("ab's k = %q after a deleted its own", got)
	}
}

func TestCollect(t *testing.T) {
	srv := etcdtest.Start(t)
	const grace = 500 * time.Millisecond
	clk := newClock()
	st := open(t, srv, "gc", func(c *etcdstore.Config) { c.ChunkGrace, c.Now = grace, clk.Now })
	cli := raw(t, srv)
	chunks := func() int64 { return countPrefix(t, cli, "/memfs/gc/c/") }
	kept, gone := random(600<<10, 1), random(600<<10, 2) // two chunks each
	sysBig := random(1200<<10, 3)                        // three chunks
	if err := st.Save(t.Context(), entry("kept", kept), entry("gone", gone)); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveSys(t.Context(), "big", sysBig); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(t.Context(), "gone"); err != nil {
		t.Fatal(err)
	}
	if n := chunks(); n != 7 {
		t.Fatalf("%d chunks, want 7", n)
	}
	if c, err := st.Collect(t.Context()); err != nil || c.Removed != 0 || c.Swept || c.Wait != grace {
		t.Fatalf("first Collect = %+v, %v; want nothing removed, not swept (it only leaves its mark), Wait %v", c, err, grace)
	}
	if c, err := st.Collect(t.Context()); err != nil || c.Removed != 0 || c.Swept {
		t.Fatalf("Collect within the grace = %+v, %v; want nothing", c, err)
	}
	// A value written after the mark is spared, even unreferenced.
	late := random(100<<10, 4)
	if err := st.Save(t.Context(), entry("late", late)); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(t.Context(), "late"); err != nil {
		t.Fatal(err)
	}
	clk.advance(grace)
	if c, err := st.Collect(t.Context()); err != nil || c.Removed != 2 || !c.Swept {
		t.Fatalf("Collect after the grace = %+v, %v; want the 2 chunks of the deleted value", c, err)
	}
	if got := loadValue(t, st, "kept"); !bytes.Equal(got, kept) {
		t.Error("the kept value changed")
	}
	if got, err := st.LoadSys(t.Context(), "big"); err != nil || !bytes.Equal(got, sysBig) {
		t.Errorf("the big system record after a collection: %d bytes, %v", len(got), err)
	}
	clk.advance(grace)
	if c, err := st.Collect(t.Context()); err != nil || c.Removed != 1 {
		t.Fatalf("the next Collect = %+v, %v; want the chunk written after the first mark", c, err)
	}
	if n := chunks(); n != 5 {
		t.Errorf("%d chunks left, want 5 (kept's 2, the system record's 3)", n)
	}
}

// TestCollectDamagedRecord: a record that does not decode may name any
// chunk (fsck moves it aside, the bytes of its chunk list still there), so
// a collection removes nothing while one is in the namespace.
func TestCollectDamagedRecord(t *testing.T) {
	srv := etcdtest.Start(t)
	const grace = 200 * time.Millisecond
	clk := newClock()
	st := open(t, srv, "gcdmg", func(c *etcdstore.Config) { c.ChunkGrace, c.Now = grace, clk.Now })
	cli := raw(t, srv)
	big := random(600<<10, 5)
	if err := st.Save(t.Context(), entry("big", big)); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(t.Context(), "/memfs/gcdmg/m/big")
	if err != nil {
		t.Fatal(err)
	}
	// One byte lost at the end: the chunk names are all still in it.
	rec := resp.Kvs[0].Value
	if _, err := cli.Put(t.Context(), "/memfs/gcdmg/m/big", string(rec[:len(rec)-1])); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Collect(t.Context()); err != nil {
		t.Fatal(err)
	}
	clk.advance(grace)
	c, err := st.Collect(t.Context())
	if c.Removed != 0 {
		t.Errorf("Collect with a damaged record removed %d chunks (err %v); want none", c.Removed, err)
	}
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("Collect with a damaged record: err %v, want one that says a record is damaged", err)
	}
	if n := countPrefix(t, cli, "/memfs/gcdmg/c/"); n != 2 {
		t.Errorf("%d chunks left, want the damaged record's 2", n)
	}
}

func TestPresence(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := open(t, srv, "pr"), open(t, srv, "pr")
	cli := raw(t, srv)
	leaveA, err := a.Register(t.Context(), backend.Peer{Agent: "planner", Host: "h1", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Register(t.Context(), backend.Peer{Agent: "coder", Host: "h2", PID: 2}); err != nil {
		t.Fatal(err)
	}
	peers := func() []backend.Peer {
		t.Helper()
		p, err := a.Peers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := peers()
	if len(p) != 2 || p[0].ID == "" || p[0].Since.IsZero() || !slices.IsSortedFunc(p, func(x, y backend.Peer) int { return strings.Compare(x.ID, y.ID) }) {
		t.Fatalf("Peers = %+v, want two, with IDs and times, sorted", p)
	}
	// A lost lease (revoked here; expired after an outage) is replaced
	// and the registration put back.
	resp, err := cli.Get(t.Context(), "/memfs/pr/p/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Value), "planner") {
			if _, err := cli.Revoke(t.Context(), clientv3.LeaseID(kv.Lease)); err != nil {
				t.Fatal(err)
			}
		}
	}
	await.True(t, "both peers back after the lease was revoked", 10*time.Second, func() bool { return len(peers()) == 2 })
	leaveA()
	if p := peers(); len(p) != 1 || p[0].Agent != "coder" {
		t.Fatalf("after leave: %+v, want coder only", p)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if p := peers(); len(p) != 0 {
		t.Fatalf("after Close: %+v, want none", p)
	}
}

func TestSwapSys(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "swap")
	ctx := t.Context()
	big := random(3<<20, 5)
	ok, err := st.SwapSys(ctx, "head", nil, map[string][]byte{"head": []byte("1"), "log/1": big}, nil)
	if err != nil || !ok {
		t.Fatalf("SwapSys on an absent guard: %v, %v", ok, err)
	}
	if ok, err := st.SwapSys(ctx, "head", nil, map[string][]byte{"head": []byte("x")}, nil); err != nil || ok {
		t.Fatalf("SwapSys expecting absent over a present guard: %v, %v; want false", ok, err)
	}
	if ok, err := st.SwapSys(ctx, "head", []byte("2"), map[string][]byte{"head": []byte("x")}, nil); err != nil || ok {
		t.Fatalf("SwapSys with a stale guard: %v, %v; want false", ok, err)
	}
	if ok, err := st.SwapSys(ctx, "head", []byte("1"), map[string][]byte{"head": big}, []string{"log/1"}); err != nil || !ok {
		t.Fatalf("SwapSys with the guard's value: %v, %v", ok, err)
	}
	// A chunked guard compares too.
	if ok, err := st.SwapSys(ctx, "head", big, map[string][]byte{"head": []byte("3")}, nil); err != nil || !ok {
		t.Fatalf("SwapSys with a big guard's value: %v, %v", ok, err)
	}
	if got, err := st.LoadSys(ctx, "head"); err != nil || string(got) != "3" {
		t.Fatalf("head = %q, %v", got, err)
	}
	if _, err := st.LoadSys(ctx, "log/1"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Fatalf("log/1 after its delete: %v", err)
	}
}

func TestCluster(t *testing.T) {
	c := etcdtest.StartCluster(t, 3)
	cfg, err := etcdstore.ParseURL(c.URL("cl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RequestTimeout = 3 * time.Second
	st, err := etcdstore.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Save(t.Context(), entry("a", []byte("1"))); err != nil {
		t.Fatal(err)
	}
	c.Kill(0)
	// The cluster may elect a new leader: retry for a few seconds.
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := st.Save(t.Context(), entry("b", []byte("2")))
		if err == nil {
			break
		}
		if !errors.Is(err, backend.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Save with one member of three down: %v", err)
		}
	}
	if got := keys(t, st); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("List = %q", got)
	}
}

func TestClosed(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "closed")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := st.List(t.Context()); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("List after Close = %v, want fs.ErrClosed", err)
	}
	if err := st.Save(t.Context(), entry("a", nil)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Save after Close = %v, want fs.ErrClosed", err)
	}
}

// TestWalkError: fn's error comes back as it is, from the last batch too.
func TestWalkError(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "walk")
	if err := st.Save(t.Context(), entry("a", []byte("a"))); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := st.Walk(t.Context(), func([]backend.Entry) error { return stop }); err != stop {
		t.Fatalf("Walk = %v, want fn's error as it is", err)
	}
}

// TestConditionalChunked: Apply and SaveIf with values over 64 KiB (in
// chunks, written before the transaction); a conflict copy of a chunked
// value names the same chunks and loads whole; SaveIf of more entries than
// one transaction holds.
func TestConditionalChunked(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "cc")
	ctx := t.Context()
	theirs, ours := random(700<<10, 1), random(300<<10, 2)
	es := []backend.Entry{entry("big", theirs)}
	if err := st.Save(ctx, es...); err != nil {
		t.Fatal(err)
	}
	stale := backend.VersionOf(es[0].Info)
	stale.Rev--
	c, err := st.Apply(ctx, backend.Batch{Saves: []backend.Entry{entry("big", ours)}, Expect: map[string]backend.Version{"big": stale}})
	if err != nil || len(c) != 1 {
		t.Fatalf("Apply expecting a stale version of a chunked value: %v, conflicts %v", err, c)
	}
	if got := loadValue(t, st, c["big"]); !bytes.Equal(got, theirs) {
		t.Errorf("the conflict copy of a chunked value: %d bytes, want the %d found", len(got), len(theirs))
	}
	if got := loadValue(t, st, "big"); !bytes.Equal(got, ours) {
		t.Errorf("big: %d bytes, want the %d saved", len(got), len(ours))
	}

	var many []backend.Entry
	var expect []backend.Version
	for i := range 100 {
		many = append(many, entry(fmt.Sprintf("m/%03d", i), random(2<<10, uint64(i))))
		expect = append(expect, backend.Version{})
	}
	many = append(many, entry("m/big", random(200<<10, 9)))
	expect = append(expect, backend.Version{})
	if c, err := st.SaveIf(ctx, many, expect); err != nil || len(c) != 0 {
		t.Fatalf("SaveIf of 101 new keys: %v, conflicts %v", err, c)
	}
	if c, err := st.SaveIf(ctx, many, expect); err != nil || len(c) != len(many) {
		t.Fatalf("SaveIf of 101 keys expecting them absent: %v, %d conflicts; want %d", err, len(c), len(many))
	}
	for _, e := range many {
		if e.Info.Rev == 0 {
			t.Fatalf("SaveIf left Rev 0 in %s", e.Key)
		}
	}
	if got := len(keys(t, st)); got != 2+2*len(many) {
		t.Errorf("%d keys, want %d (big, its copy, 101 keys and their copies)", got, 2+2*len(many))
	}
}

// TestCloseEndsGoroutines: Close ends the watches and the presence
// keep-alive, and the client's own goroutines with them.
func TestCloseEndsGoroutines(t *testing.T) {
	srv := etcdtest.Start(t)
	before := runtime.NumGoroutine()
	st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "leak"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := st.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Register(context.Background(), backend.Peer{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-ch; ok {
		t.Fatal("a change after Close, want the channel closed")
	}
	if !await.Cond(5*time.Second, 20*time.Millisecond, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines 5 s after Close, %d before Open:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}

// Stat reports what Load reports of a key, without its value: the same
// Info, revision included; a missing key, a damaged record and an invalid
// key each give their error.
func TestStat(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "stat")
	big := random(3<<20, 7)
	if err := st.Save(t.Context(), entry("a", []byte("a")), entry("big", big)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "big"} {
		got, err := st.Stat(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := st.Load(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		want := loaded[0].Info
		if got.Size != want.Size || !got.MTime.Equal(want.MTime) || got.Mode != want.Mode || got.Rev != want.Rev || got.Rev == 0 {
			t.Errorf("Stat(%s) = %+v, Load's Info %+v", k, got, want)
		}
	}
	if _, err := st.Stat(t.Context(), "missing"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("Stat of a missing key = %v, want ErrKeyNotFound", err)
	}
	if _, err := raw(t, srv).Put(t.Context(), "/memfs/stat/m/bad", "{"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(t.Context(), "bad"); !errors.Is(err, backend.ErrCorrupt) {
		t.Errorf("Stat of a damaged record = %v, want ErrCorrupt", err)
	}
	if _, err := st.Stat(t.Context(), "../x"); !errors.Is(err, backend.ErrInvalidKey) {
		t.Errorf("Stat of ../x = %v, want ErrInvalidKey", err)
	}
}

// TestLead: one of two clients of a namespace is the collector at a time;
// when it resigns, the other is elected; a leader's context ends when its
// store closes.
func TestLead(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := open(t, srv, "lead"), open(t, srv, "lead")
	leadA, resignA, err := a.Lead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type elected struct {
		lead   context.Context
		resign func()
		err    error
	}
	ch := make(chan elected, 1)
	go func() {
		l, r, err := b.Lead(t.Context())
		ch <- elected{l, r, err}
	}()
	// b campaigns: it must not be elected while a leads. Its campaign's
	// key is there once it waits.
	cli := raw(t, srv)
	await.True(t, "b's campaign key", 10*time.Second, func() bool { return countPrefix(t, cli, "/memfs/lead/g/lead/") >= 2 })
	select {
	case e := <-ch:
		t.Fatalf("b elected while a leads: %v", e.err)
	default:
	}
	resignA()
	<-leadA.Done()
	var e elected
	select {
	case e = <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("b not elected 10 s after a resigned")
	}
	if e.err != nil {
		t.Fatal(e.err)
	}
	defer e.resign()
	b.Close()
	select {
	case <-e.lead.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("b's lead did not end 10 s after its store closed")
	}
}

// TestLeadEtcdDown: a campaign while etcd does not answer ends when its
// context does (an unmount must not wait for etcd).
func TestLeadEtcdDown(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "leaddown")
	srv.Kill()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := st.Lead(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("elected with etcd down")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lead still campaigning 10 s after its context ended, with etcd down")
	}
}
