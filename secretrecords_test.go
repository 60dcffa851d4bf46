package memfs_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/packhist"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/session"
)

// stripeKey is a token the default rules find (stripe-secret-key).
const stripeKey = "sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9"

// openDir opens memfs over the directory store at dir, loading memory/ at
// Open as a mount does.
func openDir(t *testing.T, dir string) *memfs.FS {
	t.Helper()
	st, err := dirstore.Open(dir)
	must(t, err)
	f, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName),
		RecoveryDir: filepath.Join(t.TempDir(), "recovery"), Bootstrap: []string{"memory/"}})
	must(t, err)
	return f
}

// rawIn returns the paths under dir, but for those in except, whose name
// or content holds secret.
func rawIn(t *testing.T, dir, secret string, except ...string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		for _, x := range except {
			if rel == x {
				return nil
			}
		}
		if strings.Contains(rel, secret) {
			found = append(found, rel)
			return nil
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(secret)) {
				found = append(found, rel)
			}
		}
		return nil
	})
	must(t, err)
	return found
}

// A name with a secret that another program put in a directory store
// reaches none of memfs's records (gap records, the event log, the search
// index), at an open, after the file is renamed, and after it is removed;
// a gap record an older memfs wrote with such a name loses it.
func TestSecretNameReachesNoRecord(t *testing.T) {
	dir := t.TempDir()
	secretFile := "memory/" + stripeKey + ".md"
	must(t, os.MkdirAll(filepath.Join(dir, "memory"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, secretFile), []byte("# a note\nplain text\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "memory/plain.md"), []byte("# plain\n"), 0o644))
	open := func() {
		t.Helper()
		f := openDir(t, dir)
		cr := session.WithCred(t.Context(), session.Cred{UID: 0})
		svc, err := f.Search(t.Context())
		must(t, err)
		if _, err := svc.Search(cr, search.Query{Text: "plain"}); err != nil {
			t.Fatal(err)
		}
		// A rebuild waits for the archive's check at open (Close would
		// drop one still running); with no event yet, it is out of range.
		if _, err := packAt(f, cr, 1, ""); err != nil && !errors.Is(err, packhist.ErrOutOfRange) {
			t.Fatal(err)
		}
		must(t, f.Close(context.Background()))
	}
	open()
	if got := rawIn(t, dir, stripeKey, secretFile); len(got) > 0 {
		t.Errorf("after an open, memfs's records hold the name with the secret: %v", got)
	}
	must(t, os.Rename(filepath.Join(dir, secretFile), filepath.Join(dir, "memory/renamed.md")))
	open()
	if got := rawIn(t, dir, stripeKey); len(got) > 0 {
		t.Errorf("after the file is renamed, memfs's records hold its old name with the secret: %v", got)
	}

	// A gap record an older memfs wrote with the name in it.
	st, err := dirstore.Open(dir)
	must(t, err)
	must(t, st.SaveSys(t.Context(), "packhist/g/00000000000000000007",
		[]byte(`{"seq":7,"keys":["memory/plain.md","`+secretFile+`"]}`)))
	must(t, st.Close())
	open()
	if got := rawIn(t, dir, stripeKey); len(got) > 0 {
		t.Errorf("after an open, an old gap record still holds the name with the secret: %v", got)
	}
}

// A token another program wrote into a directory store while no memfs ran
// is redacted when memfs opens the store: the store's file is rewritten
// (an event by memfs:redact-on-ingest records it) and the context pack
// shows the marker. A read-only open shows the marker too, and writes
// nothing.
func TestRawSecretInStoreIsRedactedAtOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "memory", "raw.md")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	raw := "# deploy\nstripe.api_key = \"" + stripeKey + "\"\n"
	root := session.WithCred(t.Context(), session.Cred{UID: 0})

	// Read-only first: nothing is written, nothing shown.
	must(t, os.WriteFile(p, []byte(raw), 0o644))
	st, err := dirstore.Open(dir)
	must(t, err)
	ro, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName),
		Session: session.Options{ReadOnly: true}})
	must(t, err)
	pack, err := ro.ContextFile(root, "")
	must(t, err)
	if bytes.Contains(pack, []byte(stripeKey)) || !bytes.Contains(pack, []byte("stripe.api_key")) {
		t.Errorf("read-only: the context pack shows the token, or not the note:\n%s", pack)
	}
	must(t, ro.Close(context.Background()))
	if b, _ := os.ReadFile(p); string(b) != raw {
		t.Errorf("a read-only open rewrote the store's file: %q", b)
	}

	f := openDir(t, dir)
	defer f.Close(context.Background())
	b, err := os.ReadFile(p)
	must(t, err)
	if bytes.Contains(b, []byte(stripeKey)) || !bytes.Contains(b, []byte("[REDACTED:stripe-secret-key]")) {
		t.Errorf("the store's file after an open: %q, want it redacted", b)
	}
	pack, err = f.ContextFile(root, "")
	must(t, err)
	if bytes.Contains(pack, []byte(stripeKey)) {
		t.Errorf("the context pack shows the token:\n%s", pack)
	}
	evs, err := f.Events().Query(t.Context(), eventlog.Query{Limit: 10})
	must(t, err)
	var rewrite bool
	for _, ev := range evs.Events {
		rewrite = rewrite || ev.Key == "memory/raw.md" && ev.Op == eventlog.OpWrite && ev.Writer.Agent == session.IngestAgent &&
			ev.SHA256 == hexSum(string(b))
	}
	if !rewrite {
		t.Errorf("no write event by %s with the rewritten file's hash: %+v", session.IngestAgent, evs.Events)
	}
}

// Reindex finds a token another program wrote into a file that Open did
// not load (outside memory/) and rewrites the store's file redacted, with
// an event.
func TestReindexRewritesARawSecret(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "agents", "deploy.md")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte("token "+stripeKey+"\n"), 0o644))
	f := openDir(t, dir)
	defer f.Close(context.Background())
	if b, _ := os.ReadFile(p); !bytes.Contains(b, []byte(stripeKey)) {
		t.Fatalf("Open rewrote a file it did not load (the test shows nothing): %q", b)
	}
	if _, err := f.Reindex(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	must(t, err)
	if bytes.Contains(b, []byte(stripeKey)) || !bytes.Contains(b, []byte("[REDACTED:stripe-secret-key]")) {
		t.Errorf("the store's file after Reindex: %q, want it redacted", b)
	}
	evs, err := f.Events().Query(t.Context(), eventlog.Query{Limit: 10})
	must(t, err)
	if n := len(evs.Events); n == 0 || evs.Events[n-1].Writer.Agent != session.IngestAgent || evs.Events[n-1].Key != "agents/deploy.md" {
		t.Errorf("events %+v, want a write of agents/deploy.md by %s", evs.Events, session.IngestAgent)
	}
}
