package history_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/internal/etcdtest"
)

// eachStore runs fn on a fresh store of each kind: memstore, badger, dir
// and etcd (a namespace of one server the test starts; MEMFS_REQUIRE_ETCD=1
// makes a missing etcd fail the test).
func eachStore(t *testing.T, fn func(t *testing.T, s backend.SysStore)) {
	t.Helper()
	opens := storeKinds(etcdtest.Start(t))
	for _, o := range opens {
		t.Run(o.name, func(t *testing.T) {
			s := o.open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			fn(t, s)
		})
	}
}

// storeKind opens a fresh store of one kind.
type storeKind struct {
	name string
	open func(tb testing.TB) backend.SysStore
}

// storeKinds are memstore, badger, dir, and etcd namespaces of srv.
func storeKinds(srv *etcdtest.Server) []storeKind {
	n := 0
	return []storeKind{
		{"memstore", func(testing.TB) backend.SysStore { return memstore.New() }},
		{"badger", func(tb testing.TB) backend.SysStore {
			s, err := badgerstore.Open(tb.TempDir(), badgerstore.Options{})
			if err != nil {
				tb.Fatal(err)
			}
			return s
		}},
		{"dir", func(tb testing.TB) backend.SysStore {
			s, err := dirstore.Open(tb.TempDir())
			if err != nil {
				tb.Fatal(err)
			}
			return s
		}},
		{"etcd", func(tb testing.TB) backend.SysStore {
			n++
			return openEtcd(tb, srv, fmt.Sprintf("hist%d", n))
		}},
	}
}

func openEtcd(t testing.TB, srv *etcdtest.Server, ns string) *etcdstore.Store {
	t.Helper()
	s, err := etcdstore.Open(context.Background(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: ns})
	if err != nil {
		t.Fatalf("open etcd namespace %s: %v", ns, err)
	}
	return s
}

// historyBytes is what the store holds under history/: the sum of its
// records' sizes, as the store lists them.
func historyBytes(t *testing.T, s backend.SysStore) (int64, int) {
	t.Helper()
	ents, err := s.ListSys(t.Context(), "history/")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		n += e.Info.Size
	}
	return n, len(ents)
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// Values of every size class read back byte for byte at their SHA-256;
// storing one again writes nothing.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := []byte(strings.Repeat("a line of a markdown note, with words in it\n", 2400)) // ~100 KiB
	values := map[string][]byte{
		"empty":       {},
		"one byte":    {'x'},
		"under whole": randomBytes(r, history.Whole-1),
		"whole":       randomBytes(r, history.Whole),
		"text":        text,
		"3 MiB":       randomBytes(r, 3<<20),
	}
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		for name, v := range values {
			a, n, err := h.Put(t.Context(), v)
			if err != nil {
				t.Fatalf("%s: Put: %v", name, err)
			}
			if a != history.AddrOf(v) || n < int64(len(v))/2 {
				t.Fatalf("%s: Put gave %s and %d bytes written; want %s and about %d", name, a, n, history.AddrOf(v), len(v))
			}
			got, err := h.Get(t.Context(), a)
			if err != nil {
				t.Fatalf("%s: Get: %v", name, err)
			}
			if !bytes.Equal(got, v) {
				t.Fatalf("%s: Get gave %d bytes, not the %d put", name, len(got), len(v))
			}
			if _, n, err := h.Put(t.Context(), v); err != nil || n != 0 {
				t.Fatalf("%s: second Put wrote %d bytes (err %v), want 0", name, n, err)
			}
		}
		_, err := h.Get(t.Context(), history.AddrOf([]byte("never stored")))
		if !errors.Is(err, backend.ErrKeyNotFound) {
			t.Fatalf("Get of a value never stored: got %v, want ErrKeyNotFound", err)
		}
	})
}

