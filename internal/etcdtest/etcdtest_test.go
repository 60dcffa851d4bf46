package etcdtest_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/etcdtest"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// Shared hands every caller the one server, healthy, and a namespace of
// its own.
func TestShared(t *testing.T) {
	ep1, ns1 := etcdtest.Shared(t)
	ep2, ns2 := etcdtest.Shared(t)
	if ep1 != ep2 || ns1 == ns2 {
		t.Errorf("two calls: (%s, %s) and (%s, %s), want one endpoint and two namespaces", ep1, ns1, ep2, ns2)
	}
	if !healthy(t, ep1) {
		t.Error("the shared server is not healthy")
	}
}

func healthy(t *testing.T, endpoint string) bool {
	t.Helper()
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get(endpoint + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func TestServerStopRestart(t *testing.T) {
	s := etcdtest.Start(t)
	if !healthy(t, s.Endpoint()) {
		t.Fatal("a started server is not healthy")
	}
	s.Stop()
	if healthy(t, s.Endpoint()) {
		t.Fatal("a stopped server still answers")
	}
	s.Restart()
	if !healthy(t, s.Endpoint()) {
		t.Fatal("a restarted server is not healthy")
	}
	s.Kill()
	if healthy(t, s.Endpoint()) {
		t.Fatal("a killed server still answers")
	}
}

func TestCluster(t *testing.T) {
	c := etcdtest.StartCluster(t, 3)
	if got := len(c.Endpoints()); got != 3 {
		t.Fatalf("%d endpoints, want 3", got)
	}
	c.Kill(0)
	// The others elect a new leader (if m0 led) within a few seconds.
	for _, ep := range c.Endpoints()[1:] {
		if !await.Cond(10*time.Second, 100*time.Millisecond, func() bool { return healthy(t, ep) }) {
			t.Fatalf("%s: not healthy 10 s after one member of three was killed", ep)
		}
	}
}
