package etcdtest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/etcdtest"
)

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
		deadline := time.Now().Add(10 * time.Second)
		for !healthy(t, ep) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not healthy 10 s after one member of three was killed", ep)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