// jsonLines returns n lines of about 100 bytes, as an agent appends them
// to memory/summaries.jsonl.
func jsonLines(n int) [][]byte {
	r := rand.New(rand.NewPCG(7, 29))
	words := strings.Fields("the agent saw a test fail then fixed the flush path and wrote notes about etcd badger chunks versions history")
	out := make([][]byte, n)
	for i := range out {
		var b strings.Builder
		for b.Len() < 60 {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		out[i] = fmt.Appendf(nil, `{"ts":%d,"seq":%d,"kind":"obs","text":%q}`+"\n", 1764300000+i, i, strings.TrimSpace(b.String()))
	}
	return out
}

// The target: 10,000 appends of ~100 B to one file, a version
// every 100 appends. What history adds to the store (objects, manifests,
// version and group records, as the store lists them) is at most 3x the
// final file, where a whole copy per version costs ~50x.
func TestAppendDedup(t *testing.T) {
	lines := jsonLines(10000)
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		var file []byte
		var copies int64
		for i, l := range lines {
			file = append(file, l...)
			if (i+1)%100 != 0 {
				continue
			}
			p := h.PlanValue(file)
			missing, err := h.Missing(t.Context(), p.Records)
			if err != nil {
				t.Fatal(err)
			}
			e := backend.Entry{Key: "memory/summaries.jsonl", Info: backend.Info{Mode: 0o644}, Value: file}
			vrecs, err := h.PlanVersions([]history.Version{history.NewVersion(uint64(i/100+1), history.OpWrite, &e, p.Addr)})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Write(t.Context(), append(missing, vrecs...)); err != nil {
				t.Fatal(err)
			}
			copies += int64(len(file))
		}
		added, records := historyBytes(t, s)
		ratio := float64(added) / float64(len(file))
		t.Logf("final file %d B; history %d B in %d records = %.2fx the final size (a whole copy per version: %.1fx)",
			len(file), added, records, ratio, float64(copies)/float64(len(file)))
		if added > 3*int64(len(file)) {
			t.Fatalf("history added %d bytes for a %d-byte file (%.2fx), want at most 3x", added, len(file), ratio)
		}
		vs, err := h.Versions(t.Context(), "memory/summaries.jsonl")
		if err != nil || len(vs) != 100 {
			t.Fatalf("Versions: %d versions, err %v; want 100", len(vs), err)
		}
		got, err := h.Get(t.Context(), vs[49].Addr)
		if err != nil || int64(len(got)) != vs[49].Size || history.AddrOf(got) != vs[49].Addr {
			t.Fatalf("version 50: %d bytes, err %v; want %d bytes at its address", len(got), err, vs[49].Size)
		}
	})
}

// objects returns the object records of the value v as PlanValue names
// them (the manifest last for a chunked one).
func planned(t *testing.T, h *history.Store, v []byte) []history.Record {
	t.Helper()
	return h.PlanValue(v).Records
}

