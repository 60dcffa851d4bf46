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
			storetest.RunWith(t, func(t *testing.T, dir string) (backend.Store, error) {
				return open(dir, options{strategy: st.s})
			}, storetest.Options{HostTimes: true, HostDevices: true, ImplicitDirs: true})
		})
	}
}
