package embed

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Default settings of a remote embedder.
const (
	DefaultBatch   = 64
	DefaultTimeout = 30 * time.Second
	DefaultBackoff = 500 * time.Millisecond
	// MinTimeout is the least timeout= a spec may give: a request needs
	// a round trip to the model, and under it every one failed (at 1ns,
	// before it was sent), leaving search to the words alone.
	MinTimeout = 100 * time.Millisecond
)

// Options configures Open. The zero value uses the process environment,
// http.DefaultClient's transport, the defaults above and no logging.
type Options struct {
	// Getenv reads an environment variable (the API key, the model
	// directory); nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient sends remote requests; nil means a client of its own.
	HTTPClient *http.Client
	// Timeout is the per-request timeout when the spec gives none; 0
	// means DefaultTimeout.
	Timeout time.Duration
	// Backoff is the wait before the first retry (doubled before each
	// next one); 0 means DefaultBackoff.
	Backoff time.Duration
	// Logger receives retries; nil discards.
	Logger *slog.Logger
}

// Open returns the embedder a spec names:
//
//	none                    no embedder: (nil, nil)
//	"" or default           the static table DefaultDir/DefaultTable
//	static:PATH             a static table file
//	openai:URL?model=M[&key_env=VAR][&dim=N][&batch=B][&timeout=30s][&floor=F]
//	ollama:URL?model=M[&dim=N][&batch=B][&timeout=30s][&floor=F]
//
// URL is the API base (http://127.0.0.1:8080/v1 for OpenAI-compatible
// servers, http://127.0.0.1:11434 for Ollama). The OpenAI key is read
// from the variable key_env names (OPENAI_API_KEY by default; none sent
// when it is empty). floor= is the model's Floor, -1 to below 1
// (RemoteFloor when not given).
func Open(spec string, o Options) (Embedder, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	kind, rest, _ := strings.Cut(spec, ":")
	switch kind {
	case "none":
		if rest != "" {
			return nil, fmt.Errorf("embed: spec %q: none takes no argument", spec)
		}
		return nil, nil
	case "", "default":
		if rest != "" {
			return nil, fmt.Errorf("embed: spec %q: default takes no argument", spec)
		}
		path := filepath.Join(DefaultDir(o.Getenv), DefaultTable)
		s, err := OpenStatic(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: no table at %s; run `memfs models install`", ErrNotInstalled, path)
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	case "static":
		if rest == "" {
			return nil, fmt.Errorf("embed: spec %q: static needs a path (static:PATH)", spec)
		}
		s, err := OpenStatic(rest)
		if err != nil {
			return nil, err // a nil Embedder, not a nil *Static
		}
		return s, nil
	case "openai", "ollama":
		e, err := openRemote(kind, rest, o)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	return nil, fmt.Errorf("embed: spec %q: unknown kind %q (want none, default, static:PATH, openai:URL, ollama:URL)", spec, kind)
}

func openRemote(kind, rest string, o Options) (*Remote, error) {
	u, err := url.Parse(rest)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embed: %s: %q is not an http(s) URL", kind, rest)
	}
	if u.User != nil {
		return nil, fmt.Errorf("embed: %s: credentials in the URL are refused; use key_env", kind)
	}
	q := u.Query()
	u.RawQuery, u.Fragment = "", ""
	e := &Remote{
		kind:    kind,
		base:    strings.TrimRight(u.String(), "/"),
		batch:   DefaultBatch,
		timeout: o.Timeout,
		backoff: o.Backoff,
		floor:   RemoteFloor,
		client:  o.HTTPClient,
		log:     o.Logger,
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.backoff <= 0 {
		e.backoff = DefaultBackoff
	}
	if e.client == nil {
		e.client = &http.Client{}
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	keyEnv := ""
	for name, vals := range q {
		if len(vals) != 1 {
			return nil, fmt.Errorf("embed: %s: parameter %s given %d times", kind, name, len(vals))
		}
		if name == "key_env" && kind == "openai" {
			keyEnv = vals[0]
		} else if err := e.setParam(name, vals[0]); err != nil {
			return nil, err
		}
	}
	if e.model == "" {
		return nil, fmt.Errorf("embed: %s: model= is required", kind)
	}
	if kind == "openai" {
		if keyEnv == "" {
			e.key = o.Getenv("OPENAI_API_KEY")
		} else if e.key = o.Getenv(keyEnv); e.key == "" {
			return nil, fmt.Errorf("embed: %s: key_env=%s but $%s is empty", kind, keyEnv, keyEnv)
		}
	}
	e.dim.Store(int64(e.wantDim))
	return e, nil
}

// setParam sets the spec's parameter name= (but key_env) to v.
func (e *Remote) setParam(name, v string) error {
	switch name {
	case "model":
		e.model = v
	case "dim", "batch":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > maxTableDim && name == "dim" {
			return fmt.Errorf("embed: %s: %s=%q is not a positive number", e.kind, name, v)
		}
		if name == "dim" {
			e.wantDim = n
		} else {
			e.batch = n
		}
	case "timeout":
		d, err := time.ParseDuration(v)
		if err != nil || d < MinTimeout {
			return fmt.Errorf("embed: %s: timeout=%q: want a duration of at least %v", e.kind, v, MinTimeout)
		}
		e.timeout = d
	case "floor":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= -1 && f < 1) {
			return fmt.Errorf("embed: %s: floor=%q: want a cosine from -1 to below 1", e.kind, v)
		}
		e.floor = f
	default:
		return fmt.Errorf("embed: %s: unknown parameter %q", e.kind, name)
	}
	return nil
}

// Describe says in one line what embedder e is, for status lines.
func Describe(e Embedder) string {
	switch e := e.(type) {
	case nil:
		return "none: keyword search only"
	case *Static:
		return fmt.Sprintf("%s: static table, %d words, dim %d, %s", e.ID(), e.Words(), e.Dim(), e.Path())
	case *Lazy:
		if !e.Loaded() {
			return e.name + ": opened at its first use"
		}
		return Describe(e.Load())
	case *Remote:
		if e.Dim() == 0 {
			return e.ID() + ": remote, dim learned on first use"
		}
		return fmt.Sprintf("%s: remote, dim %d", e.ID(), e.Dim())
	}
	return fmt.Sprintf("%s: dim %d", e.ID(), e.Dim())
}
