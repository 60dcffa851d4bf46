package history_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/meta"
)

// noteVersion is the version a flush records for one ~1 KiB note.
func noteVersion(seq uint64, i int) history.Version {
	e := entry(fmt.Sprintf("memory/notes/n%05d.md", i), strings.Repeat("x", 1024), 0o644)
	now := time.Date(2026, 12, 6, 11, 0, 0, 123456789, time.UTC)
	e.Info.MTime, e.Info.ATime, e.Info.CTime = now, now, now
	v := history.NewVersion(seq, history.OpWrite, e, history.AddrOf(e.Value))
	v.Writer = meta.WriterInfo{UID: 1000, PID: 4242, Comm: "claude", Agent: "agent-7"}
	v.Session = "01JX5Q2Z8N3C4V5B6M7K8J9H0G"
	return v
}

// A version record is binary, less than half its JSON: the records are
// most of what history adds to a flush beyond the values (BENCHMARKS.md).
func TestVersionRecordIsCompact(t *testing.T) {
	h := history.New(memstore.New())
	v := noteVersion(123456, 42)
	recs, err := h.PlanVersions([]history.Version{v})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(&v)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a note's version: %d bytes, %d as JSON", len(recs[0].Data), len(js))
	if got := len(recs[0].Data); 2*got > len(js) {
		t.Fatalf("version record of %d bytes, its JSON %d: want under half", got, len(js))
	}
}

// Binary records round-trip every field, whatever its value; JSON records
// an older memfs wrote read as before, beside binary ones of the same key.
func TestVersionRecordsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 6))
	ops := []string{history.OpWrite, history.OpDelete, history.OpRename, history.OpAttr, history.OpConflict}
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		ctx := t.Context()
		var want []history.Version
		for i := range 40 {
			v := noteVersion(uint64(i+1), 0)
			v.Op = ops[r.IntN(len(ops))]
			if v.Op == history.OpRename {
				v.OldKey = fmt.Sprintf("old/%d", i)
			}
			if r.IntN(3) == 0 {
				v.Addr = history.Addr{}
			}
			v.Size, v.Mode = r.Int64N(1<<40)-1, fs.FileMode(r.Uint32())
			v.UID, v.GID, v.Rdev = r.Uint32(), r.Uint32(), r.Uint64()
			v.MTime, v.ATime, v.CTime = r.Int64()-r.Int64(), int64(r.IntN(2)), -r.Int64N(1<<50)
			v.Link = strings.Repeat("l", r.IntN(3))
			if r.IntN(2) == 0 {
				v.XAttrs = nil
			} else {
				v.XAttrs = map[string][]byte{"user.memfs.a": {}, "user.memfs.b": []byte("\x00\xff")}
			}
			v.Writer = meta.WriterInfo{UID: r.Uint32(), PID: r.Uint32(), Comm: strings.Repeat("c", r.IntN(3))}
			v.Session = strings.Repeat("s", r.IntN(3))
			v.Redacted = r.IntN(4) == 0
			if i%2 == 0 {
				// As an older memfs wrote it: JSON, under the same name.
				b, err := json.Marshal(&v)
				if err != nil {
					t.Fatal(err)
				}
				name := history.VersionName(v.Key, v.Seq)
				mustSave(t, s, name, b)
				mustSave(t, s, "history/s/"+fmt.Sprintf("%020d", v.Seq), []byte(groupLine(v)))
			} else {
				recs, err := h.PlanVersions([]history.Version{v})
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Write(ctx, recs); err != nil {
					t.Fatal(err)
				}
			}
			want = append(want, v)
		}
		got, err := h.Versions(ctx, "memory/notes/n00000.md")
		if err != nil {
			t.Fatal(err)
		}
		// Renames chain in their old keys' versions, of which there are
		// none: the list is want, with Prev set.
		for i := range got {
			got[i].Prev, got[i].PrevKey = 0, ""
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Versions:\n got %+v\nwant %+v", got, want)
		}
	})
}

func groupLine(v history.Version) string {
	line := fmt.Sprintf("%d %s %s", v.Seq, v.Op, history.KeyHash(v.Key))
	if v.Op == history.OpRename {
		line += " " + history.KeyHash(v.OldKey)
	}
	return line + "\n"
}

// A binary record cut short, with bytes after its end, or naming another
// version is reported as damaged, naming the record.
func TestVersionRecordDamage(t *testing.T) {
	s := memstore.New()
	h := history.New(s)
	v := noteVersion(7, 1)
	recs, err := h.PlanVersions([]history.Version{v})
	if err != nil {
		t.Fatal(err)
	}
	name := recs[0].Name
	data := recs[0].Data
	other, err := h.PlanVersions([]history.Version{noteVersion(8, 1)})
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{
		"cut":      data[:len(data)-1],
		"trailing": append(append([]byte{}, data...), 0),
		"empty":    {},
		"other":    other[0].Data,
		"format":   append([]byte{0x7f}, data[1:]...),
	} {
		t.Run(what, func(t *testing.T) {
			mustSave(t, s, name, b)
			_, err := h.Versions(t.Context(), v.Key)
			wantCorrupt(t, err, name)
		})
	}
}
