package memfs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/internal/ignore"
	"github.com/memfs/memfs/repo"
	"github.com/memfs/memfs/search/live"
	"github.com/memfs/memfs/session"
)

// ContextPack builds the context pack of o for the caller in ctx
// (session.WithCred): the skills index, the latest step summaries and the
// notes under Options.Bootstrap, only from files that caller may read.
// o.Prefixes nil is Options.Bootstrap, and o.Rank nil is search's ranking
// over just the candidates (a pure function of them: see
// contextpack.RankFunc; never the live search index). The pack's Manifest
// is what the same caller would read from the same files.
// contextpack.ParseName reads o (and an at:SEQ, for ContextPackAt) from
// the name of a .memfs/context/ file.
func (f *FS) ContextPack(ctx context.Context, o contextpack.Options) (contextpack.Pack, error) {
	cr, o, err := f.packRequest(ctx, o)
	if err != nil {
		return contextpack.Pack{}, err
	}
	return contextpack.Build(ctx, readableSource{c: f.c, cr: cr}, o)
}

// packRequest reads a request for a pack: the caller in ctx, and o with
// the FS's prefixes, ranking and ignore rules (internal/ignore: the
// .memfsignore files as they are now) where o leaves them unset.
func (f *FS) packRequest(ctx context.Context, o contextpack.Options) (session.Cred, contextpack.Options, error) {
	cr, ok := session.CredFrom(ctx)
	if !ok {
		return cr, o, live.ErrNoCaller
	}
	// A memory the caller may not read is none: which one the pack reads
	// says nothing of what it may not see.
	o.Repo = repo.Choose(o.Repo, o.RepoParents, func(hash string) bool {
		return f.Exists(repo.InfoKey(hash)) && f.c.Access().CanRead(repo.InfoKey(hash), cr)
	})
	if o.Prefixes == nil {
		o.Prefixes = f.opts.Bootstrap
		if o.Repo != "" {
			o.Prefixes = append(slices.Clip(o.Prefixes), repo.NotesPrefix(o.Repo))
		}
	}
	if o.Repo != "" {
		o.Rules, o.SummariesKey = repo.RulePrefixes(o.Repo), repo.SummariesKey(o.Repo)
	}
	if o.Rank == nil {
		o.Rank = f.packRank()
		if strings.TrimSpace(o.Query) != "" {
			// Named only where a model ranks: a pack without a query
			// opens none (embed.Lazy).
			o.Embedder = f.packEmbedder()
		}
	}
	if o.Check == nil {
		o.Check = repo.CheckPackFile // a record that breaks its schema, or a file that is no record, is no rule
	}
	if o.Route == nil && !f.opts.Routes.Empty() {
		o.Route = func(key string) string { return f.opts.Routes.Of(key).Name() }
		o.Tier = func(key string) int { return f.opts.Routes.Of(key).Tier.Rank() }
	}
	if o.Ignore == nil {
		rules, err := ignore.Load(ctx, f.c)
		if err != nil {
			return cr, o, fmt.Errorf("memfs: context pack: the ignore rules: %w", err)
		}
		o.Ignore = rules.Ignored
	}
	return cr, o, nil
}

// ContextFile answers .memfs/context.md (name ""), .memfs/context/NAME and
// their manifests (NAME + contextpack.ManifestSuffix;
// .memfs/context.manifest.json is name contextpack.ManifestSuffix) for the
// caller in ctx: the pack contextpack.ParseName reads in name, as of its
// at:SEQ when it has one (ContextPackAt), or its manifest's JSON. It is
// the name grammar's door to ContextPack and ContextPackAt, for a mount's
// files and for memfs context on a store alike.
func (f *FS) ContextFile(ctx context.Context, name string) ([]byte, error) {
	o, at, manifest, err := contextpack.ParseName(name)
	if err != nil {
		return nil, err
	}
	var p contextpack.Pack
	if at != 0 {
		p, err = f.ContextPackAt(ctx, at, o)
	} else {
		p, err = f.ContextPack(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	return p.File(manifest), nil
}

// readableSource is the session as one caller may read it: the files it
// may not read are not there.
type readableSource struct {
	c  *session.Context
	cr session.Cred
}

var _ contextpack.Source = readableSource{}

func (s readableSource) Entries(prefix string) []backend.Entry {
	es := s.c.Entries(prefix)
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = e.Key
	}
	ok := s.c.Access().Readable(s.cr, keys...)
	kept := es[:0]
	for i, e := range es {
		if ok[i] {
			kept = append(kept, e)
		}
	}
	return kept
}

// Resolve loads the keys the caller may read; the others stay unloaded,
// and Get does not give them.
func (s readableSource) Resolve(ctx context.Context, keys ...string) error {
	ok := s.c.Access().Readable(s.cr, keys...)
	var kept []string
	for i, k := range keys {
		if ok[i] {
			kept = append(kept, k)
		}
	}
	return s.c.Resolve(ctx, kept...)
}

func (s readableSource) Get(key string) ([]byte, bool) {
	if !s.c.Access().CanRead(key, s.cr) {
		return nil, false
	}
	return s.c.Get(key)
}
