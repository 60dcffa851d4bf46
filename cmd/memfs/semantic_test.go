package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memfs/memfs/embed"
)

// needModel skips a test that needs the default embedder when it is not
// installed, and fails it under MEMFS_REQUIRE_MODEL=1 (CI installs it).
func needModel(t *testing.T) {
	t.Helper()
	_, err := embed.Open("default", embed.Options{})
	if errors.Is(err, embed.ErrNotInstalled) {
		if os.Getenv("MEMFS_REQUIRE_MODEL") == "1" {
			t.Fatalf("MEMFS_REQUIRE_MODEL=1 and %v", err)
		}
		t.Skipf("the default embedder is not installed (memfs models install): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// semanticNotes are notes a paraphrased question finds by meaning: it
// shares no word with the one it wants.
var semanticNotes = map[string]string{
	"memory/billing/retention.md": "# Finance records\nInvoices and receipts are kept for seven years, then archived to cold storage and purged.\n",
	"memory/deploy/canary.md":     "# Deploys\nEvery service rolls out behind a canary on Tuesdays; roll back when error rates climb.\n",
	"memory/team/lunch.md":        "# Lunch\nThe team eats together on Fridays at the noodle bar downstairs.\n",
}

func writeNotes(t *testing.T, mnt string, notes map[string]string) {
	t.Helper()
	for k, v := range notes {
		p := filepath.Join(mnt, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readMemfs(t *testing.T, mnt, name string) (string, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, ".memfs", name))
	return string(b), err
}

// firstKey is the key of the first result of a search answer.
func firstKey(answer string) string {
	line, _, _ := strings.Cut(answer, "\n")
	key, _, _ := strings.Cut(line, " ")
	return key
}

// A mount with the default embedder finds a note by a question in other
// words (semantic and hybrid, the default), which keyword search cannot;
// .memfs/status names the embedder; memfs search through the mount and
// from the store agree.
func TestSemanticSearchThroughTheMount(t *testing.T) {
	t.Parallel()
	needModel(t)
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	// --embed-wait: a search waits for the query's vector (the first
	// builds the table's word index) however loaded the machine.
	p := startMount(t, store, mnt, nil, "--embed-wait", "1m")
	writeNotes(t, mnt, semanticNotes)
	const question = "how long do we hold old bills"
	for _, mode := range []string{"mode:semantic ", "mode:hybrid ", ""} {
		if got, err := readMemfs(t, mnt, "search/"+mode+question); err != nil || firstKey(got) != "memory/billing/retention.md" {
			t.Errorf("the note found by %q: %q %v", mode+question, got, err)
		}
	}
	if got, err := readMemfs(t, mnt, "search/mode:keyword "+question); err != nil || strings.Contains(got, "retention") {
		t.Errorf("keyword search found the note with no word in common (the test shows nothing): %q %v", got, err)
	}
	st, err := readMemfs(t, mnt, "status")
	if err != nil || !strings.Contains(st, "search: hybrid, embedder static:glove-wink-100d") {
		t.Errorf(".memfs/status does not name the embedder: %q %v", st, err)
	}
	out, errOut, err := run(t, "", "search", "--mount", mnt, "--top-k", "1", question)
	if err != nil || firstKey(out) != "memory/billing/retention.md" || strings.Contains(errOut, "keyword search only") {
		t.Errorf("memfs search --mount: %q %q %v", out, errOut, err)
	}
	p.stop(t)
	out, errOut, err = run(t, "", "search", "--store", store, "--top-k", "1", question)
	if err != nil || firstKey(out) != "memory/billing/retention.md" {
		t.Errorf("memfs search --store: %q %q %v", out, errOut, err)
	}
}

// With --embedder none search is keyword-only, and says so: in
// .memfs/status, in memfs search, and as an error for a mode that needs
// vectors.
func TestEmbedderNoneIsKeywordOnly(t *testing.T) {
	t.Parallel()
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, nil, "--embedder", "none")
	writeNotes(t, mnt, semanticNotes)
	if st, err := readMemfs(t, mnt, "status"); err != nil || !strings.Contains(st, "search: keyword only (no embedder)") {
		t.Errorf(".memfs/status: %q %v", st, err)
	}
	// The answer file says why; its errno is its user.memfs.error.
	if got, err := readMemfs(t, mnt, "search/mode:semantic old bills"); err != nil || !strings.Contains(got, "ENOTSUP") {
		t.Errorf("mode:semantic without an embedder: %q %v, want the reason and ENOTSUP", got, err)
	}
	buf := make([]byte, 64)
	if n, err := unix.Getxattr(filepath.Join(mnt, ".memfs", "search", "mode:semantic old bills"), "user.memfs.error", buf); err != nil || string(buf[:n]) != "ENOTSUP" {
		t.Errorf("user.memfs.error of mode:semantic without an embedder: %q %v, want ENOTSUP", buf[:max(n, 0)], err)
	}
	if got, err := readMemfs(t, mnt, "search/canary"); err != nil || firstKey(got) != "memory/deploy/canary.md" {
		t.Errorf("keyword search: %q %v", got, err)
	}
	_, errOut, err := run(t, "", "search", "--mount", mnt, "canary")
	if err != nil || !strings.Contains(errOut, "keyword search only") {
		t.Errorf("memfs search did not say it is keyword-only: %q %v", errOut, err)
	}
	_, errOut, err = run(t, "", "search", "--mount", mnt, "--embedder", "default", "canary")
	if err != nil || !strings.Contains(errOut, "--embedder is not used") {
		t.Errorf("memfs search --embedder through a mount did not say the flag is not used: %q %v", errOut, err)
	}
}

// moneyModel is an OpenAI-compatible embeddings endpoint that knows two
// directions, money matters and the rest; it counts the requests it
// serves (calls) and the texts it is sent that hold secret (leaked), and
// calls before, when set, with each request's texts first.
func moneyModel(calls, leaked *atomic.Int64, secret string, before func(input []string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer test-key-123" {
			http.Error(w, "bad request", http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if before != nil {
			before(req.Input)
		}
		calls.Add(1)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			if secret != "" && strings.Contains(text, secret) {
				leaked.Add(1)
			}
			v := []float32{0.1, 1}
			for _, w := range []string{"bill", "invoice", "receipt", "money"} {
				if strings.Contains(strings.ToLower(text), w) {
					v = []float32{1, 0.1}
				}
			}
			resp.Data = append(resp.Data, item{Index: i, Embedding: v})
		}
		json.NewEncoder(w).Encode(resp)
	})
}

// A mount with an OpenAI-compatible embedder (a server of this test on
// loopback) sends it the notes and the queries, redacted, with the key
// from the variable key_env names, and ranks by its vectors.
func TestRemoteEmbedderThroughTheMount(t *testing.T) {
	t.Parallel()
	var calls, leaked atomic.Int64
	const secret = "AKIAQWERTYUIOPASDFGH"
	srv := httptest.NewServer(moneyModel(&calls, &leaked, secret, nil))
	defer srv.Close()
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, []string{"MEMFS_TEST_EMBED_KEY=test-key-123"},
		"--embedder", "openai:"+srv.URL+"/v1?model=test&key_env=MEMFS_TEST_EMBED_KEY", "--embed-wait", "1m")
	notes := map[string]string{
		"memory/a.md": "# Money\nInvoices are kept seven years. aws key " + secret + "\n",
		"memory/b.md": "# Deploys\nCanary on Tuesdays.\n",
	}
	writeNotes(t, mnt, notes)
	// --embed-wait: the search waits for the vectors however loaded the
	// machine, so the first answer is the semantic one.
	if got, err := readMemfs(t, mnt, "search/mode:semantic what about bills"); err != nil || firstKey(got) != "memory/a.md" {
		t.Errorf("a semantic search through the remote model: %q %v", got, err)
	}
	if calls.Load() == 0 {
		t.Error("the remote model was never asked")
	}
	if n := leaked.Load(); n > 0 {
		t.Errorf("%d texts sent to the remote model held the secret", n)
	}
	if st, err := readMemfs(t, mnt, "status"); err != nil || !strings.Contains(st, "embedder openai:"+srv.URL+"/v1#test") || strings.Contains(st, "test-key-123") {
		t.Errorf(".memfs/status: %q %v", st, err)
	}
}

// --embed-wait (memfs.Options.EmbedWait) reaches the search: with a
// model that takes 1.5 s to embed the query, a search given a minute
// answers by meaning, where the default 1 s would rank by keyword and
// find nothing.
func TestEmbedWaitReachesTheSearch(t *testing.T) {
	t.Parallel()
	var calls, leaked atomic.Int64
	const question = "what about bills"
	srv := httptest.NewServer(moneyModel(&calls, &leaked, "", func(input []string) {
		if slices.Contains(input, question) {
			time.Sleep(1500 * time.Millisecond) // a slow model, longer than search.DefaultEmbedWait
		}
	}))
	defer srv.Close()
	mnt := t.TempDir()
	startMount(t, "dir:"+t.TempDir(), mnt, []string{"MEMFS_TEST_EMBED_KEY=test-key-123"},
		"--embedder", "openai:"+srv.URL+"/v1?model=test&key_env=MEMFS_TEST_EMBED_KEY", "--embed-wait", "1m")
	writeNotes(t, mnt, map[string]string{"memory/a.md": "# Money\nInvoices are kept seven years.\n", "memory/b.md": "# Deploys\nCanary on Tuesdays.\n"})
	start := time.Now()
	got, err := readMemfs(t, mnt, "search/mode:semantic "+question)
	if err != nil || firstKey(got) != "memory/a.md" {
		t.Errorf("a search that may wait a minute for a model that takes 1.5 s: %q %v (answered in %v)", got, err, time.Since(start))
	}
}

// A remote model that fails does not take search down: the mount comes
// up, a search answers by keywords, and .memfs/status tells the model's
// last error (without the key).
func TestRemoteEmbedderDownSearchStillAnswers(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, []string{"MEMFS_TEST_EMBED_KEY=test-key-123"},
		"--embedder", "openai:"+srv.URL+"/v1?model=test&key_env=MEMFS_TEST_EMBED_KEY&timeout=1s")
	writeNotes(t, mnt, semanticNotes)
	start := time.Now()
	got, err := readMemfs(t, mnt, "search/canary")
	if err != nil || firstKey(got) != "memory/deploy/canary.md" {
		t.Errorf("search with the model down: %q %v", got, err)
	}
	t.Logf("answered in %v with the model down", time.Since(start))
	var st string
	waitFor(t, ".memfs/status to tell the model's error", 20*time.Second, func() bool {
		st, _ = readMemfs(t, mnt, "status")
		return strings.Contains(st, "last embedding error")
	})
	if strings.Contains(st, "test-key-123") {
		t.Errorf(".memfs/status shows the key: %q", st)
	}
	if calls.Load() == 0 {
		t.Error("the model was never asked: the test shows nothing")
	}
}

// memfs search on a store no mount ever served embeds its notes before it
// answers, and memfs reindex makes the vectors too.
func TestSemanticSearchOfAStoreNeverMounted(t *testing.T) {
	needModel(t)
	src := t.TempDir()
	writeNotes(t, src, semanticNotes)
	for i := range 300 {
		writeNotes(t, src, map[string]string{fmt.Sprintf("memory/filler/n%03d.md", i): fmt.Sprintf("# Filler %d\nA note about the weather on day %d.\n", i, i)})
	}
	store := "dir:" + t.TempDir()
	mustRun(t, "", "import", "--store", store, src)
	const question = "how long do we hold old bills"
	if out := mustRun(t, "", "search", "--store", store, "--mode", "semantic", "--top-k", "1", question); firstKey(out) != "memory/billing/retention.md" {
		t.Errorf("first search of a store never mounted: %q", out)
	}
	mustRun(t, "", "reindex", "--store", store)
	if out := mustRun(t, "", "search", "--store", store, "--mode", "semantic", "--top-k", "1", question); firstKey(out) != "memory/billing/retention.md" {
		t.Errorf("search after reindex: %q", out)
	}
}
