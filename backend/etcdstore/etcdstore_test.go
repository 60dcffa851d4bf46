package etcdstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/backend/storetest"
	"github.com/memfs/memfs/internal/etcdtest"
)

// open opens namespace ns on srv, closed at the end of the test.
func open(t testing.TB, srv *etcdtest.Server, ns string, tune ...func(*etcdstore.Config)) *etcdstore.Store {
	t.Helper()
	cfg := etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: ns}
	for _, f := range tune {
		f(&cfg)
	}
	st, err := etcdstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open %s: %v", ns, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// clock is a fake Config.Now: it moves only when advanced.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Unix(1_700_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// waitGone waits, on an etcd watch, until no key under prefix is left;
// what names them in the failure.
func waitGone(t testing.TB, cli *clientv3.Client, prefix, what string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp.Count == 0 {
			return
		}
		// The next deletion under prefix after what was counted.
		wc := cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1), clientv3.WithFilterPut())
		if _, ok := <-wc; !ok || ctx.Err() != nil {
			t.Fatalf("%s: still there after %v", what, timeout)
		}
	}
}

// TestConformance runs the whole suite on one etcd server. The suite's
// directory names a namespace: each new directory a fresh one, a
// directory opened again the same one (so Reopen and the subtests that
// reopen read what was written). Options.External writes through a second
// client of the namespace, as another machine would.
func TestConformance(t *testing.T) {
	srv := etcdtest.Start(t)
	var mu sync.Mutex // guards the maps
	names := map[string]string{}
	opened := map[string]*etcdstore.Store{}
	nsOf := func(dir string) string {
		mu.Lock()
		defer mu.Unlock()
		ns, ok := names[dir]
		if !ok {
			ns = fmt.Sprintf("conf%d", len(names))
			names[dir] = ns
		}
		return ns
	}
	storetest.RunWith(t, func(t *testing.T, dir string) (backend.Store, error) {
		ns := nsOf(dir)
		if strings.HasSuffix(t.Name(), "/InUse") {
			mu.Lock()
			held := opened[ns] != nil
			mu.Unlock()
			if held {
				t.Skip("a shared store has no exclusive use: several clients open one namespace at once by design")
			}
		}
		st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: ns})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		opened[ns] = st
		mu.Unlock()
		return st, nil
	}, storetest.Options{
		Revisions: true, // Info.Rev is the ModRevision of the key's record
		External: func(t *testing.T, dir, key string, value []byte) {
			other, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: nsOf(dir)})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if value == nil {
				err = other.Delete(t.Context(), key)
			} else {
				err = other.Save(t.Context(), backend.Entry{Key: key, Value: value, Info: backend.Info{Mode: 0o644, MTime: time.Now()}})
			}
			if err != nil {
				t.Fatal(err)
			}
		},
	})
}
