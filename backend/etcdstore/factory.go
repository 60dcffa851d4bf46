package etcdstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/location"
)

// NewFactory is the etcd store's location.Factory:
// "etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE" (ParseURL), opened with TLS,
// authentication and the request timeout from the environment
// (ConfigFromEnv). An etcd store is shared: many mounts, on many
// machines, open one namespace at once. Nothing of it is local but each
// process's crash journal, kept under the state directory, one per
// mountpoint (and one for the processes that open the store without a
// mount), each locked by the process that uses it; it has no lock file.
func NewFactory() location.Factory { return factory{} }

type factory struct{}

func (factory) Scheme() string { return "etcd" }

func (factory) Usage() string { return "etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE" }

// Parse returns the URL without its scheme: its endpoints as given (in
// order, with the default port) and its namespace.
func (factory) Parse(rest string) (string, error) {
	cfg, err := ParseURL("etcd:" + rest)
	if err != nil {
		return "", err
	}
	hosts := make([]string, len(cfg.Endpoints))
	for i, e := range cfg.Endpoints {
		hosts[i] = strings.TrimPrefix(strings.TrimPrefix(e, "http://"), "https://")
	}
	return "//" + strings.Join(hosts, ",") + "/" + cfg.Namespace, nil
}

func (factory) Local() bool { return false }

// Open has no read-only mode: a reader writes nothing to the store.
func (factory) Open(ctx context.Context, path string, _ location.Options) (backend.SysStore, error) {
	st, err := open(ctx, "etcd:"+path)
	if err != nil {
		return nil, location.Explain(err, "check that etcd answers there (etcdctl --endpoints ... endpoint health) and the ETCDCTL_* TLS and auth variables")
	}
	return st, nil
}

func open(ctx context.Context, url string) (*Store, error) {
	cfg, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if err := ConfigFromEnv(&cfg); err != nil {
		return nil, err
	}
	return Open(ctx, cfg)
}

// JournalPath is under stateDir/etcd, in a directory named after the
// namespace (readable) and a hash of the store's URL (unique): a file per
// mountpoint, and commands.journal for the processes without a mount.
func (factory) JournalPath(path, stateDir, mnt string) string {
	url := "etcd:" + path
	sum := sha256.Sum256([]byte(url))
	ns := url[strings.LastIndex(url, "/")+1:]
	dir := filepath.Join(stateDir, "etcd", ns+"-"+hex.EncodeToString(sum[:6]))
	if mnt == "" {
		return filepath.Join(dir, "commands.journal")
	}
	m := sha256.Sum256([]byte(mnt))
	return filepath.Join(dir, "mount-"+hex.EncodeToString(m[:8])+".journal")
}

func (factory) LockPath(string) string { return "" }
