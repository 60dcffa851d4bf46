package session_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

// A name that contains a secret is refused wherever a name is made, with
// an error that names the rule and never the secret; such a name already
// in a store is left out of the session (and so out of every event, index
// and record), and left as it is in the store.
func TestNamesWithSecretsAreRefused(t *testing.T) {
	token := "ghp_" + strings.Repeat("Zq9Xw3Lm7P", 3) + "Ab12Cd"
	c, st, _, _ := newSession(t, session.Options{Redactor: defaultRedactor(t)})
	if err := c.Set("memory/plain.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		err  error
	}{
		{"Set", c.Set("memory/"+token+".md", []byte("x"))},
		{"Put", c.Put(backend.Entry{Key: "memory/d-" + token + "/a.md", Value: []byte("x")})},
		{"Create", func() error { _, err := c.Create("memory/"+token, session.CreateOptions{Mode: 0o644}); return err }()},
		{"Mkdir", c.Mkdir("memory/"+token, 0o755, 0, 0)},
		{"Rename", c.Rename(t.Context(), "memory/plain.md", "memory/x-"+token, 0)},
		{"SetXAttr name", c.XAttrs().Set(t.Context(), "memory/plain.md", "user."+token, []byte("v"), 0)},
	}
	for _, call := range calls {
		if !errors.Is(call.err, session.ErrSecretName) {
			t.Errorf("%s with a secret in the name: got %v, want ErrSecretName", call.name, call.err)
			continue
		}
		if strings.Contains(call.err.Error(), token[4:16]) {
			t.Errorf("%s: the error holds the secret: %v", call.name, call.err)
		}
	}
	// A store that already holds such a name (written by an older memfs
	// or another program): the session leaves it out, the store keeps it.
	if err := st.Save(t.Context(), backend.Entry{Key: "memory/old-" + token, Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	c2 := session.NewContext(st, session.Options{Redactor: defaultRedactor(t)})
	if err := c2.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c2.Has("memory/old-" + token) {
		t.Error("after Bootstrap, the session has the name with the secret")
	}
	if err := c2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(t.Context(), "memory/old-"+token); err != nil {
		t.Errorf("the store's file with the secret name after a flush: %v, want it left as it is", err)
	}
}

// Attribute values are redacted on their way to the store, like values;
// the session keeps them as written.
func TestXAttrValuesAreSealed(t *testing.T) {
	token := "ghp_" + strings.Repeat("Zq9Xw3Lm7P", 3) + "Ab12Cd"
	c, st, _, _ := newSession(t, session.Options{Redactor: defaultRedactor(t)})
	if err := c.Set("memory/a.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := c.XAttrs().Set(t.Context(), "memory/a.md", "user.note", []byte("deploy with "+token), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(t.Context(), "memory/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if v := string(got[0].Info.XAttrs["user.note"]); strings.Contains(v, token[4:16]) || !strings.Contains(v, "[REDACTED:") {
		t.Fatalf("stored user.note = %q, want it redacted", v)
	}
	if v, err := c.XAttrs().Get("memory/a.md", "user.note"); err != nil || string(v) != "deploy with "+token {
		t.Fatalf("session's user.note = %q, %v; want the value as written", v, err)
	}
	if d := c.Pending().Sealed(); len(d) != 0 {
		t.Fatalf("dirty after flush: %d", len(d))
	}
}

func defaultRedactor(t *testing.T) *redact.Redactor {
	t.Helper()
	r, err := redact.New(redact.Config{Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Each secret is logged once, however often the value that holds it is
// flushed again (appends, attribute changes, renames), and a new secret in
// the same value gets its own line.
func TestEachFindingIsLoggedOnce(t *testing.T) {
	token := "ghp_" + strings.Repeat("Zq9Xw3Lm7P", 3) + "Ab12Cd"
	aws := "AKIA" + "QX7RZ2LMN4TPV6WY"
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c, _, _, _ := newSession(t, session.Options{Redactor: defaultRedactor(t), Logger: log})
	steps := []func() error{
		func() error { return c.Set("memory/a.md", []byte("token "+token+"\n")) },
		func() error { return c.Set("memory/a.md", []byte("token "+token+"\nmore\n")) },
		func() error { return c.XAttrs().Set(t.Context(), "memory/a.md", "user.note", []byte("x"), 0) },
		func() error { return c.Rename(t.Context(), "memory/a.md", "memory/b.md", 0) },
		func() error { return c.Set("memory/b.md", []byte("token "+token+"\nmore\nkey "+aws+"\n")) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if err := c.Flush(t.Context()); err != nil {
			t.Fatalf("flush %d: %v", i, err)
		}
	}
	if n := strings.Count(logs.String(), "rule=github-token"); n != 1 {
		t.Errorf("the GitHub token was logged %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "rule=aws-access-key-id"); n != 1 {
		t.Errorf("the AWS key was logged %d times, want once:\n%s", n, logs.String())
	}
}

// A binary value (a NUL in its first 8 KiB) is no way around redaction: a
// secret in it is masked in place at the same length, in the store and in
// the journal, appends included; the session keeps the bytes written.
func TestBinaryValuesAreMasked(t *testing.T) {
	token := "ghp_" + strings.Repeat("Zq9Xw3Lm7P", 3) + "Ab12Cd"
	red := defaultRedactor(t)
	dir := t.TempDir()
	st := openStore(t, dir)
	jpath := filepath.Join(t.TempDir(), "journal")
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{Redactor: red, Journal: j})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	head := []byte("SQLite format 3\x00\x10\x00")
	blob := append(append([]byte{}, head...), []byte("row: token="+token+" end")...)
	if err := c.Set("db.sqlite", blob); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	stored, _ := storedValue(t, st, "db.sqlite")
	if len(stored) != len(blob) || strings.Contains(stored, token[:12]) || !strings.HasPrefix(stored, string(head)+"row: token=") {
		t.Fatalf("stored binary value %q: want %d bytes with the token masked in place", stored, len(blob))
	}
	if v, _ := c.Get("db.sqlite"); string(v) != string(blob) {
		t.Fatal("the session does not hold the bytes written")
	}
	// Appends that split a token, then a crash.
	h, err := c.Create("db.sqlite", session.CreateOptions{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"\nmore token=" + token[:15], token[15:] + " tail\n"} {
		if _, err := h.Append([]byte(part)); err != nil {
			t.Fatal(err)
		}
		if err := h.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	raw, _ := os.ReadFile(jpath)
	if bytes.Contains(raw, []byte(token[:12])) || bytes.Contains(raw, []byte(token[15:27])) {
		t.Fatal("the journal holds a piece of the token")
	}
	_, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	c2 := session.NewContext(st, session.Options{Redactor: red})
	if err := c2.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c2.Pending().Replay(recs); err != nil {
		t.Fatal(err)
	}
	c2.Resolve(t.Context(), "db.sqlite")
	got, _ := c2.Get("db.sqlite")
	whole := append(append([]byte{}, blob...), []byte("\nmore token="+token+" tail\n")...)
	want, _ := red.Mask("db.sqlite", whole)
	if !bytes.Equal(got, want) {
		t.Fatalf("after the replay: %q, want the whole value masked: %q", got, want)
	}
}
