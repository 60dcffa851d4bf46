package embed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memfs/memfs/embed"
)

const secret = "sk-test-7f3a9c1d-very-secret"

// fakeServer answers OpenAI or Ollama embedding requests on loopback with
// vectors [len(text), 1, 0...] of dimension dim; fail, when set, may answer
// instead.
type fakeServer struct {
	*httptest.Server
	dim      int
	requests atomic.Int32
	mu       sync.Mutex // guards the fields below
	sizes    []int      // inputs per request
	auth     []string   // Authorization headers
	fail     func(n int32, w http.ResponseWriter) bool
	reverse  bool // answer data in reverse order (index says where)
	extra    int  // vectors added to or (negative) dropped from each answer
	dims     []int
}

func newFake(t *testing.T, dim int) *fakeServer {
	f := &fakeServer{dim: dim}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.sizes = append(f.sizes, len(req.Input))
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	fail, reverse, extra, dims := f.fail, f.reverse, f.extra, f.dims
	f.mu.Unlock()
	if fail != nil && fail(n, w) {
		return
	}
	vecs := make([][]float32, len(req.Input)+extra)
	for i := range vecs {
		d := f.dim
		if dims != nil {
			d = dims[i%len(dims)]
		}
		v := make([]float32, d)
		if i < len(req.Input) {
			v[0] = float32(len(req.Input[i]))
		}
		v[1] = 1
		vecs[i] = v
	}
	switch r.URL.Path {
	case "/api/embed":
		json.NewEncoder(w).Encode(map[string]any{"embeddings": vecs})
	case "/v1/embeddings":
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, v := range vecs {
			data = append(data, item{i, v})
		}
		if reverse {
			for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
				data[i], data[j] = data[j], data[i]
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeServer) set(fn func(f *fakeServer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func openFake(t *testing.T, spec string, log *bytes.Buffer) embed.Embedder {
	t.Helper()
	o := embed.Options{Getenv: env(map[string]string{"OPENAI_API_KEY": secret, "MY_KEY": secret}), Backoff: time.Millisecond}
	if log != nil {
		o.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	e, err := embed.Open(spec, o)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	return e
}

func texts(n int) []string {
	var out []string
	for i := range n {
		out = append(out, strings.Repeat("x", i+1))
	}
	return out
}

func TestRemoteBatchingAndOrder(t *testing.T) {
	for _, kind := range []string{"openai", "ollama"} {
		t.Run(kind, func(t *testing.T) {
			f := newFake(t, 3)
			f.set(func(f *fakeServer) { f.reverse = true })
			base := f.URL
			if kind == "openai" {
				base += "/v1"
			}
			e := openFake(t, kind+":"+base+"?model=m1&batch=4", nil)
			if e.Dim() != 0 {
				t.Errorf("Dim before the first answer = %d, want 0", e.Dim())
			}
			if want := kind + ":" + base + "#m1"; e.ID() != want {
				t.Errorf("ID %q, want %q", e.ID(), want)
			}
			in := texts(10)
			vecs, err := e.Embed(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.requests.Load(); got != 3 {
				t.Errorf("%d requests for 10 texts in batches of 4, want 3", got)
			}
			if !equalInts(f.sizes, []int{4, 4, 2}) {
				t.Errorf("batch sizes %v, want [4 4 2]", f.sizes)
			}
			if e.Dim() != 3 {
				t.Errorf("Dim after the answer = %d, want 3", e.Dim())
			}
			for i, v := range vecs {
				// [len, 1, 0] normalized: the first component tells the text.
				l := float64(len(in[i]))
				if want := l / sqrt(l*l+1); abs(float64(v[0])-want) > 1e-5 || abs(norm(v)-1) > 1e-5 {
					t.Errorf("vector %d = %v, want [%v …] of norm 1", i, v, want)
				}
			}
		})
	}
}

func TestRemoteRetries(t *testing.T) {
	for _, code := range []int{500, 503, 429} {
		f := newFake(t, 2)
		f.set(func(f *fakeServer) {
			f.fail = func(n int32, w http.ResponseWriter) bool {
				if n <= 2 {
					http.Error(w, "try later", code)
					return true
				}
				return false
			}
		})
		var log bytes.Buffer
		e := openFake(t, "ollama:"+f.URL+"?model=m", &log)
		if _, err := e.Embed(t.Context(), []string{"a"}); err != nil {
			t.Errorf("status %d twice then success: %v", code, err)
		}
		if got := f.requests.Load(); got != 3 {
			t.Errorf("status %d: %d requests, want 3", code, got)
		}
		if !strings.Contains(log.String(), "retrying") {
			t.Errorf("status %d: no retry logged: %q", code, log.String())
		}
	}
	// Gives up after 3 tries.
	f := newFake(t, 2)
	f.set(func(f *fakeServer) {
		f.fail = func(n int32, w http.ResponseWriter) bool { http.Error(w, "down", http.StatusBadGateway); return true }
	})
	e := openFake(t, "openai:"+f.URL+"/v1?model=m", nil)
	_, err := e.Embed(t.Context(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "502") {
		t.Errorf("always 502: %v, want an error naming the status", err)
	}
	if got := f.requests.Load(); got != 3 {
		t.Errorf("always 502: %d requests, want 3", got)
	}
	// A 400 is not retried.
	f = newFake(t, 2)
	f.set(func(f *fakeServer) {
		f.fail = func(n int32, w http.ResponseWriter) bool { http.Error(w, "bad", http.StatusBadRequest); return true }
	})
	e = openFake(t, "openai:"+f.URL+"/v1?model=m", nil)
	if _, err := e.Embed(t.Context(), []string{"a"}); err == nil || f.requests.Load() != 1 {
		t.Errorf("400: err %v after %d requests, want an error after 1", err, f.requests.Load())
	}
	// A network error is retried: a closed server.
	f = newFake(t, 2)
	url := f.URL
	f.Close()
	e = openFake(t, "ollama:"+url+"?model=m", nil)
	if _, err := e.Embed(t.Context(), []string{"a"}); err == nil {
		t.Error("closed server: no error")
	}
}

func TestRemoteRetryAfter(t *testing.T) {
	f := newFake(t, 2)
	f.set(func(f *fakeServer) {
		f.fail = func(n int32, w http.ResponseWriter) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return true
			}
			return false
		}
	})
	e := openFake(t, "ollama:"+f.URL+"?model=m", nil)
	start := time.Now()
	if _, err := e.Embed(t.Context(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v, want the 1 s Retry-After asked for", d)
	}
}

func TestRemoteTimeout(t *testing.T) {
	f := newFake(t, 2)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.set(func(f *fakeServer) {
		f.fail = func(n int32, w http.ResponseWriter) bool {
			if n == 1 {
				<-release
				return true
			}
			return false
		}
	})
	e := openFake(t, "ollama:"+f.URL+"?model=m&timeout=100ms", nil)
	start := time.Now()
	if _, err := e.Embed(t.Context(), []string{"a"}); err != nil {
		t.Errorf("first request hangs, second answers: %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("took %v, want about the 100ms timeout", d)
	}
	// A cancelled context stops the retries.
	f2 := newFake(t, 2)
	f2.set(func(f *fakeServer) {
		f.fail = func(n int32, w http.ResponseWriter) bool {
			http.Error(w, "x", http.StatusInternalServerError)
			return true
		}
	})
	e = embedOpen(t, "ollama:"+f2.URL+"?model=m", embed.Options{Backoff: time.Hour})
	ctx, cancel := contextWithTimeout(t, 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := e.Embed(ctx, []string{"a"}); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled during backoff: err %v after %v, want an error soon", err, time.Since(start))
	}
}

func TestRemoteBadAnswers(t *testing.T) {
	tests := []struct {
		name string
		spec string
		set  func(f *fakeServer)
		want string
	}{
		{"too many vectors", "?model=m", func(f *fakeServer) { f.extra = 1 }, "3 vectors for 2 texts"},
		{"too few vectors", "?model=m", func(f *fakeServer) { f.extra = -1 }, "1 vectors for 2 texts"},
		{"mixed dimensions", "?model=m", func(f *fakeServer) { f.dims = []int{3, 4} }, "dimension 4, want 3"},
		{"dim= differs", "?model=m&dim=8", func(f *fakeServer) {}, "dimension 3, want 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, 3)
			f.set(tt.set)
			e := openFake(t, "ollama:"+f.URL+tt.spec, nil)
			_, err := e.Embed(t.Context(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
	// The dimension learned from the first answer holds for the next.
	f := newFake(t, 3)
	e := openFake(t, "ollama:"+f.URL+"?model=m", nil)
	if _, err := e.Embed(t.Context(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	f.set(func(f *fakeServer) { f.dim = 5 })
	if _, err := e.Embed(t.Context(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "want 3") {
		t.Errorf("second answer of another dimension: %v", err)
	}
	if e.Dim() != 3 {
		t.Errorf("Dim = %d, want 3", e.Dim())
	}
	// dim= is Dim before any answer.
	if e := openFake(t, "ollama:"+f.URL+"?model=m&dim=5", nil); e.Dim() != 5 {
		t.Errorf("Dim with dim=5: %d", e.Dim())
	}
}

func TestRemoteKey(t *testing.T) {
	f := newFake(t, 2)
	// The server echoes the Authorization header in its error.
	f.set(func(f *fakeServer) {
		f.fail = func(n int32, w http.ResponseWriter) bool {
			http.Error(w, "unauthorized: "+f.auth[len(f.auth)-1], http.StatusServiceUnavailable)
			return true
		}
	})
	var log bytes.Buffer
	e := openFake(t, "openai:"+f.URL+"/v1?model=m&key_env=MY_KEY", &log)
	_, err := e.Embed(t.Context(), []string{"a"})
	if err == nil {
		t.Fatal("no error from a failing server")
	}
	if f.auth[0] != "Bearer "+secret {
		t.Errorf("Authorization %q, want the key from $MY_KEY", f.auth[0])
	}
	for what, s := range map[string]string{"error": err.Error(), "log": log.String(), "ID": e.ID(), "Describe": embed.Describe(e)} {
		if strings.Contains(s, secret) || strings.Contains(s, "7f3a9c1d") {
			t.Errorf("the key appears in the %s: %q", what, s)
		}
	}
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("error %q: want the echoed key shown as [redacted]", err)
	}
	// A key echoed across the 200 bytes an error quotes leaves no part
	// of itself in the error.
	f3 := newFake(t, 2)
	f3.set(func(f *fakeServer) {
		f.fail = func(n int32, w http.ResponseWriter) bool {
			http.Error(w, strings.Repeat("x", 180)+f.auth[len(f.auth)-1], http.StatusServiceUnavailable)
			return true
		}
	})
	_, err = openFake(t, "openai:"+f3.URL+"/v1?model=m&key_env=MY_KEY", nil).Embed(t.Context(), []string{"a"})
	if err == nil || strings.Contains(err.Error(), secret[:8]) {
		t.Errorf("error %v: want one with no part of the key", err)
	}
	// No key: no header.
	f2 := newFake(t, 2)
	e2, err := embed.Open("openai:"+f2.URL+"/v1?model=m", embed.Options{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Embed(t.Context(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if f2.auth[0] != "" {
		t.Errorf("Authorization %q without a key, want none", f2.auth[0])
	}
	// key_env naming an empty variable is refused at Open, without the key.
	if _, err := embed.Open("openai:"+f2.URL+"/v1?model=m&key_env=NOPE", embed.Options{Getenv: env(nil)}); err == nil {
		t.Error("key_env=NOPE with $NOPE empty: opened")
	}
}

func TestOpenSpecs(t *testing.T) {
	dir := t.TempDir()
	getenv := env(map[string]string{"MEMFS_MODEL_DIR": dir})
	e, err := embed.Open("none", embed.Options{Getenv: getenv})
	if e != nil || err != nil {
		t.Errorf("none: %v, %v; want nil, nil", e, err)
	}
	if got := embed.Describe(nil); got != "none: keyword search only" {
		t.Errorf("Describe(nil) = %q", got)
	}
	for _, spec := range []string{"", "default"} {
		_, err := embed.Open(spec, embed.Options{Getenv: getenv})
		if !errors.Is(err, embed.ErrNotInstalled) || !strings.Contains(err.Error(), "memfs models install") {
			t.Errorf("%q without a table: %v, want ErrNotInstalled telling to run memfs models install", spec, err)
		}
	}
	if err := embed.WriteTableFile(dir+"/"+embed.DefaultTable, synthTable()); err != nil {
		t.Fatal(err)
	}
	e, err = embed.Open("default", embed.Options{Getenv: getenv})
	if err != nil || e.Dim() != 4 {
		t.Fatalf("default with a table: %v, %v", e, err)
	}
	if d := embed.Describe(e); !strings.Contains(d, e.ID()) || !strings.Contains(d, "10 words") {
		t.Errorf("Describe = %q", d)
	}
	if e, err := embed.Open("static:"+dir+"/"+embed.DefaultTable, embed.Options{}); err != nil || e.Dim() != 4 {
		t.Errorf("static:PATH: %v, %v", e, err)
	}
	for _, spec := range []string{
		"bogus", "none:x", "default:x", "static:", "static:/nonexistent/t.mfse",
		"openai:", "openai:ftp://h/v1?model=m", "openai:http:///v1?model=m", "openai:http://h/v1",
		"openai:http://h/v1?model=m&dim=0", "openai:http://h/v1?model=m&dim=x", "openai:http://h/v1?model=m&batch=-1",
		"openai:http://h/v1?model=m&timeout=soon", "openai:http://h/v1?model=m&timeout=1ns", "openai:http://h/v1?model=m&timeout=99ms",
		"openai:http://h/v1?model=m&colour=red", "openai:http://h/v1?model=m&model=n",
		"openai:http://h/v1?model=m&floor=1", "openai:http://h/v1?model=m&floor=-1.5", "openai:http://h/v1?model=m&floor=NaN", "ollama:http://h?model=m&floor=high",
		"openai://user:pw@h/v1?model=m", "ollama:http://h?model=m&key_env=K",
	} {
		if e, err := embed.Open(spec, embed.Options{Getenv: getenv}); err == nil || e != nil {
			t.Errorf("Open(%q) = %v, %v; want nil and an error", spec, e, err)
		}
	}
	e, err = embed.Open("openai:http://127.0.0.1:8080/v1/?model=text-embedding-3-small&dim=1536&batch=8&timeout=5s", embed.Options{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if e.ID() != "openai:http://127.0.0.1:8080/v1#text-embedding-3-small" || e.Dim() != 1536 {
		t.Errorf("ID %q dim %d", e.ID(), e.Dim())
	}
	// The floor: a remote model's own, the static table's for a table.
	if f := embed.FloorOf(e); f != embed.RemoteFloor {
		t.Errorf("remote floor %v, want RemoteFloor %v", f, embed.RemoteFloor)
	}
	e, err = embed.Open("ollama:http://127.0.0.1:11434?model=nomic-embed-text&floor=0.35", embed.Options{})
	if err != nil || embed.FloorOf(e) != 0.35 || e.ID() != "ollama:http://127.0.0.1:11434#nomic-embed-text" {
		t.Errorf("floor=0.35: %v, floor %v, ID %q; want 0.35, the ID without it", err, embed.FloorOf(e), e.ID())
	}
	if e, err := embed.Open("default", embed.Options{Getenv: getenv}); err != nil || embed.FloorOf(e) != embed.StaticFloor {
		t.Errorf("static floor: %v, %v; want StaticFloor", embed.FloorOf(e), err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func abs(x float64) float64  { return math.Abs(x) }
func sqrt(x float64) float64 { return math.Sqrt(x) }

func embedOpen(t *testing.T, spec string, o embed.Options) embed.Embedder {
	t.Helper()
	e, err := embed.Open(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}
