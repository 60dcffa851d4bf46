package memfs

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/session"
)

// ContextPack answers .memfs/context.md (name ""), .memfs/context/NAME and
// their manifests (NAME + contextpack.ManifestSuffix; .memfs/context.manifest.json
// is name contextpack.ManifestSuffix) for the caller in ctx
// (session.WithCred). NAME is percent-encoded words, max:N and summaries:K,
// the rest a query that ranks the notes. The pack holds the skills index,
// the latest step summaries and the notes under Options.Bootstrap, only
// from files that caller may read; a manifest is the JSON of the pack the
// same caller would read from the same files (contextpack.Manifest.JSON).
//
// A word at:SEQ in NAME asks for the pack as it stood when the event
// log's head was SEQ (ContextPackAt).
func (f *FS) ContextPack(ctx context.Context, name string) ([]byte, error) {
	if seq, rest, ok, err := cutAt(name); err != nil {
		return nil, err
	} else if ok {
		return f.ContextPackAt(ctx, seq, rest)
	}
	// Notes are ranked by search's ranking over just the candidates
	// (packRank): a ranker must be a pure function of them (see
	// contextpack.RankFunc), never the live search index.
	return contextAnswer(f.c, f.opts.Bootstrap, f.packRank())(ctx, name)
}

// ContextName writes words as the NAME of .memfs/context/NAME, the form
// ContextPack reads: joined with spaces, then percent-encoded, dots too
// (a name ending in contextpack.ManifestSuffix asks for a manifest).
func ContextName(words ...string) string {
	return strings.ReplaceAll(url.PathEscape(strings.Join(words, " ")), ".", "%2E")
}

// cutAt takes the word at:SEQ out of a pack's name: ok reports whether
// there was one, rest is the name without it (its words percent-encoded
// again, dots included, and a manifest suffix kept).
func cutAt(name string) (seq uint64, rest string, ok bool, err error) {
	base, manifest := strings.CutSuffix(name, contextpack.ManifestSuffix)
	dec, err := url.PathUnescape(base)
	if err != nil {
		return 0, "", false, fmt.Errorf("context: %w", err) // not name: a query may be a paragraph
	}
	var words []string
	for _, w := range strings.Fields(dec) {
		v, isAt := strings.CutPrefix(w, "at:")
		if !isAt {
			words = append(words, w)
			continue
		}
		if ok {
			return 0, "", false, fmt.Errorf("context: at: given twice")
		}
		if seq, err = strconv.ParseUint(v, 10, 64); err != nil || seq == 0 {
			return 0, "", false, fmt.Errorf("context: at:%s: want an event-log sequence number (1 or more)", v)
		}
		ok = true
	}
	rest = ContextName(words...)
	if manifest {
		rest += contextpack.ManifestSuffix
	}
	return seq, rest, ok, nil
}

// packRequest reads a request for a pack or its manifest (NAME ending in
// contextpack.ManifestSuffix): the caller in ctx, the pack's options
// (packOptions, with prefixes and rank) and whether the manifest is
// asked for.
func packRequest(ctx context.Context, name string, prefixes []string, rank contextpack.RankFunc) (session.Cred, contextpack.Options, bool, error) {
	cr, ok := session.CredFrom(ctx)
	if !ok {
		return cr, contextpack.Options{}, false, search.ErrNoCaller
	}
	name, manifest := strings.CutSuffix(name, contextpack.ManifestSuffix)
	o, err := packOptions(name)
	if err != nil {
		return cr, o, false, err
	}
	o.Prefixes, o.Rank = prefixes, rank
	return cr, o, manifest, nil
}

// packOptions reads the name of a .memfs/context/NAME file: percent-encoded
// words, "max:N" (the budget) and "summaries:K" filters, the rest the
// query.
func packOptions(name string) (contextpack.Options, error) {
	var o contextpack.Options
	dec, err := url.PathUnescape(name)
	if err != nil {
		return o, fmt.Errorf("context: %w", err)
	}
	var query []string
	for _, w := range strings.Fields(dec) {
		k, v, ok := strings.Cut(w, ":")
		switch {
		case ok && k == "max":
			if o.MaxChars, err = strconv.Atoi(v); err != nil || o.MaxChars < 1 {
				return o, fmt.Errorf("context: max:%s: want a positive number of characters", v)
			}
		case ok && k == "summaries":
			if o.Summaries, err = strconv.Atoi(v); err != nil {
				return o, fmt.Errorf("context: summaries:%s: want a number", v)
			}
			if o.Summaries == 0 {
				o.Summaries = -1
			}
		default:
			query = append(query, w)
		}
	}
	o.Query = strings.Join(query, " ")
	return o, nil
}

// contextAnswer builds the pack served at .memfs/context.md and
// .memfs/context/NAME, or its manifest when NAME ends in
// contextpack.ManifestSuffix (a query word that ends so is written with its
// dot percent-encoded), from the live session, for the caller in ctx
// (session.CredFrom): every part of it comes only from files that caller
// may read. rank nil is contextpack.DefaultRank.
func contextAnswer(c *session.Context, prefixes []string, rank contextpack.RankFunc) func(context.Context, string) ([]byte, error) {
	return func(ctx context.Context, name string) ([]byte, error) {
		cr, o, manifest, err := packRequest(ctx, name, prefixes, rank)
		if err != nil {
			return nil, err
		}
		p, err := contextpack.Build(ctx, readableSource{c: c, cr: cr}, o)
		if err != nil {
			return nil, err
		}
		if manifest {
			return p.Manifest.JSON(), nil
		}
		return []byte(p.Text), nil
	}
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
