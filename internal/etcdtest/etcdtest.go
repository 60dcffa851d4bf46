// Package etcdtest runs real etcd servers for tests: Debian's etcd
// (/usr/bin/etcd, package etcd-server) on 127.0.0.1, on free ports, with a
// data directory under t.TempDir().
//
//	srv := etcdtest.Start(t)
//	st, err := etcdstore.Open(ctx, etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "t"})
//
// Start waits until the server answers /health (at most 20 s) and registers
// a cleanup that kills the server it started, by its process id, and waits
// for it. A server's output goes to a file in its temporary directory; its
// tail is logged when the test fails.
//
// Without /usr/bin/etcd a test that calls Start is skipped, naming the
// reason, unless MEMFS_REQUIRE_ETCD=1 is set (scripts/test.sh sets it):
// then it fails, so that CI never passes without testing the etcd store.
//
// Tests that neither stop nor kill the server share one (Shared): each
// gets a namespace of its own on a server started once per package run
// (about a second saved per test), which RunShared, from TestMain, stops.
//
//	endpoint, ns := etcdtest.Shared(t)
//
// A Server or Cluster is used from the test's goroutine; its methods are
// not safe for concurrent use.
package etcdtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binary is the etcd server the package runs.
const Binary = "/usr/bin/etcd"

// healthWait bounds how long a server may take to become healthy.
const healthWait = 20 * time.Second

// Server is one etcd process (a single-member cluster, or one member of a
// Cluster).
type Server struct {
	t          testing.TB
	name       string
	dir        string // data directory
	log        string // the server's output
	clientPort int
	peerPort   int
	cluster    string // --initial-cluster
	clusterTok string
	cmd        *exec.Cmd // nil while stopped
	waited     chan struct{}
	tls        *TLSFiles // StartTLS's: clients over TLS only
}

// Cluster is a cluster of several members.
type Cluster struct {
	Members []*Server
}

// requireBinary skips t (or fails it, under MEMFS_REQUIRE_ETCD=1) when
// there is no etcd server to run.
func requireBinary(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		why := fmt.Sprintf("no etcd server at %s (apt-get install etcd-server): %v", Binary, err)
		if os.Getenv("MEMFS_REQUIRE_ETCD") == "1" {
			t.Fatalf("%s; MEMFS_REQUIRE_ETCD=1 demands it", why)
		}
		t.Skip(why)
	}
}

// Start starts a single-member etcd and waits until it is healthy.
func Start(t testing.TB) *Server {
	t.Helper()
	requireBinary(t)
	ports := freePorts(t, 2)
	s := &Server{t: t, name: "m0", dir: t.TempDir(), clientPort: ports[0], peerPort: ports[1], clusterTok: "memfs-test"}
	s.cluster = fmt.Sprintf("%s=%s", s.name, s.peerURL())
	s.log = filepath.Join(s.dir, "etcd.log")
	s.start()
	t.Cleanup(s.cleanup)
	s.waitHealthy()
	return s
}

// StartCluster starts a cluster of n members and waits until every member
// is healthy (a leader is elected).
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	requireBinary(t)
	ports := freePorts(t, 2*n)
	c := &Cluster{}
	var initial []string
	for i := range n {
		s := &Server{t: t, name: fmt.Sprintf("m%d", i), dir: t.TempDir(), clientPort: ports[2*i], peerPort: ports[2*i+1], clusterTok: "memfs-test-cluster"}
		s.log = filepath.Join(s.dir, "etcd.log")
		c.Members = append(c.Members, s)
		initial = append(initial, fmt.Sprintf("%s=%s", s.name, s.peerURL()))
	}
	for _, s := range c.Members {
		s.cluster = strings.Join(initial, ",")
		s.start()
		t.Cleanup(s.cleanup)
	}
	for _, s := range c.Members {
		s.waitHealthy()
	}
	return c
}

// Endpoints are the client URLs of every member.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, s := range c.Members {
		eps = append(eps, s.Endpoint())
	}
	return eps
}

// URL is an etcd:// store URL naming every member and namespace ns (see
// etcdstore.ParseURL).
func (c *Cluster) URL(ns string) string {
	var hosts []string
	for _, s := range c.Members {
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", s.clientPort))
	}
	return "etcd://" + strings.Join(hosts, ",") + "/" + ns
}

// Kill kills member i (SIGKILL).
func (c *Cluster) Kill(i int) { c.Members[i].Kill() }

