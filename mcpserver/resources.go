package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memfs/memfs"
)

// Resources: each file is memfs://KEY (memfs://memory/notes.md, its
// segments escaped as a URL's path), and the context pack is
// memfs://.memfs/context, the name a mount shows it by. A client that
// subscribes to one is told when it changes (notifications/resources/updated),
// from the change feed a mount shows as .memfs/changes: whichever door
// the change came through.

// Scheme is the scheme of the resources' URIs.
const Scheme = "memfs://"

// ContextURI is the context pack's resource.
const ContextURI = Scheme + ".memfs/context"

// URI is the resource of key.
func URI(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return Scheme + strings.Join(segs, "/")
}

// keyOf is the key of a file's resource uri.
func keyOf(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return "", fmt.Errorf("%s: not a memfs resource (want %sKEY, such as %smemory/notes.md)", uri, Scheme, Scheme)
	}
	key, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("%s: %w", uri, err)
	}
	return key, checkKey(key)
}

func (s *Server) addResources() {
	s.mcp.AddResource(&mcp.Resource{URI: ContextURI, Name: "context", MIMEType: "text/markdown",
		Description: "The context pack: the skills index, the latest step summaries and the always-loaded notes, within the default budget."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			b, err := s.st.contextPack(ctx, packName(contextIn{}))
			if err != nil {
				return nil, fmt.Errorf("the context pack: %w", err)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: string(b)}}}, nil
		})
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: Scheme + "{+key}", Name: "note",
		Description: "A file of the memory by its key, such as " + Scheme + "memory/notes.md (the memory tool's /memories/notes.md)."},
		s.readNote)
}

func (s *Server) readNote(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	key, err := keyOf(req.Params.URI)
	if err != nil {
		return nil, err
	}
	v, err := s.st.files().ReadFile(memfs.AsProcess(ctx), key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%s: permission denied: the file's mode does not let this server's user read it", key)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	mime := "text/plain"
	if path.Ext(key) == ".md" {
		mime = "text/markdown"
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: mime, Text: string(v)}}}, nil
}

// subscribe accepts a subscription to a resource the server has (the
// SDK keeps the subscribers).
func (s *Server) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if req.Params.URI == ContextURI {
		return nil
	}
	_, err := keyOf(req.Params.URI)
	return err
}

// Follow sends resource updates to the subscribed clients, from the
// change feed, until ctx ends (Serve calls it). Each change updates its
// key's resource (a rename's old key's too) and the context pack's.
func (s *Server) Follow(ctx context.Context) {
	queue := make(chan memfs.Change, 1024)
	s.st.watch(ctx, func(ch memfs.Change) {
		select {
		case queue <- ch:
		default: // a client that cannot keep up misses updates, never the store
			s.log.Warn("mcp: resource updates dropped: the clients fall behind", "key", ch.Key)
		}
	})
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ch := <-queue:
				for _, uri := range []string{URI(ch.Key), URI(ch.OldKey), ContextURI} {
					if uri != Scheme {
						_ = s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
					}
				}
			}
		}
	}()
}
