package etcdstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
)

// An etcd with authentication on: the store opens and works with the user
// and password etcdctl's variables give (ConfigFromEnv), and is refused
// without them or with a wrong password, naming neither the password nor
// a value.
func TestAuthentication(t *testing.T) {
	srv := etcdtest.Start(t)
	cli := raw(t, srv)
	ctx := t.Context()
	const password = "s3cret-pw-42"
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	base := etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "auth", RequestTimeout: 2 * time.Second, DialTimeout: 2 * time.Second}

	t.Setenv("ETCDCTL_USER", "root:"+password)
	cfg := base
	if err := etcdstore.ConfigFromEnv(&cfg); err != nil {
		t.Fatal(err)
	}
	st, err := etcdstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open with ETCDCTL_USER: %v", err)
	}
	defer st.Close()
	if err := st.Save(ctx, entry("memory/a.md", []byte("a"))); err != nil {
		t.Fatalf("Save as root: %v", err)
	}
	if got := loadValue(t, st, "memory/a.md"); string(got) != "a" {
		t.Fatalf("Load = %q", got)
	}

	for name, c := range map[string]etcdstore.Config{
		"no user":        base,
		"wrong password": func() etcdstore.Config { c := base; c.Username, c.Password = "root", "wrong-pw"; return c }(),
	} {
		st, err := etcdstore.Open(context.Background(), c)
		if err == nil {
			// Open may only probe; a read must fail then.
			_, err = st.List(ctx)
			st.Close()
		}
		if err == nil {
			t.Errorf("%s: the store opened and listed", name)
			continue
		}
		if errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("%s: %v, want an authentication error, not unavailable", name, err)
		}
		if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "wrong-pw") {
			t.Errorf("%s: the error names a password: %v", name, err)
		}
	}
}
