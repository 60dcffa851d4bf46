package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// filterFlags select entries by their metadata (memfs ls).
func filterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "prefix", Usage: "only keys starting with this prefix"},
		&cli.StringSliceFlag{Name: "tag", Usage: "only entries with this tag in user.memfs.tags (repeat: all of them)"},
		&cli.StringFlag{Name: "source", Usage: "only entries whose user.memfs.source is this (agent, user, system)"},
		&cli.StringFlag{Name: "agent", Usage: "only entries whose user.memfs.agent is this"},
		&cli.Float64Flag{Name: "importance-min", Usage: "only entries with user.memfs.importance at least this (0.0-1.0)"},
		&cli.StringFlag{Name: "since", Usage: "only entries updated at or after T (RFC 3339, YYYY-MM-DD, or a duration ago such as 24h)"},
		&cli.StringFlag{Name: "until", Usage: "only entries updated before T (same forms as --since)"},
	}
}

// entryFilter is the parsed filter flags.
type entryFilter struct {
	prefix       string
	tags         []string
	source       string
	agent        string
	impMin       float64
	hasImp       bool
	since, until time.Time
}

func parseFilter(c *cli.Context) (entryFilter, error) {
	f := entryFilter{prefix: c.String("prefix"), tags: c.StringSlice("tag"), source: c.String("source"), agent: c.String("agent")}
	if c.IsSet("importance-min") {
		f.impMin, f.hasImp = c.Float64("importance-min"), true // in range: checkFlags
	}
	var err error
	if f.since, err = parseWhen("since", c.String("since")); err != nil {
		return f, err
	}
	if f.until, err = parseWhen("until", c.String("until")); err != nil {
		return f, err
	}
	return f, nil
}

// parseWhen reads a time: RFC 3339, a date (UTC midnight), or a duration
// before now.
func parseWhen(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return time.Now().Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--%s %q: want RFC 3339 (2026-11-23T10:00:00Z), a date (2026-11-23) or a duration ago (24h)", flag, v)
}

// match reports whether an entry passes every filter. Attributes with
// invalid values count as unset.
func (f entryFilter) match(key string, info backend.Info) bool {
	if !strings.HasPrefix(key, f.prefix) {
		return false
	}
	if !f.since.IsZero() && info.MTime.Before(f.since) {
		return false
	}
	if !f.until.IsZero() && !info.MTime.Before(f.until) {
		return false
	}
	a := meta.Parse(info.XAttrs)
	for _, t := range f.tags {
		if !slices.Contains(a.Tags, t) {
			return false
		}
	}
	if f.source != "" && a.Source != f.source {
		return false
	}
	if f.agent != "" && a.Agent != f.agent {
		return false
	}
	if f.hasImp && (!a.HasImp || a.Importance < f.impMin) {
		return false
	}
	return true
}

// mountEntries lists the nodes of a live mount (directories included) with
// their user attributes, through the mount (the running memfs holds the
// store). memfs's own names (.memfs) are left out; a symlink carries its
// target as its value.
func mountEntries(dir string) ([]backend.Entry, error) {
	var out []backend.Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if backend.IsReserved(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		info := backend.Info{Size: fi.Size(), MTime: fi.ModTime(), Mode: fi.Mode() & backend.ModeMask}
		var value []byte
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			info.UID, info.GID = st.Uid, st.Gid
			info.Mode = backend.FileMode(st.Mode)
			if info.Mode&fs.ModeDevice != 0 {
				info.Rdev = uint64(st.Rdev)
			}
		}
		if info.Mode.Type() == fs.ModeSymlink {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			value = []byte(target)
		} else if info.XAttrs, err = memfs.FileXAttrs(p); err != nil {
			return err
		}
		out = append(out, backend.Entry{Key: rel, Info: info, Value: value})
		return nil
	})
	return out, err
}

// selfWriter is the memfs process as the writer of the changes it makes
// on its own (commands, journal replay).
func selfWriter(agent string) *meta.WriterInfo {
	return &meta.WriterInfo{UID: uint32(os.Getuid()), PID: uint32(os.Getpid()), Comm: "memfs", Agent: agent}
}

// agentFlag labels the writer of the changes a command or mount makes.
func agentFlag() cli.Flag {
	return &cli.StringFlag{Name: "agent", EnvVars: []string{"MEMFS_AGENT"},
		Usage: "agent id recorded as the writer of every change (user.memfs.writer, memfs log)"}
}

func checkAgent(c *cli.Context) error {
	if a := c.String("agent"); a != "" {
		if err := meta.ValidateAgent(a); err != nil {
			return fmt.Errorf("--agent: %w", err)
		}
	}
	return nil
}
