package quota_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memfs/memfs/quota"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]quota.Limit{
		"memory/=100MiB,10000files,1MiB":      {Prefix: "memory/", Bytes: 100 << 20, Files: 10000, FileSize: 1 << 20},
		"memory/=bytes=1KiB,files=2,file=512": {Prefix: "memory/", Bytes: 1024, Files: 2, FileSize: 512},
		"/=1GiB":                              {Bytes: 1 << 30},
		"team/notes/=5files":                  {Prefix: "team/notes/", Files: 5},
	} {
		got, err := quota.Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"memory=1MiB", "memory/=", "memory/=0", "memory/=1MiB,2MiB,3MiB", "memory/=lots", "memory/=size=1"} {
		if _, err := quota.Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	// As a flag that splits at commas gives them.
	ls, err := quota.ParseAll([]string{"memory/=100MiB", "10000files", "1MiB", "/=1GiB"})
	if err != nil || len(ls) != 2 || ls[0].FileSize != 1<<20 || ls[1].Bytes != 1<<30 {
		t.Errorf("ParseAll = %+v, %v", ls, err)
	}
}

// TestTrackerIsARecount: random sets and removals; the tracker's usage is
// always a recount's, and Check refuses exactly what would pass a limit.
func TestTrackerIsARecount(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	limits := []quota.Limit{{Prefix: "a/", Bytes: 5000, Files: 20, FileSize: 900}, {Prefix: "a/b/", Files: 5}, {Bytes: 20000}}
	tr := quota.NewTracker(limits)
	sizes := map[string]int64{}
	for i := 0; i < 5000; i++ {
		key := fmt.Sprintf("%s%d", []string{"a/", "a/b/", "c/"}[r.IntN(3)], r.IntN(40))
		switch r.IntN(4) {
		case 0:
			tr.Remove(key)
			delete(sizes, key)
		case 1:
			tr.RemovePrefix("a/b")
			for k := range sizes {
				if strings.HasPrefix(k, "a/b/") {
					delete(sizes, k)
				}
			}
		default:
			size := int64(r.IntN(1000))
			err := tr.Check(key, size)
			after := map[string]int64{}
			for k, v := range sizes {
				after[k] = v
			}
			_, had := after[key]
			after[key] = size
			over := false
			for i, u := range quota.Recount(limits, after) {
				l := limits[i]
				if !strings.HasPrefix(key, l.Prefix) {
					continue
				}
				grew := !had || size > sizes[key]
				over = over || (l.FileSize > 0 && size > l.FileSize) || (l.Files > 0 && !had && u.Files > l.Files) ||
					(l.Bytes > 0 && grew && u.Bytes > l.Bytes)
			}
			if over != (err != nil) {
				t.Fatalf("step %d: Check(%s, %d) = %v, want over %v", i, key, size, err, over)
			}
			var qe *quota.Error
			if err != nil && (!errors.As(err, &qe) || !(errors.Is(err, quota.ErrOver) || errors.Is(err, quota.ErrFileSize))) {
				t.Fatalf("step %d: %v is no *quota.Error", i, err)
			}
			if err == nil {
				tr.Set(key, size)
				sizes[key] = size
			}
		}
		want := quota.Recount(limits, sizes)
		for j, u := range tr.Usage(nil) {
			if u.Bytes != want[j].Bytes || u.Files != want[j].Files {
				t.Fatalf("step %d: limit %d: %d bytes %d files, a recount %d and %d", i, j, u.Bytes, u.Files, want[j].Bytes, want[j].Files)
			}
		}
	}
}

// TestUsageHidesWhatACallerMayNotRead: the sums of a prefix are shown only
// to a caller who may read every file under it; a directory that holds a
// limit's prefix is a move across it.
func TestUsageHidesWhatACallerMayNotRead(t *testing.T) {
	tr := quota.NewTracker([]quota.Limit{{Prefix: "memory/", Bytes: 1 << 20}})
	tr.Set("memory/pub.md", 3)
	tr.Set("memory/private/secret.md", 3000)
	u := tr.Usage(func(k string) bool { return k == "memory/pub.md" })[0]
	if !u.Hidden || u.Bytes != 0 || u.Files != 0 || len(u.Largest) != 1 || u.Largest[0].Key != "memory/pub.md" {
		t.Errorf("usage for a caller who may read pub.md only: %+v", u)
	}
	if u := tr.Usage(nil)[0]; u.Hidden || u.Bytes != 3003 || u.Files != 2 {
		t.Errorf("usage for all: %+v", u)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{{"x", "memory", true}, {"memory", "memory.old", true}, {"memory/a", "memory/b/a", false}, {"memory/a", "a", true}, {"a", "b", false}} {
		if got := tr.Moves(c.a, c.b); got != c.want {
			t.Errorf("Moves(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
