package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// remoteTries is how many times a request is sent before Embed gives up.
const remoteTries = 3

// Remote is the embedder of an embedding server: an OpenAI-compatible
// one (POST <url>/embeddings) or Ollama (POST <url>/api/embed). Open it
// with Open("openai:…") or Open("ollama:…").
type Remote struct {
	kind    string // "openai" or "ollama"
	base    string // the URL without a trailing "/"
	model   string
	key     string // API key; never in an ID, an error or a log line
	batch   int
	timeout time.Duration // per request
	backoff time.Duration // the wait before the second try; doubled after
	wantDim int           // from dim=; 0 = learn it
	floor   float64       // from floor=; RemoteFloor when not given
	client  *http.Client
	log     *slog.Logger

	dim atomic.Int64 // learned or configured dimension; 0 until known
}

var (
	_ Embedder = (*Remote)(nil)
	_ Floorer  = (*Remote)(nil)
)

// ID is "<kind>:<url>#<model>".
func (e *Remote) ID() string { return e.kind + ":" + e.base + "#" + e.model }

// Floor is floor= when the spec gives it, else RemoteFloor.
func (e *Remote) Floor() float64 { return e.floor }

// Dim is dim= when given, else the length of the first answer's vectors;
// 0 before it.
func (e *Remote) Dim() int { return int(e.dim.Load()) }

// Embed sends texts in batches and returns their L2-normalized vectors.
func (e *Remote) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.batch {
		end := min(start+e.batch, len(texts))
		vecs, err := e.embedBatch(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// httpStatusError is an answer with a non-2xx status.
type httpStatusError struct {
	code       int
	body       string
	retryAfter time.Duration // the server's Retry-After, in seconds; 0 = none
}

// maxRetryAfter bounds the wait a server's Retry-After asks for.
const maxRetryAfter = 30 * time.Second

func (e *httpStatusError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("status %d", e.code)
	}
	return fmt.Sprintf("status %d: %s", e.code, e.body)
}

func retryable(err error) bool {
	var se *httpStatusError
	if errors.As(err, &se) {
		return se.code == http.StatusTooManyRequests || se.code >= 500
	}
	var pe *protocolError
	return !errors.As(err, &pe) // a network error or a timeout
}

// protocolError is an answer that cannot be used: retrying won't help.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

func (e *Remote) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	var err error
	wait := e.backoff
	for try := 1; ; try++ {
		var vecs [][]float32
		vecs, err = e.request(ctx, texts)
		if err == nil {
			return e.check(vecs, len(texts))
		}
		err = e.redact(err)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embed: %s: %w", e.ID(), ctx.Err())
		}
		if !retryable(err) || try == remoteTries {
			break
		}
		var se *httpStatusError
		if errors.As(err, &se) && se.retryAfter > wait {
			wait = min(se.retryAfter, maxRetryAfter)
		}
		e.log.Warn("embed request failed; retrying", "model", e.ID(), "try", try, "wait", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("embed: %s: %w", e.ID(), ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
	return nil, fmt.Errorf("embed: %s: %d texts: %w", e.ID(), len(texts), err)
}

// redact replaces the API key in an error's text, should a server or a
// library have echoed it.
func (e *Remote) redact(err error) error {
	if e.key == "" || !strings.Contains(err.Error(), e.key) {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), e.key, "[redacted]")
	var se *httpStatusError
	if errors.As(err, &se) {
		return &httpStatusError{code: se.code, body: msg, retryAfter: se.retryAfter}
	}
	var pe *protocolError
	if errors.As(err, &pe) {
		return &protocolError{msg: msg}
	}
	return errors.New(msg)
}

// check verifies the count and dimensions of an answer and normalizes it.
func (e *Remote) check(vecs [][]float32, n int) ([][]float32, error) {
	if len(vecs) != n {
		return nil, fmt.Errorf("embed: %s: %d vectors for %d texts", e.ID(), len(vecs), n)
	}
	d := int(e.dim.Load())
	for i, v := range vecs {
		if d == 0 {
			if len(v) == 0 {
				return nil, fmt.Errorf("embed: %s: empty vector", e.ID())
			}
			if e.dim.CompareAndSwap(0, int64(len(v))) {
				d = len(v)
			} else {
				d = int(e.dim.Load())
			}
		}
		if len(v) != d {
			return nil, fmt.Errorf("embed: %s: vector %d has dimension %d, want %d", e.ID(), i, len(v), d)
		}
		normalize(v)
	}
	return vecs, nil
}

func normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		clear(v)
		return
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}

// request sends one batch once.
func (e *Remote) request(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	url := e.base + "/embeddings"
	if e.kind == "ollama" {
		url = e.base + "/api/embed"
	}
	body, err := json.Marshal(map[string]any{"model": e.model, "input": texts})
	if err != nil {
		return nil, &protocolError{msg: "encode request: " + err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &protocolError{msg: "build request: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		snippet := strings.TrimSpace(string(data))
		if e.key != "" {
			// Before the cut: a key the server echoes across the cut
			// would otherwise leave its first part in the error.
			snippet = strings.ReplaceAll(snippet, e.key, "[redacted]")
		}
		if len(snippet) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(snippet[cut]) {
				cut--
			}
			snippet = snippet[:cut] + "…"
		}
		se := &httpStatusError{code: resp.StatusCode, body: snippet}
		if sec, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && sec > 0 {
			se.retryAfter = time.Duration(sec) * time.Second
		}
		return nil, se
	}
	if e.kind == "ollama" {
		var ans struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := json.Unmarshal(data, &ans); err != nil {
			return nil, &protocolError{msg: "decode answer: " + err.Error()}
		}
		return ans.Embeddings, nil
	}
	var ans struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return nil, &protocolError{msg: "decode answer: " + err.Error()}
	}
	sort.SliceStable(ans.Data, func(i, j int) bool { return ans.Data[i].Index < ans.Data[j].Index })
	vecs := make([][]float32, len(ans.Data))
	for i, d := range ans.Data {
		if d.Index != i {
			return nil, &protocolError{msg: "answer indexes are not 0.." + strconv.Itoa(len(ans.Data)-1)}
		}
		vecs[i] = d.Embedding
	}
	return vecs, nil
}
