package main

import (
	"io"
	"log/slog"

	"github.com/urfave/cli/v2"
)

// newApp builds the CLI. It writes to stdout and stderr only, and never
// exits the process, so tests run it in-process.
func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "memfs",
		Usage: "an agent's memory as a real directory",
		Description: "memfs mounts a memory store (notes, skills, agent profiles) through FUSE, so that\n" +
			"ls, cat, grep, editors and file watchers work on it, and manages stores without a mount.",
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(*cli.Context, error) {}, // main prints and exits
		Commands: []*cli.Command{
			mountCommand(),
			unmountCommand(),
			lsCommand(),
			catCommand(),
			putCommand(),
			rmCommand(),
			importCommand(),
			exportCommand(),
			applyCommand(),
		},
	}
}

// logger returns the text logger commands log to.
func logger(c *cli.Context, debug bool) *slog.Logger {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
}