// A damaged, missing or misnamed record is an error that names it and
// satisfies errors.Is(err, backend.ErrCorrupt); Copy has written the
// chunks before it, never a byte of it. A Put of the same value keeps the
// damaged copy aside and writes the right bytes back.
func TestDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	big := randomBytes(r, 200<<10)
	small := []byte("a small note\n")
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		ctx := t.Context()
		for _, v := range [][]byte{big, small} {
			if _, _, err := h.Put(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		recs := planned(t, h, big)
		if len(recs) < 4 {
			t.Fatalf("a 200 KiB value in %d records, want chunks and a manifest", len(recs))
		}
		second := recs[1]
		flipped := bytes.Clone(second.Data)
		flipped[len(flipped)/2] ^= 1
		mustSave(t, s, second.Name, flipped)
		var out bytes.Buffer
		n, err := h.Copy(ctx, &out, history.AddrOf(big))
		wantCorrupt(t, err, second.Name)
		if n != int64(len(recs[0].Data)) || !bytes.Equal(out.Bytes(), big[:n]) {
			t.Fatalf("Copy wrote %d bytes before the damaged chunk, want the first chunk's %d", n, len(recs[0].Data))
		}
		if got, err := h.Get(ctx, history.AddrOf(big)); got != nil || err == nil {
			t.Fatalf("Get of a damaged value gave %d bytes, err %v; want none and an error", len(got), err)
		}

		// Put again: the damaged bytes go aside, the right ones back.
		if _, _, err := h.Put(ctx, big); err != nil {
			t.Fatal(err)
		}
		if got, err := h.Get(ctx, history.AddrOf(big)); err != nil || !bytes.Equal(got, big) {
			t.Fatalf("Get after a Put repaired it: %d bytes, err %v", len(got), err)
		}
		aside, err := s.ListSys(ctx, "history/damaged/")
		if err != nil || len(aside) != 1 || aside[0].Info.Size != int64(len(flipped)) {
			t.Fatalf("records kept aside: %v (err %v), want the one damaged chunk", aside, err)
		}

		// A chunk the store lost.
		third := recs[2]
		if err := s.DeleteSys(ctx, third.Name); err != nil {
			t.Fatal(err)
		}
		_, err = h.Get(ctx, history.AddrOf(big))
		wantCorrupt(t, err, third.Name)

		// A manifest cut short.
		man := recs[len(recs)-1]
		mustSave(t, s, man.Name, man.Data[:len(man.Data)-7])
		_, err = h.Get(ctx, history.AddrOf(big))
		wantCorrupt(t, err, man.Name)

		// A small value's one object.
		obj := planned(t, h, small)[0]
		mustSave(t, s, obj.Name, []byte("a small nope\n"))
		got, err := h.Get(ctx, history.AddrOf(small))
		wantCorrupt(t, err, obj.Name)
		if got != nil {
			t.Fatalf("Get of a damaged small value gave %q", got)
		}
	})
}

func mustSave(t *testing.T, s backend.SysStore, name string, data []byte) {
	t.Helper()
	if err := s.SaveSys(t.Context(), name, data); err != nil {
		t.Fatal(err)
	}
}

func wantCorrupt(t *testing.T, err error, name string) {
	t.Helper()
	if !errors.Is(err, backend.ErrCorrupt) || !strings.Contains(err.Error(), name) {
		t.Fatalf("got %v; want an error naming %s that satisfies errors.Is(err, backend.ErrCorrupt)", err, name)
	}
}

// entry is a regular file key with value v.
func entry(key string, v string, mode uint32) *backend.Entry {
	return &backend.Entry{Key: key, Value: []byte(v), Info: backend.Info{Mode: fs.FileMode(mode), UID: 1000, GID: 1000,
		XAttrs: map[string][]byte{"user.memfs.tags": []byte("t"), "user.other": []byte("not kept")}}}
}

