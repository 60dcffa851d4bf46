package listing

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

func TestMode(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		0o644:                    "-rw-r--r--",
		fs.ModeDir | 0o755:       "drwxr-xr-x",
		fs.ModeSymlink | 0o777:   "lrwxrwxrwx",
		fs.ModeNamedPipe | 0o600: "prw-------",
		fs.ModeSocket | 0o700:    "srwx------",
		fs.ModeDevice | fs.ModeCharDevice | 0o400: "cr--------",
		fs.ModeDevice | 0o660:                     "brw-rw----",
		fs.ModeSetuid | 0o755:                     "-rwsr-xr-x",
		fs.ModeSetuid | 0o644:                     "-rwSr--r--",
		fs.ModeSetgid | 0o750:                     "-rwxr-s---",
		fs.ModeDir | fs.ModeSticky | 0o777:        "drwxrwxrwt",
		fs.ModeDir | fs.ModeSticky | 0o776:        "drwxrwxrwT",
	} {
		if got := Mode(m); got != want {
			t.Errorf("Mode(%v) = %q, want %q", m, got, want)
		}
	}
}

func TestWrite(t *testing.T) {
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	entries := []backend.Entry{
		{Key: "d", Info: backend.Info{Mode: fs.ModeDir | 0o755, MTime: mt}},
		{Key: "d/a.md", Info: backend.Info{Mode: 0o644, Size: 3, MTime: mt, UID: 7, GID: 8,
			XAttrs: map[string][]byte{meta.Tags: []byte("x,y"), meta.Importance: []byte("0.5")}}},
		{Key: "d/l", Value: []byte("a.md"), Info: backend.Info{Mode: fs.ModeSymlink | 0o777, MTime: mt}},
		{Key: "d/tty", Info: backend.Info{Mode: fs.ModeDevice | fs.ModeCharDevice | 0o620, Rdev: uint64(unix.Mkdev(4, 1)), MTime: mt}},
		{Key: "skip", Info: backend.Info{Mode: 0o644, MTime: mt}},
		{Key: "new\nline", Info: backend.Info{Mode: 0o644, MTime: mt}},
	}
	match := func(e backend.Entry) bool { return e.Key != "skip" }
	var short bytes.Buffer
	if err := Write(&short, entries, match, false); err != nil {
		t.Fatal(err)
	}
	if got, want := short.String(), "d/a.md\nd/l\nd/tty\n\"new\\nline\"\n"; got != want {
		t.Errorf("short listing:\n%s\nwant:\n%s", got, want)
	}
	var long bytes.Buffer
	if err := Write(&long, entries, match, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(long.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("long listing has %d lines, want 5:\n%s", len(lines), long.String())
	}
	for i, want := range []string{
		"drwxr-xr-x 0 0 0 2026-01-02 03:04:05  d",
		"-rw-r--r-- 7 8 3 2026-01-02 03:04:05  d/a.md  tags=x,y  importance=0.5",
		"lrwxrwxrwx 0 0 0 2026-01-02 03:04:05  d/l -> a.md",
		"crw--w---- 0 0 4, 1 2026-01-02 03:04:05  d/tty",
	} {
		if got := strings.Join(strings.Fields(lines[i]), " "); got != strings.Join(strings.Fields(want), " ") {
			t.Errorf("long line %d = %q, want %q", i, lines[i], want)
		}
	}
}

// ls -l shows an entry's memory type and session after its tags; values
// not of their attribute's form (written into a directory store by hand)
// are not shown.
// Ls lists what is under the filter's prefix, as ls(1) lists a
// directory, and what the filter matches.
func TestLs(t *testing.T) {
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	file := func(key, tags string) backend.Entry {
		return backend.Entry{Key: key, Info: backend.Info{Mode: 0o644, MTime: mt, XAttrs: map[string][]byte{meta.Tags: []byte(tags)}}}
	}
	entries := []backend.Entry{file("memory/project/a.md", "x"), file("memory/project/b.md", "y"), file("memory/project.md", "x")}
	for _, tt := range []struct {
		f    meta.Filter
		want string
	}{
		{meta.Filter{Prefix: "memory/project"}, "memory/project/a.md\nmemory/project/b.md\n"},
		{meta.Filter{Prefix: "memory/proj", Tags: []string{"x"}}, "memory/project/a.md\nmemory/project.md\n"},
		{meta.Filter{}, "memory/project/a.md\nmemory/project/b.md\nmemory/project.md\n"},
	} {
		var out bytes.Buffer
		if err := Ls(&out, entries, tt.f, false); err != nil || out.String() != tt.want {
			t.Errorf("Ls(%+v) = %q, %v; want %q", tt.f, out.String(), err, tt.want)
		}
	}
}

func TestWriteTypeAndSession(t *testing.T) {
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	entries := []backend.Entry{
		{Key: "a.md", Info: backend.Info{Mode: 0o644, MTime: mt,
			XAttrs: map[string][]byte{meta.Tags: []byte("x"), meta.Type: []byte("decision"), meta.Session: []byte("s-1")}}},
		{Key: "b.md", Info: backend.Info{Mode: 0o644, MTime: mt,
			XAttrs: map[string][]byte{meta.Type: []byte("two words"), meta.Session: []byte("a/b")}}},
	}
	var long bytes.Buffer
	if err := Write(&long, entries, func(backend.Entry) bool { return true }, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(long.String(), "\n"), "\n")
	for i, want := range []string{
		"-rw-r--r-- 0 0 0 2026-01-02 03:04:05  a.md  tags=x  type=decision  session=s-1",
		"-rw-r--r-- 0 0 0 2026-01-02 03:04:05  b.md",
	} {
		if i >= len(lines) {
			t.Fatalf("long listing has %d lines:\n%s", len(lines), long.String())
		}
		if got := strings.Join(strings.Fields(lines[i]), " "); got != strings.Join(strings.Fields(want), " ") {
			t.Errorf("long line %d = %q, want %q", i, lines[i], want)
		}
	}
}

func TestUnder(t *testing.T) {
	keys := []string{"memory", "memory/project", "memory/project/a.md", "memory/project.md", "memory/projects/b.md"}
	id := func(k string) string { return k }
	for _, tt := range []struct{ prefix, want string }{
		{"memory/project", "memory/project memory/project/a.md"},
		{"memory/project/", "memory/project memory/project/a.md"},
		{"memory/project.md", "memory/project.md"},
		{"memory/proj", "memory/project memory/project/a.md memory/project.md memory/projects/b.md"},
		{"", strings.Join(keys, " ")},
	} {
		under := Under(tt.prefix, keys, id)
		var got []string
		for _, k := range keys {
			if under(k) {
				got = append(got, k)
			}
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("Under(%q) lists %q, want %q", tt.prefix, g, tt.want)
		}
	}
}
