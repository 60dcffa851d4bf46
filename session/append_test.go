package session_test

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/testcorpus"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

// crashAndReplay closes the journal as a killed process would leave it,
// replays it into a new session over the same store, flushes, and returns
// the stored value of key.
func crashAndReplay(t *testing.T, st backend.Store, j *journal.Journal, jpath, key string) string {
	t.Helper()
	j.Close()
	j2, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	c2 := session.NewContext(st, session.Options{Journal: j2})
	if err := c2.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c2.Pending().Replay(recs); err != nil {
		t.Fatal(err)
	}
	if err := c2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	v, _ := storedValue(t, st, key)
	return v
}

// appendLine appends line to key through a new handle, as echo >> does.
// It reports with t.Error, so that it may run in other goroutines.
func appendLine(t *testing.T, c *session.Context, key, line string) {
	t.Helper()
	h, err := c.Create(key, session.CreateOptions{Mode: 0o644})
	if err != nil {
		t.Error(err)
		return
	}
	if _, err := h.Append([]byte(line)); err != nil {
		t.Error(err)
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
}

// A file that only grows is journaled by what each close appended, not
// by its whole value: the journal stays linear in the data, and a crash
// replays the exact value, with concurrent appenders, a flush in the
// middle and a write into the file's middle (a whole record) mixed in.
func TestJournalRecordsAppends(t *testing.T) {
	dir := t.TempDir()
	jpath := dir + "-journal"
	st := openStore(t, dir)
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{Journal: j})
	if err := c.Mkdir("memory", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	const key = "memory/summaries.jsonl"
	var want bytes.Buffer
	var mu sync.Mutex
	var wg sync.WaitGroup
	for a := range 8 {
		wg.Go(func() {
			for i := range 100 {
				line := fmt.Sprintf("{\"appender\":%d,\"i\":%d}\n", a, i)
				mu.Lock() // the expected order is the order of the appends
				appendLine(t, c, key, line)
				want.WriteString(line)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// 800 lines of ~22 bytes: whole-value records would take ~7 MB; an
	// append record is its bytes plus ~160 bytes of key and metadata.
	if size := j.Size(); size > 400_000 {
		t.Errorf("journal of %d bytes for %d bytes of appends: not recorded as appends", size, want.Len())
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	appendLine(t, c, key, "after the flush\n")
	want.WriteString("after the flush\n")
	// A write inside the file: the next record holds the whole value.
	h, _ := c.Open(t.Context(), key)
	h.WriteAt([]byte("X"), 0)
	h.Close()
	wb := want.Bytes()
	wb[0] = 'X'
	appendLine(t, c, key, "last\n")
	want.WriteString("last\n")
	if got := crashAndReplay(t, st, j, jpath, key); got != want.String() {
		t.Fatalf("after crash and replay: %d bytes, want %d; tail %q", len(got), want.Len(), got[max(0, len(got)-60):])
	}
}

// An append that completes a secret begun by an earlier append is not
// written to the journal in the clear: the redaction sees the earlier
// bytes too, and the record then holds the whole (redacted) value.
func TestJournalAppendRedactedWithContext(t *testing.T) {
	dir := t.TempDir()
	jpath := dir + "-journal"
	st := openStore(t, dir)
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Config{Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{Journal: j, Redactor: red})
	if err := c.Mkdir("memory", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	secret := "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "123456"
	appendLine(t, c, "memory/notes.md", "first line\n")
	appendLine(t, c, "memory/notes.md", "token = "+secret[:10])
	appendLine(t, c, "memory/notes.md", secret[10:]+"\n")
	j.Close()
	raw, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{secret, secret[:10], secret[10:]} {
		if bytes.Contains(raw, []byte(part)) {
			t.Errorf("journal holds %q in the clear", part)
		}
	}
	j2, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	j2.Close()
	// The two appends were scrubbed by the whole value that completed
	// the secret (the directory's own records aside).
	recs = slices.DeleteFunc(recs, func(r journal.Record) bool {
		return len(r.Entries) > 0 && r.Entries[0].Info.Mode.IsDir()
	})
	if len(recs) != 1 || recs[0].Append {
		t.Errorf("records: %d, append flags %v; want only the whole value", len(recs), appendFlags(recs))
	}
}

func appendFlags(recs []journal.Record) []bool {
	var f []bool
	for _, r := range recs {
		f = append(f, r.Append)
	}
	return f
}

// A file truncated at open (O_TRUNC) and then written only past its old
// length is not taken for an append: its journal record holds the whole
// new value.
func TestJournalTruncateAtOpenThenLonger(t *testing.T) {
	dir := t.TempDir()
	jpath := dir + "-journal"
	st := openStore(t, dir)
	seed(t, st, map[string]string{"memory/a.md": "old old old\n"})
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{Journal: j})
	if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
		t.Fatal(err)
	}
	h, err := c.Create("memory/a.md", session.CreateOptions{Mode: 0o644, Truncate: true})
	if err != nil {
		t.Fatal(err)
	}
	// A write past the old length only (the bytes before it are zeros
	// now, not the old value).
	h.WriteAt([]byte("new\n"), 20)
	h.Close()
	if got, want := crashAndReplay(t, st, j, jpath, "memory/a.md"), string(make([]byte, 20))+"new\n"; got != want {
		t.Fatalf("after crash and replay: %q, want %q", got, want)
	}
}

// After an external change (the store holds a new, longer value), an
// append is journaled against that value, not against the old one.
func TestJournalAppendAfterExternalChange(t *testing.T) {
	dir := t.TempDir()
	jpath := dir + "-journal"
	st := openStore(t, dir)
	seed(t, st, map[string]string{"memory/a.md": "short\n"})
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{Journal: j})
	if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
		t.Fatal(err)
	}
	ext := backend.Entry{Key: "memory/a.md", Value: []byte("a much longer value written by another program\n"),
		Info: backend.Info{Mode: 0o644, MTime: time.Now().Add(-time.Minute)}}
	if err := st.Save(t.Context(), ext); err != nil {
		t.Fatal(err)
	}
	if _, err := c.External().Apply(ext); err != nil {
		t.Fatal(err)
	}
	appendLine(t, c, "memory/a.md", "tail\n")
	if got, want := crashAndReplay(t, st, j, jpath, "memory/a.md"), string(ext.Value)+"tail\n"; got != want {
		t.Fatalf("after crash and replay: %q, want %q", got, want)
	}
}

// A secret split at every byte offset over two appends, and a PEM block
// appended line by line (and one left open), never leave a piece of the
// secret in the journal; replayed after a crash, every file is its whole
// value redacted, exactly as a flush would have stored it.
func TestJournalAppendsNeverHoldAPartialSecret(t *testing.T) {
	red, err := redact.New(redact.Config{Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" +
		"MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpI\n" +
		"fQ6jFh2qC8rY4wW3bT5nK7vL9pX1sD3mQ8zR2uE6yH0jG4cV7bN1aS5dF9gK2hJ\n" +
		"4kL6mP8qR0tV2xZ4bD6fH8jK0mN2pQ4sU6wY8aC0eG2iK4mO6qS8uW0yA2cE4gI\n" +
		"-----END RSA PRIVATE KEY-----\n"
	secrets := []struct{ prefix, value, suffix string }{
		{"token: ", "ghp_R8dM2qLx7VbN4tKc9WzP3sHy6FjA1uEo5GiD", ""},
		{"aws_access_key_id = ", "AKIAQX7RZ2LMN4TPV6WY", ""},
		{"OPENAI_API_KEY=", "sk-proj-Xq7Lm2Rt9Vb4Nc8Kd3Wf6Hy1Js5Pa0Ge7Ti2Uo9Bz4Cx8Mv3", ""},
		{"key:\n", pem, ""},
	}
	// And every secret of the project's corpus, each split at every byte.
	corpus, err := testcorpus.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range corpus {
		secrets = append(secrets, struct{ prefix, value, suffix string }{c.Prefix, c.Value, c.Suffix})
	}
	t.Logf("%d secrets (%d from the corpus, of %d kinds), each split at every byte", len(secrets), len(corpus), testcorpus.Kinds(corpus))
	var scanned []string
	for _, s := range secrets {
		for l := range strings.SplitSeq(s.value, "\n") {
			if !strings.HasPrefix(l, "-----") { // PEM armour is no secret; its body is
				scanned = append(scanned, l)
			}
		}
	}
	for _, flushBetween := range []bool{false, true} {
		t.Run(fmt.Sprintf("flush-between=%v", flushBetween), func(t *testing.T) {
			dir := t.TempDir()
			jpath := dir + "-journal"
			st := openStore(t, dir)
			j, _, err := journal.Open(jpath)
			if err != nil {
				t.Fatal(err)
			}
			c := session.NewContext(st, session.Options{Journal: j, Redactor: red})
			if err := c.Mkdir("memory", 0o755, 0, 0); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for i, s := range secrets {
				for off := 1; off < len(s.value); off++ {
					key := fmt.Sprintf("memory/s%d-%04d.md", i, off)
					appendLine(t, c, key, "first line\n"+s.prefix+s.value[:off])
					if flushBetween && off%5 == 0 {
						if err := c.Flush(t.Context()); err != nil {
							t.Fatal(err)
						}
					}
					appendLine(t, c, key, s.value[off:]+s.suffix+"\n")
					w, _ := red.Redact(key, []byte("first line\n"+s.prefix+s.value+s.suffix+"\n"))
					want[key] = string(w)
				}
				if strings.Contains(s.value, "\n") {
					lines := strings.SplitAfter(s.value, "\n")
					for n, name := range map[int]string{len(lines): "lines", 3: "open"} {
						key := fmt.Sprintf("memory/s%d-%s.md", i, name)
						whole := s.prefix
						appendLine(t, c, key, s.prefix)
						for _, l := range lines[:n] {
							appendLine(t, c, key, l)
							whole += l
						}
						w, _ := red.Redact(key, []byte(whole))
						want[key] = string(w)
					}
				}
			}
			raw, err := os.ReadFile(jpath)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range scanned {
				for k := 0; k+12 <= len(s); k++ {
					w := s[k : k+12]
					if bytes.Contains(raw, []byte(w)) {
						t.Fatalf("the journal holds %q, a piece of a secret", w)
					}
				}
			}
			j.Close()
			j2, recs, err := journal.Open(jpath)
			if err != nil {
				t.Fatal(err)
			}
			defer j2.Close()
			c2 := session.NewContext(st, session.Options{Journal: j2, Redactor: red})
			if err := c2.Bootstrap(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c2.Pending().Replay(recs); err != nil {
				t.Fatal(err)
			}
			if err := c2.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for key, w := range want {
				if got, _ := storedValue(t, st, key); got != w {
					if bad++; bad <= 3 {
						t.Errorf("%s after replay: got %q, want %q", key, got, w)
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d files differ after the replay", bad, len(want))
			}
		})
	}
}