// A key's versions: kept after a delete, followed back through a rename,
// each with its predecessor; the namespace as of every seq.
func TestVersions(t *testing.T) {
	long := strings.Repeat("d/", 1500) + strings.Repeat("n", 200) // a 3,200-byte key
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		ctx := t.Context()
		put := func(v string) history.Addr {
			a, _, err := h.Put(ctx, []byte(v))
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		ver := func(seq uint64, op, key, v string) history.Version {
			x := history.NewVersion(seq, op, entry(key, v, 0o644), put(v))
			if op == history.OpDelete {
				x = history.Version{Seq: seq, Op: op, Key: key}
			}
			return x
		}
		ren := ver(3, history.OpRename, "b", "one more")
		ren.OldKey = "a"
		// Two appends, as two flushes would make them.
		appends := [][]history.Version{
			{ver(1, history.OpWrite, "a", "one"), ver(2, history.OpWrite, "a", "one more"), ren},
			{ver(4, history.OpWrite, "b", "two"), ver(5, history.OpDelete, "b", ""), ver(6, history.OpWrite, "b", "new b"),
				ver(7, history.OpWrite, long, "deep"), ver(8, history.OpWrite, "c", "c")},
		}
		for _, vs := range appends {
			recs, err := h.PlanVersions(vs)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Write(ctx, recs); err != nil {
				t.Fatal(err)
			}
		}
		vs, err := h.Versions(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"1 write a prev 0 ", "2 write a prev 1 a", "3 rename b prev 2 a", "4 write b prev 3 b", "5 delete b prev 4 b", "6 write b prev 5 b"}
		if got := describe(vs); !slices.Equal(got, want) {
			t.Fatalf("Versions(b):\n got %q\nwant %q", got, want)
		}
		if v := vs[1]; string(v.XAttrs["user.memfs.tags"]) != "t" || v.XAttrs["user.other"] != nil || v.Mode != 0o644 || v.UID != 1000 || v.Size != 8 {
			t.Fatalf("version 2: %+v; want mode 0644, uid 1000, size 8, only the user.memfs.* attribute", v)
		}
		if got, err := h.Get(ctx, vs[0].Addr); err != nil || string(got) != "one" {
			t.Fatalf("value of version 1: %q, %v", got, err)
		}
		if vs, err := h.Versions(ctx, long); err != nil || len(vs) != 1 || vs[0].Key != long {
			t.Fatalf("Versions of a %d-byte key: %d, err %v", len(long), len(vs), err)
		}
		checkAt(t, h)
		// The same from indexes: one inside the second append's
		// group, one at a delete, one at the end.
		for _, seq := range []uint64{4, 5, 8} {
			if _, err := h.Index(ctx, seq); err != nil {
				t.Fatal(err)
			}
			checkAt(t, h)
		}
	})
}

// checkAt checks At at every seq of TestVersions' history.
func checkAt(t *testing.T, h *history.Store) {
	t.Helper()
	ats := map[uint64][]string{
		0: nil, 1: {"a@1"}, 2: {"a@2"}, 3: {"b@3"}, 4: {"b@4"}, 5: nil, 6: {"b@6"},
		7: {"b@6", "d/...@7"}, 8: {"b@6", "c@8", "d/...@7"}, 100: {"b@6", "c@8", "d/...@7"},
	}
	for seq, want := range ats {
		ns, err := h.At(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range ns {
			k := v.Key
			if len(k) > 10 {
				k = k[:2] + "..."
			}
			got = append(got, fmt.Sprintf("%s@%d", k, v.Seq))
		}
		if !slices.Equal(got, want) {
			t.Errorf("At(%d): got %v, want %v", seq, got, want)
		}
	}
}

// An index of a 2,000-key namespace after 5 of its keys changed adds
// the chunks around those keys, not the namespace again; At from it is
// the namespace.
func TestIndexDedup(t *testing.T) {
	s := memstore.New()
	h := history.New(s)
	ctx := t.Context()
	var vs []history.Version
	for i := range 2000 {
		vs = append(vs, history.NewVersion(uint64(i+1), history.OpWrite, entry(fmt.Sprintf("memory/note-%04d.md", i), "x", 0o644), history.AddrOf([]byte{byte(i)})))
	}
	recs, err := h.PlanVersions(vs)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Index(ctx, 2000); err != nil {
		t.Fatal(err)
	}
	var more []history.Version
	for i, k := range []int{3, 500, 1001, 1500, 1999} {
		more = append(more, history.NewVersion(uint64(2001+i), history.OpWrite, entry(fmt.Sprintf("memory/note-%04d.md", k), "y", 0o600), history.AddrOf([]byte("y"))))
	}
	recs, err = h.PlanVersions(more)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	versions, _ := historyBytes(t, s)
	a, err := h.Index(ctx, 2005)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := historyBytes(t, s)
	tree, err := h.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	added := after - versions
	t.Logf("index of %d keys: %d B; the next one, 5 keys later, added %d B", 2000, len(tree), added)
	if added > int64(len(tree))/5 {
		t.Fatalf("an index 5 changes later added %d bytes, over a fifth of the %d-byte namespace", added, len(tree))
	}
	// At starts from the index: the first append's group is not read.
	if err := s.DeleteSys(ctx, "history/s/00000000000000000001"); err != nil {
		t.Fatal(err)
	}
	ns, err := h.At(ctx, 2005)
	if err != nil || len(ns) != 2000 || ns[500].Seq != 2002 || ns[500].Mode != 0o600 || ns[501].Seq != 502 {
		t.Fatalf("At(2005): %d keys, err %v; want 2000 with note-0500 at 2002", len(ns), err)
	}
}

func describe(vs []history.Version) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%d %s %s prev %d %s", v.Seq, v.Op, v.Key, v.Prev, v.PrevKey))
	}
	return out
}

