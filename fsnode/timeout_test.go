package fsnode

import (
	"testing"
	"time"

	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/session"
)

// A zero cache timeout is the default (1 s); a negative one is no caching
// at all (memfs mount --attr-timeout 0 asks for that, and got 1 s).
func TestCacheTimeouts(t *testing.T) {
	c := session.NewContext(memstore.New(), session.Options{})
	r := NewRoot(c, Options{AttrTimeout: -1, EntryTimeout: 0, NegativeTimeout: 3 * time.Second})
	defer r.Close()
	if got := r.opts.AttrTimeout; got != 0 {
		t.Errorf("AttrTimeout -1 became %v, want 0 (no caching)", got)
	}
	if got := r.opts.EntryTimeout; got != time.Second {
		t.Errorf("EntryTimeout 0 became %v, want 1s", got)
	}
	if got := r.opts.NegativeTimeout; got != 3*time.Second {
		t.Errorf("NegativeTimeout 3s became %v", got)
	}
}
