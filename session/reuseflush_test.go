package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/session"
)

// duringApply is an etcd store (every capability of it) that runs hook
// once, while a flush's batch is on its way to the store: the session's
// lock is free then, as for a process using the mount.
type duringApply struct {
	*etcdstore.Store
	hook func()
}

func (s *duringApply) Apply(ctx context.Context, b backend.Batch) (map[string]string, error) {
	if h := s.hook; h != nil {
		s.hook = nil
		h()
	}
	return s.Store.Apply(ctx, b)
}

// A name removed while the flush that saves it is running, and made again
// (as a file or a directory), is the mount's own change (issue 26, the
// periodic flush of pjdfstest's rename/00.t and chown/00.t): the next
// flush expects the version that flush saved, so no conflict is logged
// and no conflict copy made, and the store holds the last writes.
func TestNameReuseDuringTheFlush(t *testing.T) {
	srv := etcdtest.Start(t)
	cases := []struct {
		name           string
		before, during func(t *testing.T, c *session.Context)
		want           []string
	}{
		{"file-then-file", func(t *testing.T, c *session.Context) { must(t, c.Set("n1", []byte("one\n"))) },
			func(t *testing.T, c *session.Context) {
				must(t, c.Delete("n1"))
				must(t, c.Set("n1", []byte("two\n")))
			}, []string{"n1"}},
		{"stored-file-then-file", func(t *testing.T, c *session.Context) {
			must(t, c.Set("n1", []byte("zero\n")))
			must(t, c.Flush(t.Context()))
			must(t, c.Set("n1", []byte("one\n")))
		}, func(t *testing.T, c *session.Context) {
			must(t, c.Delete("n1"))
			must(t, c.Set("n1", []byte("two\n")))
		}, []string{"n1"}},
		{"dir-then-file", func(t *testing.T, c *session.Context) { must(t, c.Mkdir("n1", 0o755, 0, 0)) },
			func(t *testing.T, c *session.Context) {
				must(t, c.Rmdir("n1"))
				must(t, c.Set("n1", []byte("two\n")))
			}, []string{"n1"}},
		{"file-removed", func(t *testing.T, c *session.Context) { must(t, c.Set("n1", []byte("one\n"))) },
			func(t *testing.T, c *session.Context) { must(t, c.Delete("n1")) }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			open := func() *etcdstore.Store {
				st, err := etcdstore.Open(ctx, etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "during-" + tc.name})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			st := &duringApply{Store: open()}
			logs := &syncbuf.Buffer{}
			c := reuseSession(t, st, session.KeepBoth, logs)
			tc.before(t, c)
			st.hook = func() { tc.during(t, c) }
			must(t, c.Flush(ctx))
			if st.hook != nil {
				t.Fatal("the flush saved nothing: the change was not made during it")
			}
			must(t, c.Flush(ctx))
			if s := logs.String(); s != "" {
				t.Errorf("log with one writer (want none):\n%s", s)
			}
			noConflictKeys(t, c, "live")
			c = reuseSession(t, open(), session.KeepBoth, logs)
			noConflictKeys(t, c, "after a remount")
			if got := tree(t, c, ""); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("after a remount: %v, want %v", got, tc.want)
			}
			if tc.want != nil {
				checkReuse(t, c, map[string]string{"n1": "two\n"}, nil, "after a remount")
			}
		})
	}
}
