package session_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/session"
)

// Identity, not names, for one's own writes (issue 26, finding 2): a name
// that one mount removes and makes again between two flushes is the
// mount's own change, never another writer's. With one writer, no
// conflict is met, no conflict copy appears (in the session or after a
// remount), and the name holds what was written last.

// reuseStore opens the store of kind that a "remount" opens again: open
// returns a new handle on the same store each call.
type reuseStore struct {
	kind   string
	policy session.ConflictPolicy
	open   func(t *testing.T) backend.Store
}

func reuseStores(t *testing.T) []reuseStore {
	dir, bdir := t.TempDir(), t.TempDir()
	srv := etcdtest.Start(t)
	etcdOpen := func(t *testing.T) backend.Store {
		st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: strings.ReplaceAll(t.Name(), "/", "-")})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	return []reuseStore{
		{"dir", session.KeepBeside, func(t *testing.T) backend.Store {
			st, err := dirstore.Open(dir + "/" + strings.ReplaceAll(t.Name(), "/", "-"))
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"badger", session.KeepBeside, func(t *testing.T) backend.Store {
			st, err := badgerstore.Open(bdir+"/"+strings.ReplaceAll(t.Name(), "/", "-"), badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"etcd", session.KeepBoth, etcdOpen},
	}
}

func reuseSession(t *testing.T, st backend.Store, policy session.ConflictPolicy, logs *syncbuf.Buffer) *session.Context {
	t.Helper()
	c := session.NewContext(st, session.Options{OnConflict: policy, Agent: "a",
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// tree lists every node of the session under dir, directories with a
// trailing slash.
func tree(t *testing.T, c *session.Context, dir string) []string {
	t.Helper()
	des, err := c.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		k := backend.Join(dir, de.Name)
		if de.IsDir {
			out = append(out, k+"/")
			out = append(out, tree(t, c, k)...)
		} else {
			out = append(out, k)
		}
	}
	return out
}

// noConflictKeys fails t for every node with a conflict name.
func noConflictKeys(t *testing.T, c *session.Context, when string) {
	t.Helper()
	for _, k := range tree(t, c, "") {
		if strings.Contains(k, ".conflict-") {
			t.Errorf("%s: conflict copy %s (want none: one writer)", when, k)
		}
	}
}

func TestNameReuseIsOwnChange(t *testing.T) {
	cases := []struct {
		name string
		// before is flushed; then change, then a flush.
		before, change func(t *testing.T, c *session.Context)
		want           map[string]string // file -> content after the remount
		wantDirs       []string
		gone           []string // neither file nor directory
	}{
		{
			name: "dir-then-file",
			before: func(t *testing.T, c *session.Context) {
				must(t, c.Mkdir("notes", 0o755, 0, 0))
			},
			change: func(t *testing.T, c *session.Context) {
				must(t, c.Rmdir("notes"))
				must(t, c.Set("notes", []byte("x\n")))
			},
			want: map[string]string{"notes": "x\n"},
		},
		{
			name: "file-then-dir",
			before: func(t *testing.T, c *session.Context) {
				must(t, c.Set("notes", []byte("old\n")))
			},
			change: func(t *testing.T, c *session.Context) {
				must(t, c.Delete("notes"))
				must(t, c.Mkdir("notes", 0o755, 0, 0))
				must(t, c.Set("notes/n.md", []byte("in\n")))
			},
			want:     map[string]string{"notes/n.md": "in\n"},
			wantDirs: []string{"notes"},
		},
		{
			name: "file-removed-and-made-again",
			before: func(t *testing.T, c *session.Context) {
				must(t, c.Set("f.md", []byte("one\n")))
			},
			change: func(t *testing.T, c *session.Context) {
				must(t, c.Delete("f.md"))
				must(t, c.Set("f.md", []byte("two\n")))
			},
			want: map[string]string{"f.md": "two\n"},
		},
		{
			name: "hard-link-name-reused",
			before: func(t *testing.T, c *session.Context) {
				must(t, c.Set("a", []byte("one\n")))
				must(t, c.Link(t.Context(), "a", "b"))
			},
			change: func(t *testing.T, c *session.Context) {
				must(t, c.Delete("a"))
				must(t, c.Set("a", []byte("two\n")))
			},
			want: map[string]string{"a": "two\n", "b": "one\n"},
		},
	}
	for _, rs := range reuseStores(t) {
		t.Run(rs.kind, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					ctx := t.Context()
					logs := &syncbuf.Buffer{}
					st := rs.open(t)
					c := reuseSession(t, st, rs.policy, logs)
					tc.before(t, c)
					must(t, c.Flush(ctx))
					tc.change(t, c)
					if err := c.Flush(ctx); err != nil {
						t.Fatalf("second flush: %v", err)
					}
					if err := c.Flush(ctx); err != nil {
						t.Fatalf("third flush: %v", err)
					}
					if s := logs.String(); s != "" {
						t.Errorf("log with one writer (want none):\n%s", s)
					}
					noConflictKeys(t, c, "live")
					checkReuse(t, c, tc.want, tc.wantDirs, "live")
					must(t, st.Close())

					st = rs.open(t)
					defer st.Close()
					c = reuseSession(t, st, rs.policy, logs)
					noConflictKeys(t, c, "after a remount")
					checkReuse(t, c, tc.want, tc.wantDirs, "after a remount")
					var wantTree []string
					for k := range tc.want {
						wantTree = append(wantTree, k)
					}
					for _, d := range tc.wantDirs {
						wantTree = append(wantTree, d+"/")
					}
					slices.Sort(wantTree)
					if got := tree(t, c, ""); !slices.Equal(got, wantTree) {
						t.Errorf("after a remount: %v, want %v", got, wantTree)
					}
				})
			}
		})
	}
}

func checkReuse(t *testing.T, c *session.Context, want map[string]string, dirs []string, when string) {
	t.Helper()
	for k, v := range want {
		if err := c.Resolve(context.Background(), k); err != nil {
			t.Errorf("%s: resolve %s: %v", when, k, err)
			continue
		}
		got, ok := c.Get(k)
		if !ok || string(got) != v {
			t.Errorf("%s: %s = %q, %v; want %q", when, k, got, ok, v)
		}
	}
	for _, d := range dirs {
		if st, err := c.Stat(d); err != nil || !st.IsDir {
			t.Errorf("%s: %s: %+v, %v; want a directory", when, d, st, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(fmt.Errorf("%w", err))
	}
}
