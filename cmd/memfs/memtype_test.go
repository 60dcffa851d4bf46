package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/search"
)

// seedTyped saves notes to a fresh directory store, each with the memory
// type and session of its table row ("" for none), and returns the
// store's --store value.
func seedTyped(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var es []backend.Entry
	for _, n := range []struct{ key, typ, session string }{
		{"memory/a.md", "decision", "s1"},
		{"memory/b.md", "fact", "s1"},
		{"memory/c.md", "decision", "s2"},
		{"memory/d.md", "incident", ""}, // a type some mount added
	} {
		x := map[string][]byte{meta.Type: []byte(n.typ)}
		if n.session != "" {
			x[meta.Session] = []byte(n.session)
		}
		es = append(es, backend.Entry{Key: n.key, Value: []byte("kiwi notes of " + n.key + "\n"),
			Info: backend.Info{Mode: 0o644, MTime: time.Now(), XAttrs: x}})
	}
	if err := st.Save(t.Context(), es...); err != nil {
		t.Fatal(err)
	}
	return "dir:" + dir
}

// ls, search and context filter by --type and --session on a store; a
// --type that is no memory type is an error listing the types, the ones
// --types (or MEMFS_TYPES) adds included. Not parallel: it sets
// MEMFS_TYPES.
func TestMemoryTypeFiltersOnAStore(t *testing.T) {
	store := seedTyped(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--type", "decision"}, "memory/a.md memory/c.md"},
		{[]string{"--session", "s1"}, "memory/a.md memory/b.md"},
		{[]string{"--type", "decision", "--session", "s1"}, "memory/a.md"},
		{[]string{"--type", "summary"}, ""},
		{[]string{"--types", "incident", "--type", "incident"}, "memory/d.md"},
	} {
		if got := lines(mustRun(t, "", append([]string{"ls", "--store", store}, tt.args...)...)); got != tt.want {
			t.Errorf("ls %v = %q, want %q", tt.args, got, tt.want)
		}
		got := searchKeys(t, append([]string{"--store", store, "--mode", "keyword"}, append(tt.args, "kiwi")...)...)
		slices.Sort(got)
		if strings.Join(got, " ") != tt.want {
			t.Errorf("search %v kiwi = %q, want %q", tt.args, got, tt.want)
		}
		pack := mustRun(t, "", append([]string{"context", "--store", store}, tt.args...)...)
		var inPack []string
		for _, k := range []string{"memory/a.md", "memory/b.md", "memory/c.md", "memory/d.md"} {
			if strings.Contains(pack, "### "+k+"\n") {
				inPack = append(inPack, k)
			}
		}
		if strings.Join(inPack, " ") != tt.want {
			t.Errorf("context %v holds %q, want %q", tt.args, inPack, tt.want)
		}
	}
	if long := mustRun(t, "", "ls", "-l", "--store", store, "memory/a.md"); !strings.Contains(long, "memory/a.md  type=decision  session=s1") {
		t.Errorf("ls -l does not show the type and session:\n%s", long)
	}

	for _, cmd := range [][]string{{"ls"}, {"search", "kiwi"}, {"context"}} {
		args := append(append(slices.Clone(cmd), "--store", store, "--type", "incidnet"), "--types", "incident,runbook")
		_, _, err := run(t, "", args...)
		if err == nil {
			t.Errorf("%v: no error", args)
			continue
		}
		for _, typ := range append(meta.DefaultTypes(), "incident", "runbook") {
			if !strings.Contains(err.Error(), typ) {
				t.Errorf("%v: error %q does not list the type %s", args, err, typ)
			}
		}
	}
	if _, _, err := run(t, "", "ls", "--store", store, "--types", "two words"); err == nil {
		t.Error("ls --types 'two words': no error")
	}
	t.Setenv("MEMFS_TYPES", "incident")
	if got := lines(mustRun(t, "", "ls", "--store", store, "--type", "incident")); got != "memory/d.md" {
		t.Errorf("MEMFS_TYPES=incident ls --type incident = %q, want memory/d.md", got)
	}
}

// Through the kernel: setfattr of a type the mount does not know is
// EINVAL (its log lists the types, --types' included), one of its types
// is kept, and ls -l, ls --type, .memfs/search/type:T and
// .memfs/context/type:T see it.
func TestMemoryTypeThroughTheMount(t *testing.T) {
	t.Parallel()
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	p := startMount(t, store, mnt, nil, "--types", "incident")
	os.MkdirAll(filepath.Join(mnt, "memory"), 0o755)
	a, b := filepath.Join(mnt, "memory", "a.md"), filepath.Join(mnt, "memory", "b.md")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte("kiwi notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Setxattr(a, meta.Type, []byte("guess"), 0); !errors.Is(err, unix.EINVAL) {
		t.Errorf("setxattr user.memfs.type=guess: %v, want EINVAL", err)
	}
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool {
		return strings.Contains(p.log.String(), "fact, decision") && strings.Contains(p.log.String(), "note, incident")
	}) {
		t.Errorf("the mount's log does not list the types, incident included:\n%s", p.log.String())
	}
	if err := unix.Setxattr(a, meta.Session, []byte("a/b"), 0); !errors.Is(err, unix.EINVAL) {
		t.Errorf("setxattr user.memfs.session=a/b: %v, want EINVAL", err)
	}
	setx(t, a, meta.Type, "decision", meta.Session, "s1")
	setx(t, b, meta.Type, "incident") // added by --types

	if long := mustRun(t, "", "ls", "-l", "--mount", mnt, "memory/a.md"); !strings.Contains(long, "memory/a.md  type=decision  session=s1") {
		t.Errorf("ls -l through the mount does not show the type and session:\n%s", long)
	}
	if got := lines(mustRun(t, "", "ls", "--mount", mnt, "--type", "decision")); got != "memory/a.md" {
		t.Errorf("ls --mount --type decision = %q, want memory/a.md", got)
	}
	res, err := os.ReadFile(filepath.Join(mnt, ".memfs", "search", search.Name("kiwi", "type:decision")))
	if err != nil || !strings.Contains(string(res), "memory/a.md") || strings.Contains(string(res), "memory/b.md") {
		t.Errorf(".memfs/search/kiwi type:decision = %q, %v; want memory/a.md alone", res, err)
	}
	res, err = os.ReadFile(filepath.Join(mnt, ".memfs", "search", search.Name("kiwi", "type:incident")))
	if err != nil || !strings.Contains(string(res), "memory/b.md") || strings.Contains(string(res), "memory/a.md") {
		t.Errorf(".memfs/search/kiwi type:incident = %q, %v; want memory/b.md alone", res, err)
	}
	pack, err := os.ReadFile(filepath.Join(mnt, ".memfs", "context", contextpack.Name("type:decision")))
	if err != nil || !strings.Contains(string(pack), "### memory/a.md\n") || strings.Contains(string(pack), "### memory/b.md\n") {
		t.Errorf(".memfs/context/type:decision = %q, %v; want memory/a.md alone", pack, err)
	}
	p.stop(t)
}
