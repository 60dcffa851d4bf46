package dirstore_test

import (
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/storetest"
)

func TestReadOnly(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, dir string, readOnly bool) (backend.SysStore, error) {
		if readOnly {
			return dirstore.OpenReadOnly(dir)
		}
		return dirstore.Open(dir)
	})
}