// PlanVersions refuses what would make a wrong record.
func TestPlanVersionsRefuses(t *testing.T) {
	h := history.New(memstore.New())
	e := entry("a", "x", 0o644)
	bad := map[string][]history.Version{
		"seq 0":                  {history.NewVersion(0, history.OpWrite, e, history.Addr{})},
		"unknown op":             {history.NewVersion(1, "truncate", e, history.Addr{})},
		"seqs not rising":        {history.NewVersion(2, history.OpWrite, e, history.Addr{}), history.NewVersion(2, history.OpWrite, e, history.Addr{})},
		"rename without old key": {history.NewVersion(1, history.OpRename, e, history.Addr{})},
		"invalid key":            {{Seq: 1, Op: history.OpWrite, Key: "../x"}},
	}
	for name, vs := range bad {
		if recs, err := h.PlanVersions(vs); err == nil {
			t.Errorf("%s: PlanVersions gave %d records, want an error", name, len(recs))
		}
	}
}

// A large value (beyond one record of every store, and one etcd request)
// reads back whole on every store, and costs its size.
func TestLargeValue(t *testing.T) {
	v := randomBytes(rand.New(rand.NewPCG(5, 6)), 8<<20)
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		a, n, err := h.Put(t.Context(), v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Get(t.Context(), a)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("Get of 8 MiB: %d bytes, err %v", len(got), err)
		}
		if held, _ := historyBytes(t, s); n != held || held > int64(len(v))+int64(len(v))/100 {
			t.Fatalf("Put wrote %d bytes, the store holds %d, for a value of %d: want the same, within 1%%", n, held, len(v))
		}
	})
}

// Two mounts of one etcd namespace store the same values at once: both
// succeed, each reads every value back, and the namespace holds each
// object once (the records the plan names, no more).
func TestEtcdTwoWriters(t *testing.T) {
	srv := etcdtest.Start(t)
	var hs [2]*history.Store
	for i := range hs {
		s := openEtcd(t, srv, "twowriters")
		t.Cleanup(func() { s.Close() })
		hs[i] = history.New(s)
	}
	r := rand.New(rand.NewPCG(8, 9))
	base := randomBytes(r, 1<<20)
	want := map[string]bool{}
	var values [][]byte
	for round := range 10 {
		v := append(bytes.Clone(base[:len(base)-round*1000]), randomBytes(r, 500)...)
		values = append(values, v)
		for _, rec := range hs[0].PlanValue(v).Records {
			want[rec.Name] = true
		}
		var wg sync.WaitGroup
		var errs [2]error
		start := make(chan struct{})
		for i, h := range hs {
			wg.Go(func() {
				<-start
				_, _, errs[i] = h.Put(t.Context(), v)
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs[:]...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	for i, h := range hs {
		for j, v := range values {
			got, err := h.Get(t.Context(), history.AddrOf(v))
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("writer %d, value %d: %d bytes, err %v", i, j, len(got), err)
			}
		}
	}
	s := openEtcd(t, srv, "twowriters")
	defer s.Close()
	ents, err := s.ListSys(t.Context(), "history/")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !want[e.Key] {
			t.Errorf("the namespace holds %s, which no plan names", e.Key)
		}
		delete(want, e.Key)
	}
	for n := range want {
		t.Errorf("the namespace lacks %s", n)
	}
}
