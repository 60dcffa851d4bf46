package extwatch_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/session"
)

// The two-writer model test (issue 26, "Done when"; a start): two
// sessions over one etcd namespace, each following the other, make random
// content and metadata changes (writes, chmod, setxattr, removal, a name
// removed and made again) with random flushes. Afterwards, both flushed,
// both views and a fresh session's must be equal. MEMFS_TWO_WRITER_SEED
// sets the seed (default: the clock, printed); MEMFS_TWO_WRITER_OPS the
// operations (default 200).
func TestTwoWriterModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("MEMFS_TWO_WRITER_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		must(t, err)
		seed = n
	}
	ops := 200
	if v := os.Getenv("MEMFS_TWO_WRITER_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		must(t, err)
		ops = n
	}
	t.Logf("seed %d (rerun with MEMFS_TWO_WRITER_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	srv := etcdtest.Start(t)
	open := func() *etcdstore.Store {
		st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "model"})
		must(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	start := func(st *etcdstore.Store, agent string) *session.Context {
		c, err := session.New(st, session.Options{OnConflict: session.KeepBoth, Agent: agent})
		must(t, err)
		must(t, c.Bootstrap(t.Context(), ""))
		w, err := extwatch.Start(st, c, extwatch.Options{Debounce: 10 * time.Millisecond})
		must(t, err)
		t.Cleanup(func() { w.Close() })
		return c
	}
	sides := []*session.Context{start(open(), "a"), start(open(), "b")}
	names := []string{"n1.md", "n2.md", "n3.md"}
	for i := range ops {
		c := sides[rng.IntN(2)]
		k := names[rng.IntN(len(names))]
		var err error
		switch op := rng.IntN(6); {
		case op <= 1 || !c.Has(k):
			err = c.Set(k, []byte(fmt.Sprintf("op %d\n", i)))
		case op == 2:
			mode := fs.FileMode([]int{0o600, 0o640, 0o644}[rng.IntN(3)])
			_, err = c.SetAttr(t.Context(), k, session.Attr{Mode: &mode})
		case op == 3:
			err = c.SetXAttr(t.Context(), k, "user.memfs.tags", []byte(fmt.Sprintf("t%d", i)), 0)
		case op == 4:
			err = c.Delete(k)
		default:
			if err = c.Delete(k); err == nil {
				err = c.Set(k, []byte(fmt.Sprintf("again %d\n", i)))
			}
		}
		if err != nil {
			t.Fatalf("op %d on %s: %v", i, k, err)
		}
		if rng.IntN(3) == 0 {
			must(t, c.Flush(t.Context()))
		}
	}
	view := func(c *session.Context) string {
		var out []string
		for _, k := range c.Keys() {
			if err := c.Resolve(t.Context(), k); err != nil {
				return err.Error()
			}
			st, _ := c.Stat(k)
			v, _ := c.Get(k)
			tag, _ := c.GetXAttr(k, "user.memfs.tags")
			out = append(out, fmt.Sprintf("%s %v %q %q", k, st.Mode, v, tag))
		}
		slices.Sort(out)
		return fmt.Sprint(out)
	}
	var va, vb string
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, c := range sides {
			must(t, c.Flush(t.Context()))
		}
		va, vb = view(sides[0]), view(sides[1])
		if va == vb {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("seed %d: the views differ after both flushed:\nA: %s\nB: %s", seed, va, vb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	fresh := session.NewContext(open(), session.Options{})
	must(t, fresh.Bootstrap(t.Context(), ""))
	if vf := view(fresh); vf != va {
		t.Fatalf("seed %d: a fresh session differs:\nfresh: %s\nA:     %s", seed, vf, va)
	}
}
