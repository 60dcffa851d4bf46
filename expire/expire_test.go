package expire_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/memfs/memfs/expire"
	"github.com/memfs/memfs/meta"
)

func TestDeadline(t *testing.T) {
	m := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		x    map[string][]byte
		def  time.Duration
		want time.Time // zero: never
		bad  bool
	}{
		{"none", nil, 0, time.Time{}, false},
		{"ttl", map[string][]byte{meta.TTL: []byte("90s")}, 0, m.Add(90 * time.Second), false},
		{"ttl over the route's", map[string][]byte{meta.TTL: []byte("1h")}, time.Minute, m.Add(time.Hour), false},
		{"the route's", nil, time.Minute, m.Add(time.Minute), false},
		{"expires over ttl", map[string][]byte{meta.TTL: []byte("1h"), meta.Expires: []byte("2027-01-01T00:00:00Z")}, 0,
			time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"bad ttl", map[string][]byte{meta.TTL: []byte("soon")}, time.Minute, time.Time{}, true},
		{"zero ttl", map[string][]byte{meta.TTL: []byte("0s")}, 0, time.Time{}, true},
		{"bad expires", map[string][]byte{meta.Expires: []byte("tomorrow")}, 0, time.Time{}, true},
	} {
		at, ok, err := expire.Deadline(m, c.x, c.def)
		if (err != nil) != c.bad || ok == c.want.IsZero() || !at.Equal(c.want) {
			t.Errorf("%s: Deadline = %v %v %v, want %v (error %v)", c.name, at, ok, err, c.want, c.bad)
		}
	}
	for _, bad := range []string{"soon", "-1s", "0"} {
		if meta.Validate(meta.TTL, []byte(bad)) == nil {
			t.Errorf("a ttl of %q is accepted", bad)
		}
	}
	if meta.Validate(meta.Expires, []byte("2026-12-06T10:00:00+01:00")) != nil {
		t.Error("an RFC 3339 time with an offset is refused")
	}
}

// TestQueueIsAModel: random sets, removals and takes of due keys, checked
// against a map of deadlines.
func TestQueueIsAModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	var q expire.Queue
	model := map[string]time.Time{}
	base := time.Unix(1_800_000_000, 0)
	now := base
	for i := 0; i < 20000; i++ {
		key := fmt.Sprintf("d%d/k%d", r.IntN(5), r.IntN(300))
		switch r.IntN(6) {
		case 0, 1, 2:
			at := now.Add(time.Duration(r.IntN(1000)) * time.Millisecond)
			q.Set(key, at)
			model[key] = at
		case 3:
			q.Remove(key)
			delete(model, key)
		case 4:
			dir := fmt.Sprintf("d%d", r.IntN(5))
			q.RemovePrefix(dir)
			for k := range model {
				if len(k) > len(dir) && k[:len(dir)+1] == dir+"/" {
					delete(model, k)
				}
			}
		case 5:
			now = now.Add(time.Duration(r.IntN(300)) * time.Millisecond)
			var want []string
			due := map[string]time.Time{}
			for k, at := range model {
				if !at.After(now) {
					want = append(want, k)
					due[k] = at
					delete(model, k)
				}
			}
			got := q.Due(now)
			for j := 1; j < len(got); j++ {
				if due[got[j]].Before(due[got[j-1]]) {
					t.Fatalf("step %d: Due gave %s (%v) after %s (%v): not soonest first", i, got[j], due[got[j]], got[j-1], due[got[j-1]])
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: Due = %v, want %v", i, got, want)
			}
		}
		if q.Len() != len(model) {
			t.Fatalf("step %d: Len %d, model %d", i, q.Len(), len(model))
		}
		if at, ok := q.Next(); ok != (len(model) > 0) || (ok && !at.Equal(minOf(model))) {
			t.Fatalf("step %d: Next = %v %v, want %v", i, at, ok, minOf(model))
		}
	}
}

func minOf(m map[string]time.Time) time.Time {
	var least time.Time
	for _, at := range m {
		if least.IsZero() || at.Before(least) {
			least = at
		}
	}
	return least
}

// BenchmarkQueue100k: what expiry costs at 100,000 keys with a deadline:
// filling the queue (a mount's start), then a change of one key (a
// write renews it) and a look at the next deadline, per op.
func BenchmarkQueue100k(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("memory/n%06d.md", i)
	}
	base := time.Unix(1_800_000_000, 0)
	b.Run("fill", func(b *testing.B) {
		for b.Loop() {
			var q expire.Queue
			for i, k := range keys {
				q.Set(k, base.Add(time.Duration(i*7919%n)*time.Second))
			}
		}
	})
	b.Run("renew+next", func(b *testing.B) {
		var q expire.Queue
		for i, k := range keys {
			q.Set(k, base.Add(time.Duration(i*7919%n)*time.Second))
		}
		i := 0
		for b.Loop() {
			q.Set(keys[i%n], base.Add(time.Duration(n+i)*time.Second))
			q.Next()
			i++
		}
	})
}
