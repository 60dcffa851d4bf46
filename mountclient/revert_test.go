package mountclient_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
)

// A revert through the mount does what the engine's does (memfs.FS.Revert):
// the version's content, mode and tags come back (the tags of the present
// go), and a version to go back to that was redacted is refused with a
// message naming it and --to.
func TestRevertThroughTheMountRestoresTagsAndRefusesRedacted(t *testing.T) {
	_, mnt := mountDir(t)
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	const key = "memory/t.md"
	if err := os.MkdirAll(filepath.Join(mnt, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Each version in one flush: the bytes and the tag, then fsync.
	write := func(v, tag string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(mnt, key), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(v); err != nil {
			t.Fatal(err)
		}
		if err := unix.Fsetxattr(int(f.Fd()), meta.Tags, []byte(tag), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	write("one\n", "t1")
	write("two\n", "t2")
	if _, err := c.Revert(key, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := unix.Getxattr(filepath.Join(mnt, key), meta.Tags, buf)
	if got, _ := c.Cat(key); string(got) != "one\n" || err != nil || string(buf[:n]) != "t1" {
		t.Errorf("after the revert: %q, tags %q (%v); want one with its tags t1, as the engine's revert leaves it", got, buf[:max(n, 0)], err)
	}
	// A store whose versions are one, two (redacted while no mount
	// served it) and one, the present: the revert refuses two.
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName)})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"one\n", "two\n", "one\n"} {
		if err := f.Session().Set(key, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if err := f.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := f.Versions(t.Context(), key)
	if err != nil || len(vs) != 3 {
		t.Fatalf("versions %v, %v; want 3", vs, err)
	}
	two := vs[1].Seq
	if _, err := memfs.RedactVersion(t.Context(), f.Store(), key, two, "test", slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, mnt = mountStoreDir(t, dir)
	if c, err = mountclient.Open(mnt, mountclient.Own); err != nil {
		t.Fatal(err)
	}
	_, err = c.Revert(key, 0)
	if !errors.Is(err, history.ErrRedacted) || !strings.Contains(err.Error(), strconv.FormatUint(two, 10)) || !strings.Contains(err.Error(), "--to") {
		t.Errorf("revert through the mount to redacted version %d: %v; want a refusal naming it and --to", two, err)
	}
	if got, _ := c.Cat(key); string(got) != "one\n" {
		t.Errorf("after the refused revert: %q, want one unchanged", got)
	}
}
