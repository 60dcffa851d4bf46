package contextpack_test

import (
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/meta"
)

// A pack named with type:T (session:S) holds only the notes of that
// memory type (session); the skills index stays, and the manifest says
// which filter built the pack.
func TestPackTypeAndSessionFilter(t *testing.T) {
	note := func(key, typ, session string) backend.Entry {
		x := map[string][]byte{}
		if typ != "" {
			x[meta.Type] = []byte(typ)
		}
		if session != "" {
			x[meta.Session] = []byte(session)
		}
		return backend.Entry{Key: key, Value: []byte("about " + key + "\n"), Info: backend.Info{Mode: 0o644, XAttrs: x}}
	}
	src := entrySource{
		note("memory/a.md", "decision", "s1"),
		note("memory/b.md", "fact", "s1"),
		note("memory/c.md", "decision", "s2"),
		note("memory/d.md", "", ""),
		{Key: "skills/x/SKILL.md", Value: []byte("---\nname: x\n---\n"), Info: backend.Info{Mode: 0o644}},
	}
	for _, tt := range []struct {
		words []string
		want  string // the pack's items, skills first, then notes by key
	}{
		{nil, "skills/x/SKILL.md memory/a.md memory/b.md memory/c.md memory/d.md"},
		{[]string{"type:decision"}, "skills/x/SKILL.md memory/a.md memory/c.md"},
		{[]string{"session:s1"}, "skills/x/SKILL.md memory/a.md memory/b.md"},
		{[]string{"type:decision", "session:s1"}, "skills/x/SKILL.md memory/a.md"},
		{[]string{"type:summary"}, "skills/x/SKILL.md"},
	} {
		name := contextpack.Name(tt.words...)
		t.Run(name, func(t *testing.T) {
			o, _, _, err := contextpack.ParseName(name)
			if err != nil {
				t.Fatal(err)
			}
			p, err := contextpack.Build(t.Context(), src, o)
			if err != nil {
				t.Fatal(err)
			}
			checkManifest(t, p)
			var got []string
			for _, it := range append(p.Manifest.Included, p.Manifest.LeftOut...) {
				got = append(got, it.Key)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("pack items: got %v, want %s", got, tt.want)
			}
			if p.Manifest.Type != o.Type || p.Manifest.Session != o.Session {
				t.Errorf("manifest type %q, session %q; want %q, %q", p.Manifest.Type, p.Manifest.Session, o.Type, o.Session)
			}
		})
	}
}
