package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// The etcd target's server: one etcd process for the whole run, started
// at first use with a data directory under the work directory, stopped
// with the benchmark's other processes (cleanup).
var (
	etcdEndpoint   string
	etcdNamespaces int
	etcdProc       *proc // stopped last by cleanup
)

// benchEtcd starts /usr/bin/etcd (once) on free loopback ports and returns
// its client endpoint (HOST:PORT) once it answers /health.
func benchEtcd(work string) (string, error) {
	if etcdEndpoint != "" {
		return etcdEndpoint, nil
	}
	client, err := freePort()
	if err != nil {
		return "", err
	}
	peer, err := freePort()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(work, "etcd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	cu := fmt.Sprintf("http://127.0.0.1:%d", client)
	pu := fmt.Sprintf("http://127.0.0.1:%d", peer)
	argv := []string{"etcd", "--name", "bench", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "bench=" + pu, "--quota-backend-bytes", "8589934592",
		"--log-level", "warn"}
	p, err := startProc(argv, filepath.Join(dir, "etcd.log"))
	if err != nil {
		return "", fmt.Errorf("start etcd (apt-get install etcd-server): %w", err)
	}
	etcdProc = p
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(cu + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("etcd did not answer at %s within 20 s (log: %s)", cu, filepath.Join(dir, "etcd.log"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	etcdEndpoint = fmt.Sprintf("127.0.0.1:%d", client)
	return etcdEndpoint, nil
}

// killedBy reports whether err is a process's exit by signal sig.
func killedBy(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
