package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTruncatedValueLogIsNeverAnEmptyRead: a badger store whose value log
// lost its tail must not hand out an empty (or short) value for a file
// that ls -l shows whole: the read fails, naming the damage, and the other
// values stay readable.
func TestTruncatedValueLogIsNeverAnEmptyRead(t *testing.T) {
	dir := t.TempDir()
	store := "badger:" + dir
	big := bytes.Repeat([]byte("a line of a long note that goes to the value log\n"), 5400) // 270,000 bytes
	mustRun(t, "small\n", "put", "--store", store, "memory/small.md")
	mustRun(t, string(big), "put", "--store", store, "memory/big.md")
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if len(vlogs) == 0 {
		t.Fatal("no value log")
	}
	for _, v := range vlogs {
		fi, err := os.Stat(v)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 100_000 {
			if err := os.Truncate(v, fi.Size()-200_000); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, errOut, err := run(t, "", "cat", "--store", store, "memory/big.md")
	if err == nil {
		t.Fatalf("memfs cat of a value the value log lost: exit 0 with %d bytes", len(out))
	}
	if msg := err.Error() + errOut; !strings.Contains(msg, "damaged") || !strings.Contains(msg, "memory/big.md") {
		t.Errorf("memfs cat: %q, want an error naming the key and the damage", msg)
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/small.md"); got != "small\n" {
		t.Errorf("the undamaged value: %q", got)
	}
}
