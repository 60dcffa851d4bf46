package mcpserver_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/mcpserver"
	"github.com/memfs/memfs/mountclient"
	"github.com/memfs/memfs/search"
)

// BenchmarkRoundTrip measures an MCP tool call's round trip (view of a
// note, keyword search) over a pipe with stdio's framing and over
// streamable HTTP, beside the same read through a mount of the same
// store (os.ReadFile of the note; of .memfs/search/QUERY), and over
// stdio's framing by a server that goes through that mount
// (mcpserver.NewMount, as memfs mcp does when a mount serves the
// store), at 10,000 notes. Each reports its p50 and p99 in µs. Run it with
//
//	go test -run '^$' -bench RoundTrip -benchtime 2000x ./mcpserver/
func BenchmarkRoundTrip(b *testing.B) {
	const notes = 10_000
	dir := filepath.Join(b.TempDir(), "store")
	st, err := dirstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName),
		Namespace: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	by := *memfs.SelfWriter("bench")
	for i := range notes {
		v := fmt.Sprintf("# note %d\n\nword%d topic%d shared text about memory and agents\n", i, i, i%97)
		if err := f.WriteFile(context.Background(), fmt.Sprintf("memory/n/%04d.md", i), []byte(v), by); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	mnt := b.TempDir()
	m, err := f.Mount(mnt, memfs.MountOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx) }()
	defer func() {
		cancel()
		<-served
		f.Close(context.Background())
	}()

	s := mcpserver.New(f, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(s.Handler(""))
	defer srv.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	httpCS, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer httpCS.Close()
	// stdio: two OS pipes, the SDK's newline-delimited JSON on each.
	cr, sw, _ := os.Pipe()
	sr, cw, _ := os.Pipe()
	go s.MCP().Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw})
	pipeCS, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer pipeCS.Close()

	// The server through the mount (memfs mcp when a mount serves the
	// store), over its own pipes.
	mc, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		b.Fatal(err)
	}
	ms := mcpserver.NewMount(mc, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	mcr, msw, _ := os.Pipe()
	msr, mcw, _ := os.Pipe()
	go ms.MCP().Run(ctx, &mcp.IOTransport{Reader: msr, Writer: msw})
	mountCS, err := client.Connect(ctx, &mcp.IOTransport{Reader: mcr, Writer: mcw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer mountCS.Close()

	view := &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "/memories/n/4242.md"}}
	find := &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "word4242 topic7", "mode": "keyword", "top_k": 10}}
	call := func(cs *mcp.ClientSession, p *mcp.CallToolParams) func() error {
		return func() error {
			res, err := cs.CallTool(ctx, p)
			if err == nil && res.IsError {
				err = fmt.Errorf("%s: tool error %v", p.Name, res.Content)
			}
			return err
		}
	}
	read := func(name string) func() error {
		return func() error { _, err := os.ReadFile(filepath.Join(mnt, name)); return err }
	}
	searchFile := ".memfs/search/" + search.Name("word4242 topic7", "mode:keyword", "top:10")
	for _, bm := range []struct {
		name string
		fn   func() error
	}{
		{"view/mount", read("memory/n/4242.md")},
		{"view/stdio", call(pipeCS, view)},
		{"view/http", call(httpCS, view)},
		{"view/stdio-through-mount", call(mountCS, view)},
		{"search/mount", read(searchFile)},
		{"search/stdio", call(pipeCS, find)},
		{"search/http", call(httpCS, find)},
		{"search/stdio-through-mount", call(mountCS, find)},
	} {
		if err := bm.fn(); err != nil { // warm: the index opens at the first search
			b.Fatal(err)
		}
		b.Run(bm.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				if err := bm.fn(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
