package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/urfave/cli/v2"
)

// newApp builds the CLI. It writes to stdout and stderr only, and never
// exits the process, so tests run it in-process.
func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
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
			logCommand(),
			fsckCommand(),
			searchCommand(),
			reindexCommand(),
			contextCommand(),
			summaryCommand(),
			catCommand(),
			putCommand(),
			rmCommand(),
			importCommand(),
			exportCommand(),
			redactCommand(),
			applyCommand(),
			mountHelperCommand(),
			umountHelperCommand(),
			installCommand(),
			completionCommand(),
			manCommand(),
			hintCommand(),
			modelsCommand(),
			gcCommand(), conflictsCommand(),
			historyCommand(), snapshotCommand(), checkpointCommand(), revertCommand(), restoreCommand(), diffCommand(),
		},
	}
	app.EnableBashCompletion = true // memfs completion bash|zsh asks the app for the next words
	for _, cmd := range app.Commands {
		cmd.Action = flagsFirst(cmd.Action)
		for _, sub := range append([]*cli.Command{cmd}, cmd.Subcommands...) {
			sub.Before = checkFlags
		}
	}
	return app
}

// flagsFirst refuses a flag written after the arguments, which urfave/cli
// would silently take for an argument.
func flagsFirst(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		for _, a := range c.Args().Slice() {
			if strings.HasPrefix(a, "-") && a != "-" {
				return fmt.Errorf("%s: flag %q after the arguments; flags go first: memfs %s [flags] %s",
					c.Command.Name, a, c.Command.Name, c.Command.ArgsUsage)
			}
		}
		return action(c)
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
