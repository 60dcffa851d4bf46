package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/internal/cliargs"
	"github.com/memfs/memfs/memorytool"
	"github.com/memfs/memfs/repo"
)

// repoCommand is the memory of the repository a directory is in (issue
// 33): its id, its place in the namespace, its records, summaries and
// derived artifacts, on the store or through the mount serving it.
func repoCommand() *cli.Command {
	return &cli.Command{Name: "repo", Usage: "the memory of the repository a directory is in: conventions, decisions, notes, step summaries, derived artifacts", Subcommands: []*cli.Command{{
		Name: "id", Usage: "print the id of the repository DIR (default: the working directory) is in", ArgsUsage: "[DIR]",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "also print what the id is made of: path, remote, branch"}},
		Action: func(c *cli.Context) error {
			id, err := repo.Identify(c.Context, cmp.Or(c.Args().First(), "."))
			if err == nil { // else the error names the directory
				_, err = fmt.Fprint(c.App.Writer, id.Text(c.Bool("verbose")))
			}
			return err
		},
	}, {
		Name: "init", Usage: "make the memory of the repository DIR is in (a new branch's starts as a copy of its parent's) and print where it is", ArgsUsage: "[DIR]",
		Flags: repoFlags(),
		Action: func(c *cli.Context) error {
			return inRepo(c, c.Args().First(), memfs.WriteStore, false, func(ctx context.Context, m repo.Memory, id repo.Identity, mnt, _ string) error {
				info, err := m.Info(ctx, id.Hash)
				if info.Parent != "" {
					fmt.Fprintf(c.App.ErrWriter, "repo init: its memory started from that of %s\n", info.Parent)
				}
				fmt.Fprintln(c.App.Writer, repo.Path(mnt, id.Hash))
				return err
			})
		},
	}, {
		Name: "path", Usage: "print where the memory of the repository DIR is in: its directory in the mount, else its key prefix", ArgsUsage: "[DIR]",
		Flags: repoFlags(),
		Action: func(c *cli.Context) error {
			return inRepo(c, c.Args().First(), memfs.ReadStore, false, func(_ context.Context, _ repo.Memory, id repo.Identity, mnt, _ string) error {
				_, err := fmt.Fprintln(c.App.Writer, repo.Path(mnt, id.Hash))
				return err
			})
		},
	}, {
		Name: "ls", Usage: "list the repositories that have memory: ID BRANCH PATH LAST-SEEN",
		Flags: []cli.Flag{storeFlag(), mountFlag("list through")},
		Action: func(c *cli.Context) error {
			return onFiles(c, memfs.ReadStore, func(ctx context.Context, f repo.Files, _ string) error {
				infos, err := repo.List(ctx, f)
				for _, in := range infos {
					fmt.Fprint(c.App.Writer, in.Line())
				}
				return err
			})
		},
	}, {
		Name: "add", Usage: "add or update (by id) a record of the repository's memory", Subcommands: []*cli.Command{
			repoAddCommand(repo.Convention, "a convention: a rule of the code (upserted by --id: createdAt kept, updatedAt moved)",
				&cli.StringFlag{Name: "title", Usage: "its title, one line"}, &cli.StringSliceFlag{Name: "tag", Usage: "a tag (repeat for several)"}),
			repoAddCommand(repo.Decision, "a decision and why it was made",
				&cli.StringFlag{Name: "summary", Usage: "what was decided, one line"}, &cli.StringFlag{Name: "rationale", Usage: "why"},
				&cli.StringSliceFlag{Name: "path", Usage: "a path of the repository it bears on (repeat for several)"}),
			repoAddCommand(repo.Note, "a note", &cli.StringFlag{Name: "source", Value: "manual", Usage: "manual, agent or tool"}),
		},
	}, {
		Name: "check", Usage: "check every record of the repository's memory against its schema; exit 1 naming each one that fails, and why",
		Flags: repoFlags(),
		Action: func(c *cli.Context) error {
			return inRepo(c, "", memfs.ReadStore, false, func(ctx context.Context, m repo.Memory, id repo.Identity, _, _ string) error {
				return m.Check(ctx, id.Hash, c.App.Writer)
			})
		},
	}, {
		Name: "summary", Usage: "append a step summary to the repository's summaries.jsonl", ArgsUsage: "TEXT",
		Flags: append(repoFlags(), &cli.StringFlag{Name: "run", Required: true, Usage: "run id"}, &cli.StringFlag{Name: "step", Required: true, Usage: "step id"}),
		Action: func(c *cli.Context) error {
			sum, err := contextpack.NewSummary(c.String("run"), c.String("step"), c.Args().Slice())
			line, lerr := contextpack.SummaryLine(sum)
			if err = cmp.Or(err, lerr); err != nil {
				return fmt.Errorf("repo summary: %w", err)
			}
			return inRepo(c, "", memfs.WriteStore, false, func(ctx context.Context, m repo.Memory, id repo.Identity, _, _ string) error {
				return m.AppendSummary(ctx, id.Hash, line)
			})
		},
	}, {
		Name: "cache", Usage: "artifacts derived from the working tree, served while it has not changed", Subcommands: []*cli.Command{{
			Name: "get", Usage: "print the artifact NAME; exit 1 when there is none, 3 when it is stale (the working tree changed since it was put)", ArgsUsage: "NAME",
			Flags: append(repoFlags(), keyFlag()),
			Action: func(c *cli.Context) error {
				return onCache(c, memfs.ReadStore, func(ctx context.Context, m repo.Memory, id repo.Identity, from string) error {
					v, fresh, err := m.CacheGet(ctx, id.Hash, c.Args().First(), from)
					if err != nil {
						return err
					}
					if !fresh {
						return cli.Exit("repo cache get: "+c.Args().First()+" is stale: the working tree changed since it was put", 3)
					}
					_, err = c.App.Writer.Write(v)
					return err
				})
			},
		}, {
			Name: "put", Usage: "store the artifact NAME from FILE (- or none: standard input), as computed from the working tree as it is now", ArgsUsage: "NAME [FILE]",
			Flags: append(repoFlags(), keyFlag()),
			Action: func(c *cli.Context) error {
				v, err := cliargs.ReadInput(c.Args().Get(1), cmp.Or[io.Reader](c.App.Reader, os.Stdin))
				if err != nil {
					return err
				}
				return onCache(c, memfs.WriteStore, func(ctx context.Context, m repo.Memory, id repo.Identity, from string) error {
					return m.CachePut(ctx, id.Hash, c.Args().First(), v, from)
				})
			},
		}},
	}, {
		Name: "map", Usage: "print the repository's map (its files and their top-level symbols), from the cache while the working tree has not changed",
		Flags: append(repoFlags(), keyFlag(), &cli.BoolFlag{Name: "no-ctags", Usage: "read Go files with Go's parser even where Universal Ctags is installed"}),
		Action: func(c *cli.Context) error {
			return onCache(c, memfs.WriteStore, func(ctx context.Context, m repo.Memory, id repo.Identity, from string) error {
				v, err := m.CachedMap(ctx, id, from, repo.MapOptions{NoCtags: c.Bool("no-ctags")})
				c.App.Writer.Write(v)
				return err
			})
		},
	}}}
}

