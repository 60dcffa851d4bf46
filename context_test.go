package memfs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/session"
)

// The context pack and its manifest for one caller: built from the same
// files, the manifest names the pack's hash and its notes; a note the
// caller may not read is in neither; a query ranks the relevant note first.
func TestContextPackManifestAndPermission(t *testing.T) {
	st := memstore.New()
	mt := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var es []backend.Entry
	add := func(key, text string, mode fs.FileMode, uid uint32) {
		es = append(es, backend.Entry{Key: key, Value: []byte(text), Info: backend.Info{Mode: mode, UID: uid, MTime: mt}})
	}
	for i := range 300 {
		add(fmt.Sprintf("memory/n%03d.md", i), fmt.Sprintf("note %03d of many.\n", i), 0o644, 0)
	}
	add("memory/secret.md", "the vault code is aardvark\n", 0o600, 0)
	add("memory/kernel.md", "the kernel caches attributes\n", 0o644, 0)
	for _, s := range []string{"a", "b", "c"} {
		add("skills/"+s+"/SKILL.md", "---\nname: "+s+"\ndescription: skill "+s+".\n---\n", 0o644, 0)
	}
	if err := st.Save(t.Context(), es...); err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(t.TempDir(), "journal")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(context.Background()) })
	user := session.WithCred(t.Context(), session.Cred{UID: 1000, GIDs: []uint32{1000}})
	root := session.WithCred(t.Context(), session.Cred{})

	for _, name := range []string{"", "max:3000 kernel", "aardvark"} {
		for _, who := range []struct {
			name    string
			ctx     context.Context
			secrets bool
		}{{"root", root, true}, {"uid 1000", user, false}} {
			pack, err := f.ContextFile(who.ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			mj, err := f.ContextFile(who.ctx, name+contextpack.ManifestSuffix)
			if err != nil {
				t.Fatal(err)
			}
			var m contextpack.Manifest
			if err := json.Unmarshal(mj, &m); err != nil {
				t.Fatalf("%s manifest of %q: %v\n%s", who.name, name, err, mj)
			}
			if !strings.HasPrefix(string(pack), "<!-- memfs context pack sha256:"+m.PackSHA256+" ") {
				t.Errorf("%s pack %q: first line %.100q, manifest hash %s", who.name, name, pack, m.PackSHA256)
			}
			for _, s := range []string{"- a: skill a.", "- b: skill b.", "- c: skill c."} {
				if !strings.Contains(string(pack), s) {
					t.Errorf("%s pack %q lacks the skill line %q", who.name, name, s)
				}
			}
			leak := strings.Contains(string(pack), "secret") || strings.Contains(string(mj), "secret")
			if !who.secrets && leak {
				t.Errorf("%s pack %q or its manifest names memory/secret.md, which it may not read", who.name, name)
			}
			if who.secrets && name == "aardvark" && !strings.Contains(string(pack), "the vault code is aardvark") {
				t.Errorf("root's pack for aardvark lacks memory/secret.md:\n%.500s", pack)
			}
			var notes []string
			for _, it := range m.Included {
				if it.Kind == "note" {
					notes = append(notes, it.Key)
				}
			}
			if name == "max:3000 kernel" && (len(notes) == 0 || notes[0] != "memory/kernel.md") {
				t.Errorf("%s pack %q: notes %v, want memory/kernel.md first", who.name, name, notes)
			}
			if n := len([]rune(string(pack))); n > m.MaxChars || n != m.Chars {
				t.Errorf("%s pack %q: %d characters, manifest %d of %d", who.name, name, n, m.Chars, m.MaxChars)
			}
		}
	}
	// .memfs/context.manifest.json asks with the suffix alone.
	a, _ := f.ContextFile(user, "")
	b, _ := f.ContextFile(user, contextpack.ManifestSuffix)
	if !strings.Contains(string(b), `"pack_sha256"`) || !strings.Contains(string(a), "sha256:") {
		t.Errorf("manifest of context.md: %.200s", b)
	}
}

// Packs, live and rebuilt, leave out what the ignore rules exclude: VCS
// metadata, binary values, what a .memfsignore names; a change of a
// .memfsignore takes effect at the next pack (issue 30, finding 1).
func TestContextPackIgnoreRules(t *testing.T) {
	f, err := memfs.Open(t.Context(), memstore.New(), memfs.Options{JournalPath: filepath.Join(t.TempDir(), "journal"), Namespace: true,
		Session: session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())}})
	must(t, err)
	t.Cleanup(func() { f.Close(context.Background()) })
	ctx := session.WithCred(t.Context(), session.Cred{UID: uint32(os.Getuid()), GIDs: []uint32{uint32(os.Getgid())}})
	c := f.Session()
	must(t, c.Set("memory/a.md", []byte("# A\nthe note\n")))
	must(t, c.Set("memory/blob.bin", []byte("x\x9c\xcbH\xcd\xc9\xc9W(\xcf/\xcaI\x01")))
	must(t, c.Set("memory/repo/.git/HEAD", []byte("ref: refs/heads/main\n")))
	must(t, c.Set("memory/scratch/s.md", []byte("scratch text\n")))
	must(t, c.Set(".memfsignore", []byte("scratch/\n")))
	check := func(when string, want ...string) {
		t.Helper()
		must(t, f.Flush(ctx))
		live, err := f.ContextFile(ctx, ".manifest.json")
		must(t, err)
		at, err := packAt(f, ctx, headSeq(t, f), ".manifest.json")
		must(t, err)
		for _, m := range []struct {
			name string
			b    []byte
		}{{"live", live}, {"as of the head", at}} {
			var got []string
			var man contextpack.Manifest
			must(t, json.Unmarshal(m.b, &man))
			for _, it := range man.Included {
				got = append(got, it.Key)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s, %s pack: got notes %v, want %v", when, m.name, got, want)
			}
		}
	}
	check("at first", "memory/a.md")
	must(t, c.Set(".memfsignore", []byte("a.md\n")))
	check("after a rule change", "memory/scratch/s.md")
}
