package main

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// An open badger store is sparse: its value log is 512 MiB of which a few
// KiB are written, its memtable log 32 MiB. The holes read as zeros, so
// they hold no secret and no change: the helpers below read a file's data
// regions only (SEEK_DATA/SEEK_HOLE). Reading the holes too cost the
// secret scans and store snapshots of these tests tens of seconds per
// badger store, and minutes under -race.

// forData calls fn with each data region of the file at path, in order,
// and its offset. A file system without SEEK_DATA reports the whole file
// as one region.
func forData(path string, fn func(off int64, b []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	for off := int64(0); off < fi.Size(); {
		start, err := f.Seek(off, unix.SEEK_DATA)
		if errors.Is(err, syscall.ENXIO) {
			return nil // no data after off: a hole to the end
		}
		if err != nil {
			return err
		}
		end, err := f.Seek(start, unix.SEEK_HOLE)
		if err != nil {
			return err
		}
		b := make([]byte, end-start)
		n, err := f.ReadAt(b, start)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if err := fn(start, b[:n]); err != nil {
			return err
		}
		off = end
	}
	return nil
}

// copySparseFile copies src to a new file dst, holes as holes: the copy
// reads as src does.
func copySparseFile(t *testing.T, dst, src string) {
	t.Helper()
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	err = forData(src, func(off int64, b []byte) error {
		_, err := out.WriteAt(b, off)
		return err
	})
	if err == nil {
		err = out.Truncate(fi.Size())
	}
	if err == nil {
		err = out.Close()
	}
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// TestForDataReadsWhatTheFileHolds: the data regions forData reports,
// with zeros in between, are a sparse file's bytes, its holes unread; and
// a sparse copy reads the same.
func TestForDataReadsWhatTheFileHolds(t *testing.T) {
	p := t.TempDir() + "/sparse"
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, 3 << 20, 9<<20 + 17} {
		if _, err := f.WriteAt([]byte("data at an offset"), off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(16 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	check := func(path string) {
		got := make([]byte, len(want))
		read := 0
		err := forData(path, func(off int64, b []byte) error {
			read += len(b)
			copy(got[off:], b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s: the data regions with zeros between them differ from the file", path)
		}
		if read >= len(want) {
			t.Errorf("%s: read %d bytes of a %d-byte sparse file: the holes were read", path, read, len(want))
		}
	}
	check(p)
	cp := p + ".copy"
	copySparseFile(t, cp, p)
	check(cp)
}
