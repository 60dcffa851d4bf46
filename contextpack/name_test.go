package contextpack_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/contextpack"
)

func TestParseName(t *testing.T) {
	for _, tt := range []struct {
		name     string
		want     contextpack.Options
		at       uint64
		manifest bool
		err      string // a part of the error; "" for none
	}{
		{name: ""},
		{name: contextpack.ManifestSuffix, manifest: true},
		{name: "max:3000%20kernel", want: contextpack.Options{MaxChars: 3000, Query: "kernel"}},
		{name: "max:500%20alpha.manifest.json", want: contextpack.Options{MaxChars: 500, Query: "alpha"}, manifest: true},
		{name: "summaries:0", want: contextpack.Options{Summaries: -1}},
		{name: "summaries:2%20%20deploy%20%20plan", want: contextpack.Options{Summaries: 2, Query: "deploy plan"}},
		{name: "at:7%20max:900", want: contextpack.Options{MaxChars: 900}, at: 7},
		{name: "note:this%20at:3.manifest.json", want: contextpack.Options{Query: "note:this"}, at: 3, manifest: true},
		{name: "x%2Emanifest%2Ejson", want: contextpack.Options{Query: "x.manifest.json"}},
		{name: "max:0", err: "max:0: want a positive number"},
		{name: "max:x", err: "max:x: want a positive number"},
		{name: "summaries:x", err: "summaries:x: want a number"},
		{name: "at:0", err: "at:0: want an event-log sequence number"},
		{name: "at:1%20at:2", err: "at: given twice"},
		{name: "x%zz", err: "context: "},
		{name: "type:decision%20session:s1%20deploy", want: contextpack.Options{Type: "decision", Session: "s1", Query: "deploy"}},
		{name: "type:", err: "type: want one value"},
		{name: "type:fact%20type:note", err: "type: want one value, given once"},
		{name: "session:a%20session:b", err: "session: want one value, given once"},
		{name: "repo:0123456789abcdef%20flaky", want: contextpack.Options{Repo: "0123456789abcdef", Query: "flaky"}},
		{name: "repo:0123456789abcdef,fedcba9876543210", want: contextpack.Options{Repo: "0123456789abcdef", RepoParents: []string{"fedcba9876543210"}}},
		{name: "repo:0123456789abcdef,x", err: "repo: want one repository id"},
		{name: "repo:0123456789ABCDEF", err: "repo: want one repository id"},
		{name: "repo:0123", err: "repo: want one repository id"},
		{name: "repo:0123456789abcdef%20repo:0123456789abcdef", err: "given once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, at, manifest, err := contextpack.ParseName(tt.name)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("contextpack.ParseName(%q): got error %v, want one with %q", tt.name, err, tt.err)
				}
				return
			}
			if err != nil || o.MaxChars != tt.want.MaxChars || o.Summaries != tt.want.Summaries || o.Query != tt.want.Query ||
				o.Type != tt.want.Type || o.Session != tt.want.Session || o.Repo != tt.want.Repo || !slices.Equal(o.RepoParents, tt.want.RepoParents) || at != tt.at || manifest != tt.manifest {
				t.Errorf("contextpack.ParseName(%q) = %+v, at %d, manifest %v, %v; want %+v, at %d, manifest %v",
					tt.name, o, at, manifest, err, tt.want, tt.at, tt.manifest)
			}
		})
	}
}

// Name writes what ParseName reads back, a query word that ends in the
// manifest suffix included (its dots are encoded).
func TestNameRoundTrip(t *testing.T) {
	name := contextpack.Name("max:400", "deploy plan", "notes.manifest.json", "at:5")
	o, at, manifest, err := contextpack.ParseName(name)
	if err != nil || o.MaxChars != 400 || o.Query != "deploy plan notes.manifest.json" || at != 5 || manifest {
		t.Errorf("contextpack.ParseName(contextpack.Name(...)) = %+v, at %d, manifest %v, %v", o, at, manifest, err)
	}
	o, _, manifest, err = contextpack.ParseName(contextpack.Name("kernel") + contextpack.ManifestSuffix)
	if err != nil || o.Query != "kernel" || !manifest {
		t.Errorf("the manifest of kernel: %+v, manifest %v, %v", o, manifest, err)
	}
}
