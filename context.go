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

// ContextPack builds the context pack named name (.memfs/context.md is
// name "", .memfs/context/NAME the others: percent-encoded words, max:N
// and summaries:K, the rest a search query) for the caller in ctx
// (session.WithCred): the always-loaded memory (Options.Bootstrap), the
// latest step summaries, the skills index and search hits, only from files
// that caller may read.
func (f *FS) ContextPack(ctx context.Context, name string) ([]byte, error) {
	return contextAnswer(f.c, f.opts.Bootstrap, f.index.ContextSearch)(ctx, name)
}

// packOptions reads the name of a .memfs/context/NAME file: percent-encoded
// words, "max:N" (the budget) and "summaries:K" filters, the rest the
// search query.
func packOptions(name string) (contextpack.Options, error) {
	var o contextpack.Options
	dec, err := url.PathUnescape(name)
	if err != nil {
		return o, fmt.Errorf("context %q: %w", name, err)
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
// .memfs/context/NAME from the live session, for the caller in ctx
// (session.CredFrom): every part of it (memory files, summaries, the
// skills index, search hits, the manifest and its list of what was left
// out) comes only from files that caller may read.
func contextAnswer(c *session.Context, prefixes []string, find func(context.Context, string, int) ([]contextpack.Hit, error)) func(context.Context, string) ([]byte, error) {
	return func(ctx context.Context, name string) ([]byte, error) {
		cr, ok := session.CredFrom(ctx)
		if !ok {
			return nil, search.ErrNoCaller
		}
		o, err := packOptions(name)
		if err != nil {
			return nil, err
		}
		o.Prefixes = prefixes
		if find != nil {
			// The search filters by the caller in ctx already; the pack
			// does not rely on it.
			o.Search = func(ctx context.Context, q string, k int) ([]contextpack.Hit, error) {
				hits, err := find(ctx, q, k)
				if err != nil {
					return nil, err
				}
				keys := make([]string, len(hits))
				for i, h := range hits {
					keys[i] = h.Key
				}
				ok := c.Readable(cr, keys...)
				kept := hits[:0]
				for i, h := range hits {
					if ok[i] {
						kept = append(kept, h)
					}
				}
				return kept, nil
			}
		}
		p, err := contextpack.Build(ctx, readableSource{c: c, cr: cr}, o)
		if err != nil {
			return nil, err
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
	ok := s.c.Readable(s.cr, keys...)
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
	ok := s.c.Readable(s.cr, keys...)
	var kept []string
	for i, k := range keys {
		if ok[i] {
			kept = append(kept, k)
		}
	}
	return s.c.Resolve(ctx, kept...)
}

func (s readableSource) Get(key string) ([]byte, bool) {
	if !s.c.CanRead(key, s.cr) {
		return nil, false
	}
	return s.c.Get(key)
}
