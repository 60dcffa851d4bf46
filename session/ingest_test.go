package session_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

const ingestToken = "ghp_Q7wErT9yUi0pAs1dFg2hJk3lZx4cVb5nM6qW"

func newIngestSession(t *testing.T, events func(context.Context, []session.Event) error) *session.Context {
	t.Helper()
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{Redactor: r, Events: events,
		Self: &meta.WriterInfo{UID: 7, PID: 42, Comm: "memfs", Agent: "planner"}})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// Ingest redacts values and attribute values, drops attributes whose name
// holds a secret, refuses a key whose name does, and returns a clean
// entry unchanged.
func TestIngest(t *testing.T) {
	info := backend.Info{Mode: 0o644, MTime: time.Unix(1800000000, 0)}
	tests := []struct {
		name      string
		e         backend.Entry
		wantErr   error
		findings  int
		wantValue string
		wantAttrs map[string]string
	}{
		{"clean", backend.Entry{Key: "m/a.md", Value: []byte("clean\n"), Info: info}, nil, 0, "clean\n", nil},
		{"secret in the value", backend.Entry{Key: "m/a.md", Value: []byte("t " + ingestToken + "\n"), Info: info},
			nil, 1, "t [REDACTED:github-token]\n", nil},
		{"secret in an attribute value", backend.Entry{Key: "m/a.md", Value: []byte("x"),
			Info: backend.Info{Mode: 0o644, XAttrs: map[string][]byte{"user.note": []byte(ingestToken)}}},
			nil, 1, "x", map[string]string{"user.note": "[REDACTED:github-token]"}},
		{"secret in an attribute name", backend.Entry{Key: "m/a.md", Value: []byte("x"),
			Info: backend.Info{Mode: 0o644, XAttrs: map[string][]byte{"user." + ingestToken: []byte("v"), "user.ok": []byte("v")}}},
			nil, 1, "x", map[string]string{"user.ok": "v"}},
		{"secret in the name", backend.Entry{Key: "m/" + ingestToken + ".md", Value: []byte("x"), Info: info},
			session.ErrSecretName, 0, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newIngestSession(t, nil)
			in := backend.CloneXAttrs(tt.e.Info.XAttrs)
			got, findings, err := c.External().Ingest(tt.e)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err: got %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), ingestToken[:12]) {
					t.Errorf("the error shows the secret: %v", err)
				}
				return
			}
			if string(got.Value) != tt.wantValue || len(findings) != tt.findings {
				t.Errorf("got %q, %d findings; want %q, %d findings", got.Value, len(findings), tt.wantValue, tt.findings)
			}
			if string(got.Value) != string(tt.e.Value) && got.Info.Size != int64(len(got.Value)) {
				t.Errorf("size: got %d, want %d", got.Info.Size, len(got.Value))
			}
			if tt.wantAttrs != nil {
				if len(got.Info.XAttrs) != len(tt.wantAttrs) {
					t.Errorf("attributes: got %q, want %q", got.Info.XAttrs, tt.wantAttrs)
				}
				for k, v := range tt.wantAttrs {
					if string(got.Info.XAttrs[k]) != v {
						t.Errorf("attribute %s: got %q, want %q", k, got.Info.XAttrs[k], v)
					}
				}
			}
			for k, v := range in {
				if string(tt.e.Info.XAttrs[k]) != string(v) {
					t.Errorf("the caller's attribute %s: got %q, want it untouched (%q)", k, tt.e.Info.XAttrs[k], v)
				}
			}
		})
	}
}

// ApplyExternal seals what it is given, even without Ingest, and refuses
// a name with a secret.
func TestApplyExternalSeals(t *testing.T) {
	c := newIngestSession(t, nil)
	info := backend.Info{Mode: 0o644, MTime: time.Unix(1800000000, 0)}
	if _, err := c.External().Apply(backend.Entry{Key: "m/a.md", Value: []byte("t " + ingestToken + "\n"), Info: info}); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("m/a.md"); string(v) != "t [REDACTED:github-token]\n" {
		t.Errorf("the session holds %q, want it redacted", v)
	}
	_, err := c.External().Apply(backend.Entry{Key: "m/" + ingestToken + ".md", Value: []byte("x"), Info: info})
	if !errors.Is(err, session.ErrSecretName) {
		t.Errorf("a name with a secret: got %v, want ErrSecretName", err)
	}
	if c.Has("m/" + ingestToken + ".md") {
		t.Error("a name with a secret entered the session")
	}
}

// Rewriting makes the rewrite an echo before it is written; Rewritten
// records it as a write by memfs with agent IngestAgent.
func TestRewriteStampAndEvent(t *testing.T) {
	var got []session.Event
	c := newIngestSession(t, func(_ context.Context, evs []session.Event) error {
		got = append(got, evs...)
		return nil
	})
	e := backend.Entry{Key: "m/a.md", Value: []byte("t [REDACTED:github-token]\n"),
		Info: backend.Info{Size: 26, Mode: 0o644, MTime: time.Unix(1800000000, 7)}}
	if c.External().Echo(e.Key, e.Info) {
		t.Fatal("Echo before Rewriting: got true, want false")
	}
	c.External().Rewriting(e.Key, e.Info)
	if !c.External().Echo(e.Key, e.Info) {
		t.Error("Echo after Rewriting: got false, want true")
	}
	c.External().Rewritten(t.Context(), e)
	sum := sha256.Sum256(e.Value)
	want := session.Event{Op: session.EventWrite, Key: e.Key, Size: 26, SHA256: hex.EncodeToString(sum[:]),
		Writer: meta.WriterInfo{UID: 7, PID: 42, Comm: "memfs", Agent: session.IngestAgent}}
	// The entry as rewritten, for history's object of it.
	if len(got) == 1 && (got[0].Saved == nil || !bytes.Equal(got[0].Saved.Value, e.Value) || got[0].Saved.Key != e.Key) {
		t.Errorf("event's Saved: got %+v, want %+v", got[0].Saved, e)
	} else if len(got) == 1 {
		want.Saved = got[0].Saved
	}
	if len(got) != 1 || got[0] != want {
		t.Errorf("events: got %+v, want [%+v]", got, want)
	}
}
