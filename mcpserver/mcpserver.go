// Package mcpserver serves an open memfs store to agents over the Model
// Context Protocol (the official Go SDK, github.com/modelcontextprotocol/go-sdk):
// the door for an agent that runs without FUSE (a sandbox, a remote
// container, a desktop client).
//
// Its tools are the Claude memory tool's commands (view, create,
// str_replace, insert, delete, rename, run by package memorytool, with the
// same paths under /memories and the same optional expected SHA-256), and
// memfs's own: search, context_pack, log, history, revert, snapshot,
// summary_add and tag. Each is annotated read-only, idempotent or
// destructive. A change through a tool is the change a shell makes on the
// mount (memfs.FS.WriteFile and its siblings): the same key rules, the
// same redaction, the same event, whose writer names the door,
// "mcp:<client name>". The server flushes after each change, so that what
// a tool acknowledged is in the store.
//
// A server over a running mount (NewMount) goes through the mount's files
// as its process's user: the mount checks each call as any program's, and
// stays the store's one writer; its events name the server's process.
//
// Files are resources (memfs://KEY), the context pack too
// (memfs://.memfs/context); subscribers are told of changes from the
// change feed (Follow). See resources.go.
//
// Two transports: stdio (ServeStdio), for an agent that starts the server
// itself, and streamable HTTP in stateless mode (Handler, ListenHTTP),
// bound to loopback unless told otherwise; anywhere but loopback it
// requires a bearer token (CheckListen), which the command reads from a
// file or the environment, never a flag (flags show in ps).
//
// The SDK is the official one (maintained by the protocol's authors with
// Google), pinned at v1.8.0: it follows the protocol's revisions
// (stateless streamable HTTP, per-request client info), validates tool
// inputs against schemas inferred from the Go types, and ships the
// client the tests drive the server with; the community mcp-go would be a
// second implementation to keep in step with the spec.
//
// Errors are tool errors (the result's isError) with a message an agent
// can act on: what failed and what to do.
package mcpserver

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/memorytool"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
)

// Options configure a Server. The zero value serves /memories at
// memorytool.DefaultPrefix.
type Options struct {
	// Prefix is the key prefix /memories maps to (memorytool.Options).
	Prefix string
	// Version is the server's version in the MCP handshake.
	Version string
	// Logger receives what the server reports; slog.Default when nil.
	// Over stdio it must not write to standard output.
	Logger *slog.Logger
}

// Server is an MCP server over an open store.
type Server struct {
	st   store               // immutable after New
	tool *memorytool.Handler // runs the memory tool's commands
	mcp  *mcp.Server
	log  *slog.Logger
}

// New returns a Server over the open store f, its tools registered.
func New(f *memfs.FS, opts Options) *Server {
	return newServer(engine{f: f, log: logger(opts)}, opts)
}

// NewMount returns a Server through the running mount c: every tool
// works through the mount's files as this process's user, so the mount
// checks each change as it checks any program's, and its session stays
// the store's one writer.
func NewMount(c *mountclient.Client, opts Options) *Server {
	return newServer(mount{c: c, log: logger(opts)}, opts)
}

func logger(opts Options) *slog.Logger {
	if opts.Logger == nil {
		return slog.Default()
	}
	return opts.Logger
}

func newServer(st store, opts Options) *Server {
	log := logger(opts)
	s := &Server{st: st, tool: memorytool.NewFiles(st.files(), memorytool.Options{Prefix: opts.Prefix, Writer: "mcp"}), log: log}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "memfs", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "memfs is this agent's memory. The memory tool's commands (view, create, str_replace, insert, delete, rename) " +
			"work on /memories; search, context_pack, log, history and tag on the store's keys (memory/notes.md).",
		Logger:             log,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.addMemoryTools()
	s.addStoreTools()
	s.addResources()
	return s
}

// MCP returns the SDK's server, to connect to a transport of the
// caller's.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// ServeStdio serves one client over standard input and output until it
// disconnects or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.mcp.Run(ctx, &mcp.StdioTransport{})
}

