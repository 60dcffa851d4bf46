package storetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// testWalk checks Walk on stores that offer it (backend.Walker): batches
// of at most WalkBatch entries that together are exactly what List
// returns, every key once, with the same Info; an error from fn stops the
// walk and comes back as it is; a cancelled context stops it.
func (s suite) testWalk(t *testing.T) {
	st := s.fresh(t)
	w, ok := st.(backend.Walker)
	if !ok {
		t.Skip("the store is not backend.Walker")
	}
	const n = 2*backend.WalkBatch + 300 // three batches at least
	es := make([]backend.Entry, 0, n+2)
	for i := range n {
		e := entry(fmt.Sprintf("w%02d/f%05d.md", i%23, i), []byte(fmt.Sprint(i)))
		e.Info.Mode = []fs.FileMode{0o644, 0o600, 0o755}[i%3]
		e.Info.MTime = time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC)
		if i%7 == 0 {
			e.Info.XAttrs = map[string][]byte{"user.n": []byte(fmt.Sprint(i))}
		}
		es = append(es, e)
	}
	link := entry("w00/link", []byte("w01/f00001.md"))
	link.Info.Mode = fs.ModeSymlink | 0o777
	es = append(es, link)
	save(t, st, es...)

	var walked []backend.Entry
	var sizes []int
	err := w.Walk(t.Context(), func(batch []backend.Entry) error {
		if len(batch) == 0 || len(batch) > backend.WalkBatch {
			t.Errorf("a batch of %d entries; want 1 to %d", len(batch), backend.WalkBatch)
		}
		sizes = append(sizes, len(batch))
		walked = append(walked, batch...)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	listed := listAll(t, st)
	slices.SortFunc(walked, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	if len(walked) != len(listed) {
		t.Fatalf("Walk reported %d entries in batches %v, List %d", len(walked), sizes, len(listed))
	}
	for i := range walked {
		if walked[i].Key != listed[i].Key {
			t.Fatalf("entry %d: Walk %q, List %q (a key missing or twice)", i, walked[i].Key, listed[i].Key)
		}
		if walked[i].Value != nil {
			t.Errorf("Walk returned a value for %q", walked[i].Key)
		}
		if !reflect.DeepEqual(walked[i].Info, listed[i].Info) {
			t.Errorf("%s: Walk's Info %+v, List's %+v", walked[i].Key, walked[i].Info, listed[i].Info)
		}
	}

	stop := errors.New("enough")
	calls := 0
	err = w.Walk(t.Context(), func([]backend.Entry) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("Walk with fn failing at once: %v after %d calls; want fn's error as it is, after 1 call", err, calls)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	seen := 0
	err = w.Walk(ctx, func(batch []backend.Entry) error {
		seen += len(batch)
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen >= len(listed) {
		t.Errorf("Walk with a cancelled context: %v after %d of %d entries; want context.Canceled before the end", err, seen, len(listed))
	}
}
