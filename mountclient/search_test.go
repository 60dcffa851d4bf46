package mountclient_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/mountclient"
	"github.com/memfs/memfs/search"
)

// TestWriteAnswer: the mount's answer goes to w; warn says that the mount
// (without an embedder) searches by keyword, and that an embedder the
// caller named is not the mount's; a query the mount refuses is an error
// that names the mount, and nothing on w.
func TestWriteAnswer(t *testing.T) {
	_, mnt := mountDir(t)
	if err := os.WriteFile(filepath.Join(mnt, "alpha.md"), []byte("alpha note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		query       string
		ownEmbedder bool
		out, warn   string // out: in the answer
		err         string
	}{
		{name: "keyword only", query: search.Name("alpha"), out: "alpha.md",
			warn: "memfs: keyword search only: the mount at " + mnt + " has no embedder\n"},
		{name: "an embedder named", query: search.Name("alpha"), ownEmbedder: true, out: "alpha.md",
			warn: "memfs: --embedder is not used: the mount at " + mnt + " searches with its own (see its .memfs/status)\n" +
				"memfs: keyword search only: the mount at " + mnt + " has no embedder\n"},
		{name: "refused", query: search.Name("alpha", "tag:"), ownEmbedder: true, err: "search through " + mnt + ": the mount cannot answer the query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, warn strings.Builder
			err := c.WriteAnswer(&out, &warn, tt.query, tt.ownEmbedder)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) || out.Len()+warn.Len() > 0 {
					t.Errorf("got %v, out %q, warn %q; want an error starting %q, and nothing written", err, out.String(), warn.String(), tt.err)
				}
				return
			}
			if err != nil || !strings.Contains(out.String(), tt.out) || warn.String() != tt.warn {
				t.Errorf("got %v, out %q, warn %q; want %q in out, warn %q", err, out.String(), warn.String(), tt.out, tt.warn)
			}
		})
	}
}

// TestWriteContext: the mount's pack for the query goes to w, the same as
// its .memfs/context/ file; a query the mount refuses is an error naming
// the mount, and nothing on w.
func TestWriteContext(t *testing.T) {
	_, mnt := mountDir(t)
	if err := os.WriteFile(filepath.Join(mnt, "global.md"), []byte("always apply this\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.WriteContext(&out, "max:2000"); err != nil {
		t.Fatal(err)
	}
	if want, err := os.ReadFile(filepath.Join(mnt, ".memfs", "context", "max:2000")); err != nil || out.String() != string(want) {
		t.Errorf("WriteContext wrote\n%s\nthe file holds\n%s (%v)", out.String(), want, err)
	}
	out.Reset()
	if err := c.WriteContext(&out, "max:0"); err == nil || !strings.HasPrefix(err.Error(), "context through "+mnt+": ") || out.Len() > 0 {
		t.Errorf("WriteContext(max:0) = %v, wrote %q; want an error naming the mount, and nothing", err, out.String())
	}
}
