package dirstore

import (
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
			storetest.Run(t, func(t *testing.T, dir string) (backend.Store, error) {
				return open(dir, options{strategy: st.s})
			})
		})
	}
}

// A directory that a concurrent Delete pruned is synced through its nearest
// surviving ancestor.
func TestSyncDirOfPrunedDirectory(t *testing.T) {
	s, err := open(t.TempDir(), options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.syncDir("gone/deeper"); err != nil {
		t.Fatalf("syncDir of a missing directory = %v, want nil", err)
	}
}
