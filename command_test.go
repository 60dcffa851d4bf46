package memfs_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/internal/usererr"
)

// Cat prints each value in turn and stops at the first key it cannot
// print, saying why: a missing key (memfs ls), a transient editor file
// (never stored), any other error as it is.
func TestCat(t *testing.T) {
	values := map[string]string{"a.md": "one\n", "b.md": "two\n"}
	value := func(k string) ([]byte, error) {
		switch v, ok := values[k]; {
		case ok:
			return []byte(v), nil
		case k == "bad":
			return nil, errors.New("disk on fire")
		case k == "../x":
			return nil, backend.ErrInvalidKey
		}
		return nil, &fs.PathError{Op: "open", Path: k, Err: fs.ErrNotExist}
	}
	tests := []struct {
		name    string
		keys    []string
		want    string
		wantErr string // a part of the error; "" for none
	}{
		{"values", []string{"a.md", "b.md"}, "one\ntwo\n", ""},
		{"missing", []string{"a.md", "c.md", "b.md"}, "one\n", "memfs ls lists the keys"},
		{"transient", []string{".a.md.swp"}, "", "cat: .a.md.swp: a transient editor file"},
		{"invalid", []string{"../x"}, "", "keys are relative slash-separated paths"},
		{"other", []string{"bad"}, "", "disk on fire"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := memfs.Cat(&out, tt.keys, value)
			if out.String() != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Cat(%q) printed %q, %v; want %q and an error with %q", tt.keys, out.String(), err, tt.want, tt.wantErr)
			}
		})
	}
}

// RmMissing ignores a missing key with force; without, it refuses it as
// rm tells it (usererr.Rm), a transient name with its own reason.
func TestRmMissing(t *testing.T) {
	if err := memfs.RmMissing(true)("nope.md"); err != nil {
		t.Errorf("RmMissing(force)(nope.md) = %v, want nil", err)
	}
	for key, want := range map[string]string{
		"nope.md":   "rm: nope.md: no such key (memfs ls lists them; -r removes a prefix)",
		".a.md.swp": "rm: .a.md.swp: a transient editor file lives only in a mounted session (see --transient); not stored",
		"new\nline": `rm: "new\nline": no such key`,
	} {
		if err := usererr.Rm(memfs.RmMissing(false)(key)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("RmMissing(%q) as rm tells it: %v, want %q", key, err, want)
		}
	}
}

// Finish reports the work's error, and keeps what a writing program did
// before it: Close flushes it, the context's cancellation aside. A
// reading program that succeeded reports its Close.
func TestCommandFinish(t *testing.T) {
	st := memstore.New()
	journal := filepath.Join(t.TempDir(), "journal")
	open := func(co memfs.CommandOptions) *memfs.FS {
		t.Helper()
		s, err := st.Reopen()
		if err != nil {
			t.Fatal(err)
		}
		o := co.Options()
		o.JournalPath = journal
		f, err := memfs.Open(t.Context(), s, o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	st.Close()
	write := memfs.CommandOptions{Access: memfs.WriteStore}
	f := open(write)
	if err := f.Session().Set("memory/a.md", []byte("kept\n")); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the work failed")
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // a signal ended the work
	if err := write.Finish(ctx, f, failed); err != failed {
		t.Errorf("Finish(the work's error) = %v, want it alone", err)
	}
	read := memfs.CommandOptions{Access: memfs.ReadStore}
	f = open(read)
	if err := f.Session().Resolve(t.Context(), "memory/a.md"); err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Session().Get("memory/a.md"); !ok || string(v) != "kept\n" {
		t.Errorf("after a failed write, the store holds %q (%v); want what the work wrote before its error", v, ok)
	}
	if err := read.Finish(ctx, f, nil); err != nil {
		t.Errorf("Finish of a reading program = %v", err)
	}
}
