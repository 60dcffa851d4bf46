package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/session"
)

// An etcd store is shared: many mounts, on many machines, open one
// namespace at once. Nothing of it is local but each process's crash
// journal, kept under the state directory, one per mountpoint (and one
// for the commands that open the store without a mount), each locked by
// the process that uses it.

// parseEtcd parses an etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE --store.
func parseEtcd(v string) (storeSpec, error) {
	cfg, err := etcdstore.ParseURL(v)
	if err != nil {
		return storeSpec{}, fmt.Errorf("--store %q: %w\n  want etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE", v, err)
	}
	return storeSpec{kind: "etcd", path: etcdURL(cfg)}, nil
}

// etcdURL is the canonical text of an etcd store: the URL with its
// endpoints as given (in order) and its namespace.
func etcdURL(cfg etcdstore.Config) string {
	hosts := make([]string, len(cfg.Endpoints))
	for i, e := range cfg.Endpoints {
		hosts[i] = strings.TrimPrefix(strings.TrimPrefix(e, "http://"), "https://")
	}
	return "etcd://" + strings.Join(hosts, ",") + "/" + cfg.Namespace
}

// openEtcd opens the etcd store spec names, with TLS and authentication
// from etcdctl's environment (ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY,
// ETCDCTL_USER, ETCDCTL_PASSWORD, ETCDCTL_INSECURE_SKIP_TLS_VERIFY) and the
// request timeout from MEMFS_ETCD_TIMEOUT.
func openEtcd(spec storeSpec) (*etcdstore.Store, error) {
	cfg, err := etcdstore.ParseURL(spec.path)
	if err != nil {
		return nil, err
	}
	if err := etcdstore.ConfigFromEnv(&cfg); err != nil {
		return nil, err
	}
	return etcdstore.Open(context.Background(), cfg)
}

// etcdJournal is the crash journal of a process using the etcd store spec:
// one per mountpoint mnt, or the commands' one when mnt is "". The
// directory is named after the namespace (readable) and a hash of the
// store's URL (unique).
func etcdJournal(spec storeSpec, mnt string) string {
	sum := sha256.Sum256([]byte(spec.path))
	ns := spec.path[strings.LastIndex(spec.path, "/")+1:]
	dir := filepath.Join(stateDir(), "etcd", ns+"-"+hex.EncodeToString(sum[:6]))
	if mnt == "" {
		return filepath.Join(dir, "commands.journal")
	}
	m := sha256.Sum256([]byte(mnt))
	return filepath.Join(dir, "mount-"+hex.EncodeToString(m[:8])+".journal")
}

// conflictPolicy is the session's conflict policy for --on-conflict: on a
// shared store, the flag's (keep-both by default); on a local store, the
// store's own rule (another program's version is kept beside), and the
// flag, when given, is refused.
func conflictPolicy(c *cli.Context, spec storeSpec) (session.ConflictPolicy, error) {
	if spec.local() {
		if c.IsSet("on-conflict") {
			return 0, fmt.Errorf("--on-conflict is for a shared store (etcd://...): on %s another program's version is always kept beside memfs's", spec)
		}
		return session.KeepBeside, nil
	}
	p, err := session.ParseConflictPolicy(c.String("on-conflict"))
	if err != nil {
		return 0, fmt.Errorf("--on-conflict: %w", err)
	}
	return p, nil
}
