package etcdstore_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend/etcdstore"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		url       string
		endpoints []string
		ns        string
		bad       bool
	}{
		{url: "etcd://127.0.0.1:2379/team", endpoints: []string{"127.0.0.1:2379"}, ns: "team"},
		{url: "etcd://etcd-1/team", endpoints: []string{"etcd-1:2379"}, ns: "team"},
		{url: "etcd://a:1,b,c:3/n.s-1", endpoints: []string{"a:1", "b:2379", "c:3"}, ns: "n.s-1"},
		{url: "etcd://[::1]:2379,[::1]/x", endpoints: []string{"[::1]:2379", "[::1]:2379"}, ns: "x"},
		{url: "etcd://h:1/", bad: true},
		{url: "etcd://h:1", bad: true},
		{url: "etcd://h:1/a/b", bad: true},
		{url: "etcd://h:1/..", bad: true},
		{url: "etcd:///ns", bad: true},
		{url: "etcd://a,,b/ns", bad: true},
		{url: "http://h:1/ns", bad: true},
		{url: "etcd://h:port/ns", bad: true},
		{url: "etcd://:1/ns", bad: true},
		{url: "etcd://user:secret@h:1/ns", bad: true},
		{url: "etcd://h:1/ns?x=1", bad: true},
	}
	for _, tt := range tests {
		cfg, err := etcdstore.ParseURL(tt.url)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseURL(%q) = %+v, want an error", tt.url, cfg)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseURL(%q): the error %q shows the password", tt.url, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tt.url, err)
			continue
		}
		if !slices.Equal(cfg.Endpoints, tt.endpoints) || cfg.Namespace != tt.ns {
			t.Errorf("ParseURL(%q) = %q %q, want %q %q", tt.url, cfg.Endpoints, cfg.Namespace, tt.endpoints, tt.ns)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir)
	t.Setenv("ETCDCTL_USER", "alice:pw1")
	t.Setenv("ETCDCTL_PASSWORD", "")
	t.Setenv("ETCDCTL_CACERT", certFile)
	t.Setenv("ETCDCTL_CERT", certFile)
	t.Setenv("ETCDCTL_KEY", keyFile)
	t.Setenv("ETCDCTL_INSECURE_SKIP_TLS_VERIFY", "true")
	t.Setenv("MEMFS_ETCD_TIMEOUT", "1500ms")
	var cfg etcdstore.Config
	if err := etcdstore.ConfigFromEnv(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Username != "alice" || cfg.Password != "pw1" || cfg.RequestTimeout != 1500*time.Millisecond {
		t.Errorf("user %q, password set %v, timeout %v", cfg.Username, cfg.Password == "pw1", cfg.RequestTimeout)
	}
	if cfg.TLS == nil || cfg.TLS.RootCAs == nil || len(cfg.TLS.Certificates) != 1 || !cfg.TLS.InsecureSkipVerify {
		t.Errorf("TLS = %+v, want a CA pool, one certificate, no verification", cfg.TLS)
	}

	t.Setenv("ETCDCTL_USER", "bob")
	t.Setenv("ETCDCTL_PASSWORD", "pw2")
	cfg = etcdstore.Config{}
	if err := etcdstore.ConfigFromEnv(&cfg); err != nil || cfg.Username != "bob" || cfg.Password != "pw2" {
		t.Errorf("ETCDCTL_USER=bob ETCDCTL_PASSWORD: user %q, password set %v, %v", cfg.Username, cfg.Password == "pw2", err)
	}

	// A floor: at 1ns every request timed out before it was sent.
	for _, v := range []string{"1ns", "99ms"} {
		t.Setenv("MEMFS_ETCD_TIMEOUT", v)
		if err := etcdstore.ConfigFromEnv(&etcdstore.Config{}); err == nil || !strings.Contains(err.Error(), "at least 100ms") {
			t.Errorf("MEMFS_ETCD_TIMEOUT=%s: %v, want a refusal naming the floor", v, err)
		}
	}
	t.Setenv("MEMFS_ETCD_TIMEOUT", "")

	for name, val := range map[string]string{
		"MEMFS_ETCD_TIMEOUT":               "soon",
		"ETCDCTL_INSECURE_SKIP_TLS_VERIFY": "maybe",
		"ETCDCTL_CACERT":                   filepath.Join(dir, "missing.pem"),
		"ETCDCTL_KEY":                      "",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, val)
			if err := etcdstore.ConfigFromEnv(&etcdstore.Config{}); err == nil {
				t.Errorf("%s=%q: no error", name, val)
			}
		})
	}
}

// writeCert writes a self-signed certificate and its key.
func writeCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcd"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
