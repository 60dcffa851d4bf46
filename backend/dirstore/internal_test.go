package dirstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/storetest"
)

// The strategies BenchmarkSave compares must all be correct, or the
// comparison means nothing.
func TestStrategiesConform(t *testing.T) {
	for _, st := range []struct {
		name string
		s    strategy
	}{
		{"naive", naive},
		{"syncfs", batchedSyncfs},
	} {
		t.Run(st.name, func(t *testing.T) {
			if testing.Short() && st.s == naive {
				t.Skip("-short: 3,000 serial fsyncs take seconds")
			}
			storetest.RunWith(t, func(t *testing.T, dir string) (backend.Store, error) {
				return open(dir, options{strategy: st.s})
			}, storetest.Options{HostTimes: true, HostDevices: true, ImplicitDirs: true, External: ExternalWrite})
		})
	}
}

// ExternalWrite is another program writing the store's directory: the
// conformance suite's Options.External (exported for dirstore_test).
func ExternalWrite(t *testing.T, dir, key string, value []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if value == nil {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, value, 0o644); err != nil {
		t.Fatal(err)
	}
}
