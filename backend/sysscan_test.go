package backend_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
)

// ScanSys on a store without the capability lists and loads: the same
// records, with their data, as the store's own scan gives.
func TestScanSysFallback(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	for _, n := range []string{"a/1", "a/2", "ab", "b/1"} {
		if err := m.SaveSys(ctx, n, []byte("data of "+n)); err != nil {
			t.Fatal(err)
		}
	}
	plain := struct{ backend.SysStore }{m} // hides ScanSys
	if _, ok := backend.SysStore(plain).(backend.SysScanner); ok {
		t.Fatal("the wrapper still has ScanSys")
	}
	for _, prefix := range []string{"a/", "a", "", "c"} {
		got, err := backend.ScanSys(ctx, plain, prefix)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.ScanSys(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ScanSys(%q) by fallback = %v, want %v", prefix, got, want)
		}
	}
}
