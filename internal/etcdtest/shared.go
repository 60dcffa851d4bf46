package etcdtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// shared is the package's one server for the tests that neither stop nor
// kill it (Shared): starting a server costs about a second, and a test
// needs only a namespace of its own. Test-only state, set once.
var shared struct {
	once sync.Once
	srv  *Server // nil until it is healthy
	proc *Server // the process to stop at the end, healthy or not
	dir  string
	n    int // namespaces handed out; guarded by mu
	mu   sync.Mutex
}

// Shared returns the client URL of the package's shared server, started
// by the first call, and a namespace no other call returns: a test that
// stays inside it sees no other test's keys. A test that stops, kills or
// restarts a server starts its own (Start). The package's TestMain must
// run its tests through RunShared, which stops the server at the end.
// When the test fails, the server's output is logged, as Start does.
func Shared(t testing.TB) (endpoint, namespace string) {
	t.Helper()
	requireBinary(t)
	shared.once.Do(func() { startShared(t) })
	if shared.srv == nil {
		t.Fatal("etcdtest: the shared server did not start (see the first test that used it)")
	}
	shared.mu.Lock()
	shared.n++
	ns := fmt.Sprintf("t%03d", shared.n)
	shared.mu.Unlock()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("etcdtest: the tail of the shared server's output (%s):\n%s", shared.srv.log, tail(shared.srv.log, 40))
		}
	})
	return shared.srv.Endpoint(), ns
}

// startShared starts the shared server in a directory of its own (not t's:
// it outlives t) and waits until it is healthy; t only reports a failure
// to start.
func startShared(t testing.TB) {
	t.Helper()
	dir, err := os.MkdirTemp("", "etcdtest-shared-")
	if err != nil {
		t.Fatal(err)
	}
	shared.dir = dir
	ports := freePorts(t, 2)
	s := &Server{t: t, name: "m0", dir: dir, clientPort: ports[0], peerPort: ports[1], clusterTok: "memfs-test-shared"}
	s.cluster = fmt.Sprintf("%s=%s", s.name, s.peerURL())
	s.log = filepath.Join(dir, "etcd.log")
	s.start()
	shared.proc = s
	s.waitHealthy()
	shared.srv = s
}

// RunShared runs the package's tests and then stops the server Shared
// started, if any, and removes its directory; it returns m.Run's code:
//
//	func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }
func RunShared(m *testing.M) int {
	code := m.Run()
	if s := shared.proc; s != nil {
		s.signal(syscall.SIGKILL)
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	return code
}