// Endpoint is the server's client URL.
func (s *Server) Endpoint() string {
	if s.tls != nil {
		return fmt.Sprintf("https://127.0.0.1:%d", s.clientPort)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", s.clientPort)
}

// URL is an etcd:// store URL for the server and namespace ns.
func (s *Server) URL(ns string) string {
	return fmt.Sprintf("etcd://127.0.0.1:%d/%s", s.clientPort, ns)
}

func (s *Server) peerURL() string { return fmt.Sprintf("http://127.0.0.1:%d", s.peerPort) }

// Stop stops the server with SIGTERM and waits for it to exit.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

// Kill kills the server with SIGKILL and waits for it to exit.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

// Restart starts a stopped server again, on the same ports and data
// directory, and waits until it is healthy.
func (s *Server) Restart() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatalf("etcdtest: Restart of %s, which is running", s.name)
	}
	s.start()
	s.waitHealthy()
}

func (s *Server) start() {
	s.t.Helper()
	out, err := os.OpenFile(s.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	defer out.Close()
	args := []string{
		"--name", s.name,
		"--data-dir", filepath.Join(s.dir, "data"),
		"--listen-client-urls", s.Endpoint(),
		"--advertise-client-urls", s.Endpoint(),
		"--listen-peer-urls", s.peerURL(),
		"--initial-advertise-peer-urls", s.peerURL(),
		"--initial-cluster", s.cluster,
		"--initial-cluster-token", s.clusterTok,
		"--logger", "zap",
		"--log-level", "error",
		"--log-outputs", "stderr",
	}
	if s.tls != nil {
		args = append(args, s.tls.tlsArgs()...)
	}
	cmd := exec.Command(Binary, args...)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: a ^C to the test run is not also the
	// server's, so that the cleanup decides when it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("etcdtest: start %s: %v", Binary, err)
	}
	s.cmd = cmd
	s.waited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		cmd.Wait()
		close(done)
	}(cmd, s.waited)
}

// signal sends sig to the server's own process and waits for it to exit
// (SIGKILL after 10 s).
func (s *Server) signal(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.waited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.waited
	}
	s.cmd = nil
}

func (s *Server) cleanup() {
	s.signal(syscall.SIGKILL)
	if s.t.Failed() {
		s.t.Logf("etcdtest: the tail of %s's output (%s):\n%s", s.name, s.log, tail(s.log, 40))
	}
}

// waitHealthy waits until the server answers /health with health true.
func (s *Server) waitHealthy() {
	s.t.Helper()
	deadline := time.Now().Add(healthWait)
	client := &http.Client{Timeout: time.Second}
	if s.tls != nil {
		tc, err := s.tls.clientConfig()
		if err != nil {
			s.t.Fatalf("etcdtest: %v", err)
		}
		client.Transport = &http.Transport{TLSClientConfig: tc}
	}
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.waited:
			s.cmd = nil
			s.t.Fatalf("etcdtest: %s exited while starting; its output:\n%s", s.name, tail(s.log, 40))
		default:
		}
		resp, err := client.Get(s.Endpoint() + "/health")
		if err == nil {
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(b.String(), `"health":"true"`) {
				return
			}
			err = fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(b.String()))
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("etcdtest: %s not healthy within %v (last: %v); its output:\n%s", s.name, healthWait, last, tail(s.log, 40))
}

// freePorts returns n ports free on 127.0.0.1 now (the kernel's choice).
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// tail returns the last n lines of the file at p.
func tail(p string, n int) string {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return "(no output)"
	}
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// KVRequests is how many requests of each method of the KV service
// (Range, Txn, Put, DeleteRange, Compact) the server has received, from
// its own metrics (grpc_server_started_total): a test asserts what an
// operation costs in round trips by the difference before and after it.
// Not for a StartTLS server.
func (s *Server) KVRequests(t testing.TB) map[string]int {
	t.Helper()
	if s.tls != nil {
		t.Fatal("etcdtest: KVRequests reads the metrics over plain HTTP: not on a TLS server")
	}
	resp, err := http.Get(s.Endpoint() + "/metrics")
	if err != nil {
		t.Fatalf("etcdtest: metrics: %v", err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		t.Fatalf("etcdtest: metrics: %v", err)
	}
	n := map[string]int{}
	for line := range strings.Lines(body.String()) {
		if !strings.HasPrefix(line, "grpc_server_started_total{") || !strings.Contains(line, `grpc_service="etcdserverpb.KV"`) {
			continue
		}
		_, m, ok := strings.Cut(line, `grpc_method="`)
		if !ok {
			t.Fatalf("etcdtest: metrics line %q: no grpc_method", line)
		}
		m, _, _ = strings.Cut(m, `"`)
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err != nil {
			t.Fatalf("etcdtest: metrics line %q: %v", line, err)
		}
		n[m] += int(v)
	}
	if len(n) == 0 {
		t.Fatal("etcdtest: the metrics have no grpc_server_started_total for etcdserverpb.KV")
	}
	return n
}
