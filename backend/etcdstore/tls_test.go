package etcdstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
)

// An etcd that serves clients over TLS only and requires a client
// certificate: the store opens with etcdctl's variables (ETCDCTL_CACERT,
// ETCDCTL_CERT, ETCDCTL_KEY) on the URL a user gives memfs, and is
// refused without the client certificate or with another CA.
func TestTLS(t *testing.T) {
	srv, files := etcdtest.StartTLS(t)
	open := func(env map[string]string) (*etcdstore.Store, error) {
		for _, k := range []string{"ETCDCTL_CACERT", "ETCDCTL_CERT", "ETCDCTL_KEY"} {
			t.Setenv(k, env[k])
		}
		cfg, err := etcdstore.ParseURL(srv.URL("tls"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DialTimeout, cfg.RequestTimeout = time.Second, 2*time.Second
		if err := etcdstore.ConfigFromEnv(&cfg); err != nil {
			t.Fatal(err)
		}
		st, err := etcdstore.Open(context.Background(), cfg)
		if err == nil {
			if _, err = st.List(t.Context()); err != nil {
				st.Close()
				return nil, err
			}
		}
		return st, err
	}
	all := map[string]string{"ETCDCTL_CACERT": files.CA, "ETCDCTL_CERT": files.ClientCert, "ETCDCTL_KEY": files.ClientKey}
	st, err := open(all)
	if err != nil {
		t.Fatalf("Open over TLS with the client certificate: %v", err)
	}
	if err := st.Save(t.Context(), entry("memory/a.md", []byte("over tls"))); err != nil {
		t.Fatal(err)
	}
	if got := loadValue(t, st, "memory/a.md"); string(got) != "over tls" {
		t.Fatalf("Load = %q", got)
	}
	st.Close()

	if st, err := open(map[string]string{"ETCDCTL_CACERT": files.CA}); err == nil {
		st.Close()
		t.Error("opened without a client certificate, which the server requires")
	}
	// Another CA: the server's certificate is not trusted.
	otherCA := filepath.Join(t.TempDir(), "other-ca.pem")
	_, other := etcdtest.StartTLS(t)
	data, err := os.ReadFile(other.CA)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(otherCA, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := open(map[string]string{"ETCDCTL_CACERT": otherCA, "ETCDCTL_CERT": files.ClientCert, "ETCDCTL_KEY": files.ClientKey}); err == nil {
		st.Close()
		t.Error("opened trusting another CA")
	}
}
