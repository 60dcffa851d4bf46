package etcdstore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
)

// Config says which etcd to use and how. The zero value of each optional
// field is documented beside it.
type Config struct {
	// Endpoints are the client URLs of the cluster's members
	// ("127.0.0.1:2379", "https://etcd-1:2379"). At least one.
	Endpoints []string
	// Namespace is the store's name in the cluster: its keys live under
	// /memfs/<Namespace>/. One valid key segment (backend.ValidateName).
	Namespace string
	// DialTimeout bounds connecting to the cluster; zero means 5 s.
	DialTimeout time.Duration
	// RequestTimeout bounds each request; zero means 5 s. A request that
	// does not finish within it fails with an error wrapping
	// backend.ErrUnavailable.
	RequestTimeout time.Duration
	// TLS is the client's TLS configuration; nil for plain connections.
	TLS *tls.Config
	// Username and Password authenticate to etcd; empty for none.
	Username, Password string
	// ChunkGrace is how long an unreferenced chunk is kept before
	// Collect may remove it; zero means 10 minutes. A save writes its
	// chunks before the record that names them, under an intent that
	// Collect honours whatever the grace; the grace spares the chunks of
	// a writer that puts no intent (an older memfs) for that long.
	ChunkGrace time.Duration
	// Now is the clock Collect measures ChunkGrace on (the mark it leaves
	// holds its reading); nil means time.Now.
	Now func() time.Time
}

const (
	defaultTimeout = 5 * time.Second
	defaultGrace   = 10 * time.Minute
	defaultPort    = "2379"
)

func (c Config) dialTimeout() time.Duration {
	if c.DialTimeout > 0 {
		return c.DialTimeout
	}
	return defaultTimeout
}

func (c Config) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return defaultTimeout
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c Config) grace() time.Duration {
	if c.ChunkGrace > 0 {
		return c.ChunkGrace
	}
	return defaultGrace
}

// ParseURL parses a store URL, etcd://HOST[:PORT][,HOST[:PORT]...]/NAMESPACE
// (port 2379 by default), into a Config with the endpoints and namespace
// set. NAMESPACE is one valid key segment.
func ParseURL(s string) (Config, error) {
	rest, ok := strings.CutPrefix(s, "etcd://")
	if !ok {
		return Config{}, fmt.Errorf("etcdstore: %q: not an etcd:// URL", redactURL(s))
	}
	hosts, ns, _ := strings.Cut(rest, "/")
	// Any @ is user information (a password may hold a /, which ends the
	// hosts early): refused, and never shown.
	if strings.Contains(rest, "@") || strings.ContainsAny(ns, "?#") {
		return Config{}, fmt.Errorf("etcdstore: %q: user, query and fragment are not allowed (credentials come from ETCDCTL_USER and ETCDCTL_PASSWORD)", redactURL(s))
	}
	if hosts == "" {
		return Config{}, fmt.Errorf("etcdstore: %q: no host", redactURL(s))
	}
	var cfg Config
	for h := range strings.SplitSeq(hosts, ",") {
		if h == "" {
			return Config{}, fmt.Errorf("etcdstore: %q: empty host", redactURL(s))
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.Trim(h, "[]"), defaultPort)
		}
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("etcdstore: %q: bad host %q", redactURL(s), h)
		}
		cfg.Endpoints = append(cfg.Endpoints, h)
	}
	cfg.Namespace = ns
	if err := checkNamespace(cfg.Namespace); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// redactURL is s without the user information a URL may hold.
func redactURL(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "REDACTED" + s[i:]
		}
		return "REDACTED" + s[i:]
	}
	return s
}

func checkNamespace(ns string) error {
	if ns == "" {
		return fmt.Errorf("etcdstore: no namespace: %w", backend.ErrInvalidKey)
	}
	if err := backend.ValidateName(ns); err != nil {
		return fmt.Errorf("etcdstore: namespace: %w", err)
	}
	return nil
}

// MinRequestTimeout is the least MEMFS_ETCD_TIMEOUT: a request needs a
// round trip to the cluster, and under it every one timed out (at 1ns,
// before it was sent), which memfs reports as an outage.
const MinRequestTimeout = 100 * time.Millisecond

// ConfigFromEnv fills cfg from etcdctl's environment variables:
// ETCDCTL_CACERT, ETCDCTL_CERT and ETCDCTL_KEY (TLS files),
// ETCDCTL_INSECURE_SKIP_TLS_VERIFY, ETCDCTL_USER ("user" or
// "user:password") and ETCDCTL_PASSWORD, and MEMFS_ETCD_TIMEOUT (a Go
// duration) for RequestTimeout. Unset variables leave cfg as it is.
func ConfigFromEnv(cfg *Config) error {
	get := os.Getenv
	if v := get("MEMFS_ETCD_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < MinRequestTimeout {
			return fmt.Errorf("etcdstore: MEMFS_ETCD_TIMEOUT=%q: want a Go duration of at least %v (5s)", v, MinRequestTimeout)
		}
		cfg.RequestTimeout = d
	}
	if v := get("ETCDCTL_USER"); v != "" {
		user, pass, ok := strings.Cut(v, ":")
		cfg.Username = user
		if ok {
			cfg.Password = pass
		}
	}
	if v := get("ETCDCTL_PASSWORD"); v != "" {
		cfg.Password = v
	}
	caFile, certFile, keyFile := get("ETCDCTL_CACERT"), get("ETCDCTL_CERT"), get("ETCDCTL_KEY")
	insecure := false
	if v := get("ETCDCTL_INSECURE_SKIP_TLS_VERIFY"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("etcdstore: ETCDCTL_INSECURE_SKIP_TLS_VERIFY=%q: want true or false", v)
		}
		insecure = b
	}
	if caFile == "" && certFile == "" && keyFile == "" && !insecure {
		return nil
	}
	tc := cfg.TLS
	if tc == nil {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		tc = tc.Clone()
	}
	tc.InsecureSkipVerify = tc.InsecureSkipVerify || insecure
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return fmt.Errorf("etcdstore: ETCDCTL_CACERT: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("etcdstore: ETCDCTL_CACERT %s: no certificate in it", caFile)
		}
		tc.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return errors.New("etcdstore: ETCDCTL_CERT and ETCDCTL_KEY go together")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("etcdstore: ETCDCTL_CERT/ETCDCTL_KEY: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	cfg.TLS = tc
	return nil
}