// repoFlags are the flags of the repo commands that work on a memory.
func repoFlags() []cli.Flag {
	return []cli.Flag{storeFlag(), mountFlag("work through"),
		&cli.StringFlag{Name: "dir", Aliases: []string{"C"}, Value: ".", Usage: "a directory of the repository (its working tree)"}}
}

func keyFlag() cli.Flag {
	return &cli.StringFlag{Name: "key", Usage: "what the artifact is computed from, in place of the working tree's state (git's tree of HEAD and the changes not committed)"}
}

// repoScopeFlags are --repo (usage says what it does) and --dir.
func repoScopeFlags(usage string) []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "repo", Usage: usage},
		&cli.StringFlag{Name: "dir", Aliases: []string{"C"}, Value: ".", Usage: "with --repo: a directory of the repository (its working tree)"}}
}

// repoWord is the query word of --repo (repo.Word of the repository dir,
// else --dir, is in), or "" without --repo.
func repoWord(c *cli.Context, dir string) (string, error) {
	if !c.Bool("repo") {
		return "", nil
	}
	id, err := repo.Identify(c.Context, cmp.Or(dir, c.String("dir")))
	if err != nil {
		return "", err
	}
	return repo.Word(c.Context, id)
}

// repoAddCommand is memfs repo add KIND, with the flags of its fields.
func repoAddCommand(k repo.Kind, usage string, fields ...cli.Flag) *cli.Command {
	return &cli.Command{
		Name: string(k), Usage: usage, ArgsUsage: "[TEXT]",
		Flags: append(append(repoFlags(), &cli.StringFlag{Name: "id", Usage: "its id (lowercase letters, digits, . _ -); default: made from its first words and the time"}), fields...),
		Action: func(c *cli.Context) error {
			r := repo.Record{Kind: k, ID: c.String("id"), Body: strings.Join(c.Args().Slice(), " "),
				Title: c.String("title"), Tags: c.StringSlice("tag"), Summary: c.String("summary"), Rationale: c.String("rationale"),
				ImpactedPaths: c.StringSlice("path"), Source: c.String("source")}
			if r.ID == "" {
				r.ID = repo.NewID(cmp.Or(r.Title, r.Summary, r.Body), time.Now())
			}
			return inRepo(c, "", memfs.WriteStore, false, func(ctx context.Context, m repo.Memory, id repo.Identity, mnt, _ string) error {
				r, err := m.Put(ctx, id.Hash, r)
				if err == nil {
					fmt.Fprintln(c.App.Writer, repo.Path(mnt, id.Hash, k.Dir(), r.ID+".md"))
				}
				return err
			})
		},
	}
}

