package badgerstore

import (
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/storetest"
)

func TestReadOnly(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, dir string, readOnly bool) (backend.SysStore, error) {
		return Open(dir, Options{ReadOnly: readOnly})
	})
}
