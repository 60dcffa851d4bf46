package storetest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

// testSysScan: a SysScanner's ScanSys returns, under a prefix, exactly the
// records ListSys lists, each with the bytes LoadSys returns (a record
// over etcd's 1 MiB head included), deleted ones gone, keys never.
func (s suite) testSysScan(t *testing.T) {
	st, ok := s.openT(t, t.TempDir()).(backend.SysScanner)
	if !ok {
		t.Skip("the store is not backend.SysScanner")
	}
	ctx := t.Context()
	save(t, st, entry("h/v/a", []byte("a key, not a record")))
	recs := map[string][]byte{
		"h/v/a/001": []byte("one"),
		"h/v/a/002": bytes.Repeat([]byte("large "), 1<<18), // 1.5 MiB
		"h/v/a/003": {},
		"h/v/ab":    []byte("a sibling under the prefix"),
		"h/v/b/001": []byte("under another directory"),
		"h/w/001":   []byte("outside the prefix"),
		"h/v/gone":  []byte("deleted"),
	}
	for n, v := range recs {
		if err := st.SaveSys(ctx, n, v); err != nil {
			t.Fatalf("SaveSys %s: %v", n, err)
		}
	}
	if err := st.DeleteSys(ctx, "h/v/gone"); err != nil {
		t.Fatal(err)
	}
	delete(recs, "h/v/gone")
	for _, prefix := range []string{"h/v/a/", "h/v/a", "h/v/", "h/", "", "h/v/a/00", "h/x/", "nothing/here/"} {
		got, err := st.ScanSys(ctx, prefix)
		if err != nil {
			t.Fatalf("ScanSys(%q): %v", prefix, err)
		}
		var names, want []string
		for _, e := range got {
			names = append(names, e.Key)
			if w, ok := recs[e.Key]; !ok || !bytes.Equal(e.Value, w) || e.Value == nil || e.Info.Size != int64(len(w)) {
				t.Errorf("ScanSys(%q): %s = %d bytes (size %d, nil %v), want %d bytes", prefix, e.Key, len(e.Value), e.Info.Size, e.Value == nil, len(w))
			}
		}
		l, err := st.ListSys(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range l {
			want = append(want, e.Key)
		}
		if strings.Join(names, " ") != strings.Join(want, " ") {
			t.Errorf("ScanSys(%q) = %q, ListSys = %q", prefix, names, want)
		}
	}
	if got, err := st.ScanSys(ctx, "h/v/a/"); err != nil || len(got) != 3 {
		t.Errorf("ScanSys(h/v/a/) = %d records, %v; want 3", len(got), err)
	}
}