// onFiles runs fn on the repository memory's files: through the mount
// serving the store (mnt its directory), else on the store.
func onFiles(c *cli.Context, a memfs.Access, fn func(ctx context.Context, f repo.Files, mnt string) error) error {
	t, err := locate(c)
	if err != nil {
		return fmt.Errorf("repo %s: %w", c.Command.Name, err)
	}
	if t.mnt != "" {
		return fn(c.Context, memorytool.Mount(t.Client), t.mnt)
	}
	return withSession(c, a, func(ctx context.Context, o *opened) error { return fn(ctx, memorytool.Engine(o.FS), "") })
}

// onCache is inRepo with what the cache's artifacts are keyed by: --key,
// else the working tree's state.
func onCache(c *cli.Context, a memfs.Access, fn func(ctx context.Context, m repo.Memory, id repo.Identity, from string) error) error {
	return inRepo(c, "", a, c.String("key") == "", func(ctx context.Context, m repo.Memory, id repo.Identity, _, state string) error {
		if from := cmp.Or(c.String("key"), state); from != "" {
			return fn(ctx, m, id, from)
		}
		return fmt.Errorf("repo %s: %s is in no git working tree: give --key", c.Command.Name, id.Path)
	})
}

// inRepo runs fn on the memory of the repository dir (else --dir) is in,
// with the working tree's state ("" outside git) when a command writes
// (a) or withState asks. A command that writes sees the repository
// first (repo.Memory.See): a branch's memory starts from its parent's
// whichever command meets it first, and repo.json keeps the state.
func inRepo(c *cli.Context, dir string, a memfs.Access, withState bool, fn func(ctx context.Context, m repo.Memory, id repo.Identity, mnt, state string) error) error {
	id, err := repo.Identify(c.Context, cmp.Or(dir, c.String("dir")))
	if err != nil {
		return err
	}
	var state string
	if a == memfs.WriteStore || withState {
		if state, err = repo.State(c.Context, id.Path); err != nil && !errors.Is(err, repo.ErrNoState) {
			return err
		}
	}
	return onFiles(c, a, func(ctx context.Context, f repo.Files, mnt string) error {
		m := repo.Memory{Files: f, By: *memfs.SelfWriter("")}
		if a == memfs.WriteStore {
			if _, err := m.See(ctx, id, func() ([]repo.Identity, error) { return repo.Parents(ctx, id) }, state); err != nil {
				return err
			}
		}
		return fn(ctx, m, id, mnt, state)
	})
}
