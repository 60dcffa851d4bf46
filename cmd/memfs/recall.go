package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/session"
)

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

// processCred is the credential of this process: what a command that
// opens the store itself (--store) may read, by the rules a mount applies
// to its callers.
func processCred() session.Cred {
	cr := session.Cred{UID: uint32(os.Geteuid()), GIDs: []uint32{uint32(os.Getegid())}}
	groups, _ := os.Getgroups() // none known: the primary group alone, which only denies more
	for _, g := range groups {
		cr.GIDs = append(cr.GIDs, uint32(g))
	}
	return cr
}

func contextCommand() *cli.Command {
	return &cli.Command{
		Name:  "context",
		Usage: "print the context pack: always-loaded memory, latest step summaries, skills index, search hits, within a budget",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "mount", Usage: "build it in the live mount at DIR (.memfs/context/)"},
			&cli.IntFlag{Name: "max-chars", Value: contextpack.DefaultMaxChars, Usage: "budget in characters, manifest included (at least 1)"},
			&cli.StringFlag{Name: "query", Usage: "add the best search hits for this query"},
			&cli.IntFlag{Name: "summaries", Value: 5, Usage: "how many of the latest step summaries (0: none)"},
			&cli.StringSliceFlag{Name: "bootstrap", Value: cli.NewStringSlice("memory/"), Usage: "the always-loaded prefixes"},
		},
		Action: func(c *cli.Context) error {
			words := []string{"max:" + strconv.Itoa(c.Int("max-chars")), "summaries:" + strconv.Itoa(c.Int("summaries"))}
			if q := c.String("query"); q != "" {
				words = append(words, q)
			}
			name := url.PathEscape(strings.Join(words, " "))
			t, err := locate(c)
			if err != nil {
				return err
			}
			if t.mnt != "" {
				b, err := os.ReadFile(filepath.Join(t.mnt, ".memfs", "context", name))
				if err != nil {
					return fmt.Errorf("context through %s: %w", t.mnt, err)
				}
				_, err = c.App.Writer.Write(b)
				return err
			}
			return withSession(c, false, func(ctx context.Context, o *opened) error {
				ctx = session.WithCred(ctx, processCred())
				b, err := contextAnswer(o.c, c.StringSlice("bootstrap"), o.index.ContextSearch)(ctx, name)
				if err != nil {
					return err
				}
				_, err = c.App.Writer.Write(b)
				return err
			})
		},
	}
}

func summaryCommand() *cli.Command {
	return &cli.Command{
		Name:  "summary",
		Usage: "step summaries (" + contextpack.SummariesKey + ")",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "append one step summary",
			ArgsUsage: "TEXT",
			Flags: []cli.Flag{
				storeFlag(),
				&cli.StringFlag{Name: "mount", Usage: "append through the live mount at DIR"},
				&cli.StringFlag{Name: "run", Required: true, Usage: "run id"},
				&cli.StringFlag{Name: "step", Required: true, Usage: "step id"},
			},
			Action: func(c *cli.Context) error {
				text := strings.Join(c.Args().Slice(), " ")
				if strings.TrimSpace(text) == "" {
					return errors.New("summary add: give the summary TEXT")
				}
				line, err := json.Marshal(contextpack.Summary{Run: c.String("run"), Step: c.String("step"), Time: time.Now().UTC(), Text: text})
				if err != nil {
					return err
				}
				line = append(line, '\n')
				t, err := locate(c)
				if err != nil {
					return err
				}
				if t.mnt != "" {
					r, err := mountRoot(t) // a live mount: never a plain directory's file
					if err != nil {
						return fmt.Errorf("summary add: %w", err)
					}
					r.Close()
					return appendLine(filepath.Join(t.mnt, filepath.FromSlash(contextpack.SummariesKey)), line)
				}
				return withSession(c, true, func(ctx context.Context, o *opened) error {
					key := contextpack.SummariesKey
					var v []byte
					if o.c.Has(key) {
						if err := o.c.Resolve(ctx, key); err != nil {
							return err
						}
						old, _ := o.c.Get(key)
						v = append(v, old...)
						if len(v) > 0 && v[len(v)-1] != '\n' {
							v = append(v, '\n')
						}
					}
					return o.c.Set(key, append(v, line...))
				})
			},
		}},
	}
}

// appendLine appends line to path with one write(2) on an O_APPEND
// descriptor: memfs appends each write whole at the end of the file, so
// concurrent appenders never interleave.
func appendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
