package session

import (
	"testing"
	"unsafe"
)

// TestFileRecordSize guards the per-file record a session keeps for every
// indexed key (100,000 keys: 100,000 records): a field added without
// packing moves it to a larger allocation size class.
func TestFileRecordSize(t *testing.T) {
	if got, budget := unsafe.Sizeof(file{}), uintptr(208); got > budget {
		t.Errorf("file is %d bytes, over its budget of %d (the 208-byte size class): pack the new field or move a rare one out", got, budget)
	}
}
