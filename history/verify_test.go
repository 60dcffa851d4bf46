package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// Verify reads every version's value back: a flipped byte in an object, a
// missing chunk and a damaged version record are each reported, naming
// the versions they hurt, and left as found; intact ones are not.
func TestVerify(t *testing.T) {
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		f := newGCFixture(t, s)
		ctx := t.Context()
		now := time.Now()
		f.write("memory/good.md", []byte("intact"), now)
		flipped := f.write("memory/flip.md", []byte("will be flipped"), now)
		f.write("memory/big.md", []byte(strings.Repeat("a large value, chunked\n", 5000)), now)
		f.write("memory/bad.md", []byte("its record will be damaged"), now)
		if v, err := f.h.Verify(ctx); err != nil || len(v.Damage) != 0 || v.Versions != 4 {
			t.Fatalf("Verify of an intact history = %+v, %v", v, err)
		}
		obj := "history/o/" + flipped.Addr.String()
		b, err := s.LoadSys(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		b[0] ^= 1
		mustSave(t, s, obj, b)
		chunks, err := s.ListSys(ctx, "history/o/")
		if err != nil {
			t.Fatal(err)
		}
		var chunk string
		for _, c := range chunks { // a chunk of the big value: not the other values' objects
			if c.Info.Size > 1000 {
				chunk = c.Key
			}
		}
		if err := s.DeleteSys(ctx, chunk); err != nil {
			t.Fatal(err)
		}
		recs, err := s.ListSys(ctx, "history/v/")
		if err != nil {
			t.Fatal(err)
		}
		var badRec string
		for _, r := range recs {
			if got, _ := s.LoadSys(ctx, r.Key); strings.Contains(string(got), "memory/bad.md") {
				badRec = r.Key
			}
		}
		mustSave(t, s, badRec, []byte("{not json"))
		v, err := f.h.Verify(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(v.Damage, "\n")
		if len(v.Damage) != 3 || !strings.Contains(all, "memory/flip.md@") || !strings.Contains(all, "memory/big.md@") || !strings.Contains(all, badRec) || strings.Contains(all, "good.md") {
			t.Errorf("Verify = %d damaged:\n%s\nwant the flipped object, the missing chunk and the damaged record, each named", len(v.Damage), all)
		}
		if got, _ := s.LoadSys(ctx, obj); string(got) != string(b) {
			t.Errorf("Verify changed the damaged object")
		}
		if !strings.Contains(v.Summary(), "3 damaged") {
			t.Errorf("Summary = %q", v.Summary())
		}
	})
}
