package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkRecords compares the Log's view of its records with the store's:
// the listing and sizes (which must come from memory: no LoadSys) and
// every record's bytes.
func checkRecords(t *testing.T, l *Log, sys *memSys) {
	t.Helper()
	es, err := sys.st.ListSys(t.Context(), "events")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range es {
		if strings.HasPrefix(e.Key, chunkPrefix) || e.Key == headName {
			want = append(want, e.Key)
		}
	}
	loads := sys.loads.Load()
	got := l.RecordNames("events")
	if !slices.Equal(got, want) {
		t.Fatalf("RecordNames: got %q, want the store's %q", got, want)
	}
	if chunks := l.RecordNames(chunkPrefix); !slices.Equal(chunks, slices.DeleteFunc(slices.Clone(want), func(n string) bool { return n == headName })) {
		t.Errorf("RecordNames(%q): got %q", chunkPrefix, chunks)
	}
	for _, e := range es {
		if !slices.Contains(want, e.Key) {
			continue
		}
		if size, ok := l.RecordSize(e.Key); !ok || size != e.Info.Size {
			t.Errorf("RecordSize(%s): got %d, %v; want the store's %d", e.Key, size, ok, e.Info.Size)
		}
	}
	if n := sys.loads.Load() - loads; n != 0 {
		t.Errorf("listing and sizes made %d LoadSys calls, want none (a getattr asks for them)", n)
	}
	for _, name := range want {
		b, err := l.ReadRecord(t.Context(), name)
		if err != nil {
			t.Errorf("ReadRecord(%s): %v", name, err)
			continue
		}
		if w := sys.get(t, name); !bytes.Equal(b, w) {
			t.Errorf("ReadRecord(%s): got %d bytes, want the store's %d", name, len(b), len(w))
		}
	}
	for _, name := range []string{"events/nope", "events.damaged/x", "other"} {
		if _, ok := l.RecordSize(name); ok {
			t.Errorf("RecordSize(%s): found, want not", name)
		}
		if _, err := l.ReadRecord(t.Context(), name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadRecord(%s): got %v, want fs.ErrNotExist", name, err)
		}
	}
}

func TestRecords(t *testing.T) {
	t.Parallel()
	t.Run("empty", func(t *testing.T) {
		sys := newMemSys()
		l := openLog(t, sys)
		checkRecords(t, l, sys)
		if got := l.RecordNames(""); len(got) != 0 {
			t.Errorf("RecordNames of an empty log: got %q", got)
		}
	})
	t.Run("appends", func(t *testing.T) {
		sys := newMemSys()
		l := openLog(t, sys)
		for _, n := range []int{1, 10, ChunkEvents - 11, 1, 2*ChunkEvents + 5} {
			mustAppend(t, l, evsAt(0, n, nil))
			checkRecords(t, l, sys)
		}
		// The tail and the head come from memory.
		names := l.RecordNames(chunkPrefix)
		loads := sys.loads.Load()
		for _, name := range []string{names[len(names)-1], headName} {
			if _, err := l.ReadRecord(t.Context(), name); err != nil {
				t.Fatal(err)
			}
		}
		if n := sys.loads.Load() - loads; n != 0 {
			t.Errorf("reading the tail and the head made %d LoadSys calls, want none", n)
		}
		checkRecords(t, openLog(t, sys), sys)
	})
	t.Run("damaged tail", func(t *testing.T) {
		sys := newMemSys()
		l := openLog(t, sys)
		mustAppend(t, l, evsAt(0, 10, nil))
		names := sys.chunkNames(t)
		last := names[len(names)-1]
		sys.put(t, last, append(sys.get(t, last), `{"seq":11,"ti`...))
		l2 := openLogAt(t, sys, func() time.Time { return epoch.Add(time.Hour) })
		checkRecords(t, l2, sys) // the tail as the store holds it, torn
		mustAppend(t, l2, evsAt(10, 3, nil))
		checkRecords(t, l2, sys)
	})
	t.Run("damaged head", func(t *testing.T) {
		sys := newMemSys()
		mustAppend(t, openLog(t, sys), evsAt(0, 10, nil))
		sys.put(t, headName, []byte("not json"))
		l := openLog(t, sys)
		checkRecords(t, l, sys)
		mustAppend(t, l, evsAt(10, 1, nil))
		checkRecords(t, l, sys)
	})
	for _, withDelete := range []bool{true, false} {
		t.Run(fmt.Sprintf("failed append, DeleteSys=%v", withDelete), func(t *testing.T) {
			mem := newMemSys()
			var sys Sys = mem
			if !withDelete {
				sys = noDelete{mem}
			}
			l := openLog(t, sys)
			mustAppend(t, l, evsAt(0, ChunkEvents-2, nil))
			// The tail and a new chunk land, the head fails.
			mem.setFail(func(op, name string) error {
				if op == "save" && name == headName {
					return errInjected
				}
				return nil
			})
			if _, err := l.Append(t.Context(), evsAt(0, 30, nil)); !errors.Is(err, errInjected) {
				t.Fatalf("Append: got %v, want the injected error", err)
			}
			checkRecords(t, l, mem)
			mem.setFail(nil)
			mustAppend(t, l, evsAt(0, 1, nil)) // removes the leftover
			checkRecords(t, l, mem)
			checkRecords(t, openLog(t, sys), mem)
		})
	}
}
