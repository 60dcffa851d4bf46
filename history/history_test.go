package history_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
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
	srv := etcdtest.Start(t)
	n := 0
	opens := []struct {
		name string
		open func(t *testing.T) backend.SysStore
	}{
		{"memstore", func(t *testing.T) backend.SysStore { return memstore.New() }},
		{"badger", func(t *testing.T) backend.SysStore {
			s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"dir", func(t *testing.T) backend.SysStore {
			s, err := dirstore.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"etcd", func(t *testing.T) backend.SysStore {
			n++
			return openEtcd(t, srv, fmt.Sprintf("hist%d", n))
		}},
	}
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

func openEtcd(t *testing.T, srv *etcdtest.Server, ns string) *etcdstore.Store {
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
