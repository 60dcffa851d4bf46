package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

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

// parseFilter reads the filter flags.
func parseFilter(c *cli.Context) (meta.Filter, error) {
	f := meta.Filter{Prefix: c.String("prefix"), Tags: c.StringSlice("tag"), Source: c.String("source"), Agent: c.String("agent")}
	if c.IsSet("importance-min") {
		f.MinImportance, f.HasMinImportance = c.Float64("importance-min"), true // in range: checkFlags
	}
	var err error
	if f.Since, err = parseWhen("since", c.String("since")); err != nil {
		return f, err
	}
	if f.Until, err = parseWhen("until", c.String("until")); err != nil {
		return f, err
	}
	return f, nil
}

// parseWhen is meta.ParseWhen of the flag --name.
func parseWhen(name, v string) (time.Time, error) {
	t, err := meta.ParseWhen(v, time.Now())
	if err != nil {
		return t, fmt.Errorf("--%s %w", name, err)
	}
	return t, nil
}

// agentFlag labels the writer of the changes a command or mount makes.
func agentFlag() cli.Flag {
	return &cli.StringFlag{Name: "agent", EnvVars: []string{"MEMFS_AGENT"},
		Usage: "agent id recorded as the writer of every change (user.memfs.writer, memfs log)"}
}

// runFlag names the run of the changes a command or mount makes (through
// a mount, of a writer whose own environment names none).
func runFlag() cli.Flag {
	return &cli.StringFlag{Name: "run", EnvVars: []string{"MEMFS_RUN"}, Usage: "run id recorded with every change (memfs runs, .memfs/runs/)",
		Action: func(c *cli.Context, v string) error {
			return errors.Join(meta.ValidateRun(v), os.Setenv("MEMFS_RUN", v))
		}}
}

func checkAgent(c *cli.Context) error {
	if a := c.String("agent"); a != "" {
		if err := meta.ValidateAgent(a); err != nil {
			return fmt.Errorf("--agent: %w", err)
		}
	}
	return nil
}

// memoryFlags select entries by session and memory type (memfs ls,
// search, context); --types adds to the types --type is checked against.
func memoryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "session", Usage: "only entries whose user.memfs.session is this"},
		&cli.StringFlag{Name: "type", Usage: "only entries whose user.memfs.type is this memory type (see --types)"},
		typesFlag(),
	}
}

// typesFlag adds memory types to the defaults, for user.memfs.type.
func typesFlag() cli.Flag {
	return &cli.StringFlag{Name: "types", EnvVars: []string{"MEMFS_TYPES"},
		Usage: "memory types (user.memfs.type) to accept besides " + strings.Join(meta.DefaultTypes(), ", ") + "; comma-separated"}
}

// parseMemoryFlags reads --session and --type, checked against the memory
// types and those of --types.
func parseMemoryFlags(c *cli.Context) (session, typ string, err error) {
	types, err := meta.ParseTypes(c.String("types"))
	if err == nil {
		err = types.CheckFilter(c.String("session"), c.String("type"))
	}
	return c.String("session"), c.String("type"), err
}
