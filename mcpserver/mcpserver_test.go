package mcpserver_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/mcptest"
	"github.com/memfs/memfs/mcpserver"
	"github.com/memfs/memfs/redact"
)

// open opens a real dir store as memfs mcp does (a writing command).
func open(t *testing.T) *memfs.FS {
	t.Helper()
	f, _ := openDir(t)
	return f
}

// openDir is open that also returns the store's directory.
func openDir(t *testing.T) (*memfs.FS, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := redact.NewFromFile("")
	if err != nil {
		t.Fatal(err)
	}
	opts := memfs.CommandOptions{Access: memfs.WriteStore, Agent: "test", Redactor: r}.Options()
	opts.JournalPath = filepath.Join(dir, dirstore.JournalName)
	opts.Namespace = true
	opts.Logger = slog.New(slog.DiscardHandler)
	f, err := memfs.Open(t.Context(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return f, dir
}

// bearer adds a bearer token to each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: mcptest.Client, Version: "1"}, nil)
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	return c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
}

func TestHTTPEveryTool(t *testing.T) {
	s := mcpserver.New(open(t), mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(s.Handler("s3cret-token"))
	defer srv.Close()
	cs, err := connectHTTP(t, srv.URL, "s3cret-token")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcptest.Exercise(t, cs, "mcp:"+mcptest.Client)
}

func TestHTTPRefusesWithoutToken(t *testing.T) {
	s := mcpserver.New(open(t), mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(s.Handler("s3cret-token"))
	defer srv.Close()
	for _, token := range []string{"", "wrong"} {
		if cs, err := connectHTTP(t, srv.URL, token); err == nil {
			cs.Close()
			t.Errorf("token %q: connected, want a refusal", token)
		}
	}
	resp, err := http.Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request without a token: status %d, want 401", resp.StatusCode)
	}
}

func TestCheckListen(t *testing.T) {
	for _, tt := range []struct {
		addr, token string
		want        error
	}{
		{"127.0.0.1:0", "", nil},
		{"localhost:8765", "", nil},
		{"[::1]:8765", "", nil},
		{"0.0.0.0:8765", "", mcpserver.ErrNeedToken},
		{":8765", "", mcpserver.ErrNeedToken},
		{"192.0.2.1:8765", "", mcpserver.ErrNeedToken},
		{"0.0.0.0:8765", "t", nil},
	} {
		err := mcpserver.CheckListen(tt.addr, tt.token)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("CheckListen(%q, %q) = %v, want %v", tt.addr, tt.token, err, tt.want)
		}
	}
	if err := mcpserver.CheckListen("nonsense", ""); err == nil {
		t.Error("CheckListen(nonsense) = nil, want an error")
	}
}

func TestServeOptions(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	t.Setenv(mcpserver.TokenEnv, "")
	for _, tt := range []struct {
		name string
		o    mcpserver.ServeOptions
		ok   bool
	}{
		{"stdio", mcpserver.ServeOptions{}, true},
		{"stdio with a token file", mcpserver.ServeOptions{TokenFile: tok}, false},
		{"beyond loopback without a token", mcpserver.ServeOptions{HTTP: "0.0.0.0:0"}, false},
		{"a missing token file", mcpserver.ServeOptions{HTTP: "0.0.0.0:0", TokenFile: tok}, false},
		{"a prefix outside the store", mcpserver.ServeOptions{Options: mcpserver.Options{Prefix: "../x"}}, false},
	} {
		if err := tt.o.Check(); (err == nil) != tt.ok {
			t.Errorf("%s: Check() = %v", tt.name, err)
		}
	}
	t.Setenv(mcpserver.TokenEnv, "from-env")
	if err := (mcpserver.ServeOptions{HTTP: "0.0.0.0:0"}).Check(); err != nil {
		t.Errorf("a token in %s: %v", mcpserver.TokenEnv, err)
	}
}

// TestNotifiesAChangeOfTheStore: a client subscribed to a note's
// resource (over the SDK's in-memory transport, as over stdio) is told
// when the note changes, whichever door changed it (here a tool).
func TestNotifiesAChangeOfTheStore(t *testing.T) {
	s := mcpserver.New(open(t), mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s.Follow(ctx)
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	updated := make(chan string, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: mcptest.Client, Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	uri := mcpserver.URI("memory/n.md")
	go cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	n := 0
	if !await.Cond(30*time.Second, time.Millisecond, func() bool {
		n++
		if n == 1 {
			mcptest.Ok(t, cs, "create", map[string]any{"path": "/memories/n.md", "file_text": "x\n"})
		} else {
			mcptest.Ok(t, cs, "insert", map[string]any{"path": "/memories/n.md", "insert_line": 0, "insert_text": "x"})
		}
		for {
			select {
			case got := <-updated:
				if got == uri {
					return true
				}
			case <-time.After(500 * time.Millisecond):
				return false
			}
		}
	}) {
		t.Fatalf("no notifications/resources/updated of %s after %d changes", uri, n)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.HasPrefix(res.Contents[0].Text, "x") {
		t.Errorf("read %s: %v %+v", uri, err, res)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.Scheme + "memory/../x"}); err == nil {
		t.Error("read memfs://memory/../x: no error")
	}
}
