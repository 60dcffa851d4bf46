package session

import (
	"testing"
	"unsafe"
)

// TestFileRecordSize guards the per-file record a session keeps for every
// indexed key (100,000 keys: 100,000 records): a field added without
// packing moves it to a larger allocation size class.
func TestFileRecordSize(t *testing.T) {
	// 224: the stored version a file was read as carries the store's
	// revision (backend.Version.Rev, for shared stores) since issue 16,
	// which took the record from the 208-byte size class to this one.
	if got, budget := unsafe.Sizeof(file{}), uintptr(224); got > budget {
		t.Errorf("file is %d bytes, over its budget of %d (the 224-byte size class): pack the new field or move a rare one out", got, budget)
	}
}
