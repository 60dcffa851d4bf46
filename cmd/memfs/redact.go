package main

import (
	"cmp"
	"io"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/redact"
)

func redactFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "no-redact", Usage: "persist values as written, secrets included (not recommended)"},
		&cli.StringFlag{Name: "redact-config", Usage: "redaction rules file (extra patterns, allow-list, rules off under a prefix)",
			DefaultText: redact.DefaultConfigPath() + " when it exists"},
	}
}

// newRedactor builds the redactor the flags ask for; nil when --no-redact.
func newRedactor(c *cli.Context, log *slog.Logger) (*redact.Redactor, error) {
	if c.Bool("no-redact") {
		log.Warn("redaction is off (--no-redact): secrets written to memory will be persisted as they are")
		return nil, nil
	}
	return redact.NewFromFile(c.String("redact-config"))
}

func redactCommand() *cli.Command {
	return &cli.Command{
		Name:  "redact",
		Usage: "find secrets the way memfs does before it persists anything",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "print the secrets found in PATHs (standard input without one); exit 1 when any: a pre-commit check",
			ArgsUsage: "[PATH...]",
			Flags:     redactFlags()[1:],
			Action: func(c *cli.Context) error {
				r, err := newRedactor(c, logger(c, false))
				if err != nil {
					return err
				}
				_, err = r.Check(c.App.Writer, c.Args().Slice(), cmp.Or[io.Reader](c.App.Reader, os.Stdin))
				return err // an error when it found any
			},
		}},
	}
}

// writeFlags are the flags of the commands that change a store.
func writeFlags() []cli.Flag { return append(redactFlags(), agentFlag(), runFlag()) }
