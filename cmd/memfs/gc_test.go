package main

import (
	"strings"
	"testing"
)

// memfs gc: a local store has nothing to collect (and a missing one is an
// error, not a store made); the first gc of an etcd store leaves its mark
// and says when the next removes what no key names.
func TestGCCommand(t *testing.T) {
	for kind, store := range backends(t) {
		s := store()
		mustRun(t, "a\n", "put", "--store", s, "memory/a.md")
		if out := mustRun(t, "", "gc", "--store", s); !strings.Contains(out, "nothing to collect") {
			t.Errorf("memfs gc of a %s store: %q, want it to say there is nothing to collect", kind, out)
		}
	}
	if _, _, err := run(t, "", "gc", "--store", "dir:"+t.TempDir()+"/none"); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Errorf("memfs gc of a missing store: %v, want an error saying there is no store", err)
	}
	s := sharedEtcdStore(t)
	env := sharedEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	mustRun(t, "a\n", "put", "--store", s, "memory/a.md")
	if out := mustRun(t, "", "gc", "--store", s); !strings.Contains(out, "marked: nothing removed yet; a memfs gc 10m0s or more from now") {
		t.Errorf("the first memfs gc of an etcd store: %q, want it to say it left a mark", out)
	}
	if out := mustRun(t, "", "gc", "--store", s); !strings.Contains(out, "marked: nothing removed yet") {
		t.Errorf("a memfs gc within the grace: %q, want it to say nothing was removed", out)
	}
}