// Handler is the streamable HTTP handler, stateless (each request stands
// alone, as the protocol's current revision asks). With token not
// empty, a request without "Authorization: Bearer <token>" is refused
// (401).
func (s *Server) Handler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="memfs"`)
			http.Error(w, "memfs mcp: send the bearer token the server was started with (Authorization: Bearer ...)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ErrNeedToken is a listen address beyond loopback without a token.
var ErrNeedToken = errors.New("a bearer token is required to listen beyond loopback")

// CheckListen refuses to serve addr (host:port) beyond loopback without a
// token: anyone who reaches the port would read and write the memory.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w (want HOST:PORT, such as 127.0.0.1:8765)", addr, err)
	}
	if token != "" || Loopback(host) {
		return nil
	}
	return fmt.Errorf("%s: %w: put one in a file (--token-file) or MEMFS_MCP_TOKEN", addr, ErrNeedToken)
}

// Loopback reports whether host names only the loopback interface (an
// empty host is every interface).
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ListenHTTP serves streamable HTTP at addr until ctx ends (CheckListen
// first). ready, when not nil, is called with the address listened on
// (the port chosen for ":0").
func (s *Server) ListenHTTP(ctx context.Context, addr, token string, ready func(net.Addr)) error {
	if err := CheckListen(addr, token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler(token), ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}

// writer is the door's name for the client of req: "mcp:<client name>",
// the name cut to the agent alphabet (meta.ValidateAgent); "mcp" when the
// client gave none.
func writer(req *mcp.CallToolRequest) string {
	ci := req.ClientInfo()
	if ci == nil || ci.Name == "" {
		return "mcp"
	}
	name := strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@/", r)) {
			return r
		}
		return '-'
	}, ci.Name)
	w := "mcp:" + name
	if len(w) > meta.MaxAgentLen {
		w = w[:meta.MaxAgentLen]
	}
	return w
}

// text is a result whose content is s.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// jsonText is a result whose content is v as JSON.
func jsonText(v any) (*mcp.CallToolResult, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return text(string(b)), nil
}

func ptr[T any](v T) *T { return &v }

// TokenEnv is the environment variable that holds the HTTP bearer token
// when no token file is named.
const TokenEnv = "MEMFS_MCP_TOKEN"

// ServeOptions say how Serve serves: over stdio, or over HTTP.
type ServeOptions struct {
	Options
	// HTTP is the HOST:PORT to serve streamable HTTP at; "" serves stdio.
	HTTP string
	// TokenFile holds the bearer token HTTP clients must send; when
	// empty, TokenEnv's value (if any) is the token.
	TokenFile string
	// Ready, when not nil, is called with the address HTTP listens on.
	Ready func(net.Addr)
}

// Token reads the bearer token: TokenFile's content, trimmed, or
// TokenEnv's value; "" is none. A token file that is empty is an error.
func (o ServeOptions) Token() (string, error) {
	if o.TokenFile == "" {
		return strings.TrimSpace(os.Getenv(TokenEnv)), nil
	}
	b, err := os.ReadFile(o.TokenFile)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty: put the bearer token in it", o.TokenFile)
	}
	return t, nil
}

// Check refuses options that cannot serve (before the store is opened).
func (o ServeOptions) Check() error {
	if err := memorytool.CheckPrefix(o.Prefix); err != nil {
		return err
	}
	if o.HTTP == "" {
		if o.TokenFile != "" {
			return errors.New("--token-file is for --http: a stdio client is the process that started the server")
		}
		return nil
	}
	t, err := o.Token()
	if err != nil {
		return err
	}
	return CheckListen(o.HTTP, t)
}

// Serve serves f to agents as o says until the stdio client disconnects
// or ctx ends.
func Serve(ctx context.Context, f *memfs.FS, o ServeOptions) error {
	if err := o.Check(); err != nil {
		return err
	}
	return New(f, o.Options).serve(ctx, o)
}

// ServeMount is Serve through the running mount c (NewMount).
func ServeMount(ctx context.Context, c *mountclient.Client, o ServeOptions) error {
	if err := o.Check(); err != nil {
		return err
	}
	return NewMount(c, o.Options).serve(ctx, o)
}

func (s *Server) serve(ctx context.Context, o ServeOptions) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	s.Follow(ctx)
	if o.HTTP == "" {
		return s.ServeStdio(ctx)
	}
	t, _ := o.Token() // Check read it
	return s.ListenHTTP(ctx, o.HTTP, t, o.Ready)
}
