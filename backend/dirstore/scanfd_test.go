package dirstore_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/memfs/memfs/backend/dirstore"
)

// TestScanSysManyDirectories: a scan of more directories than the
// process may open files at once reads them all: it keeps only the
// directory it reads open (it held one descriptor per directory until
// the end, and failed with EMFILE).
func TestScanSysManyDirectories(t *testing.T) {
	s, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	const dirs = 300
	for i := range dirs {
		if err := s.SaveSys(ctx, fmt.Sprintf("history/v/k%03d/001", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = uint64(len(fds) + dirs/2) // room for the open files and some, not for a descriptor per directory
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was)
	es, err := s.ScanSys(ctx, "history/v/")
	if err != nil || len(es) != dirs {
		t.Fatalf("ScanSys of %d directories under a limit of %d files: %d records, %v", dirs, low.Cur, len(es), err)
	}
}
