package main

import (
	"context"
	"io"
	"log/slog"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/cliargs"
)

// app is the CLI: urfave/cli's App, run on the arguments with each
// command's flags moved before its arguments (cliargs.Reorder), since its
// parser stops at the first argument.
type app struct{ *cli.App }

// RunContext runs the command args names.
func (a app) RunContext(ctx context.Context, args []string) error {
	if n := len(args); n > 1 && args[n-1] == cliargs.CompleteFlag {
		return a.complete(args[1 : n-1])
	}
	return a.App.RunContext(ctx, cliargs.Reorder(args, argSpec(&cli.Command{Subcommands: a.Commands})))
}

// argSpec is what cliargs knows of a command.
func argSpec(c *cli.Command) *cliargs.Command {
	s := &cliargs.Command{Names: c.Names(), Usage: c.Usage, Hidden: c.Hidden}
	for _, f := range c.Flags {
		v, _ := f.(cli.DocGenerationFlag)
		s.Flags = append(s.Flags, cliargs.Flag{Names: f.Names(), Value: v != nil && v.TakesValue()})
	}
	for _, sub := range c.Subcommands {
		s.Subs = append(s.Subs, argSpec(sub))
	}
	return s
}

// newApp builds the CLI. It writes to stdout and stderr only, and never
// exits the process, so tests run it in-process.
func newApp(stdout, stderr io.Writer) app {
	a := &cli.App{
		Name:  "memfs",
		Usage: "an agent's memory as a real directory",
		Description: "memfs mounts a memory store (notes, skills, agent profiles) through FUSE, so that\n" +
			"ls, cat, grep, editors and file watchers work on it, and manages stores without a mount.",
		Version:        cliargs.Version(),
		Action:         unknownCommand,
		OnUsageError:   usageError,
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
			gcCommand(), mcpCommand(), conflictsCommand(),
			historyCommand(), snapshotCommand(), checkpointCommand(), revertCommand(), restoreCommand(), diffCommand(), runsCommand(), repoCommand(),
		},
	}
	a.Flags = []cli.Flag{quietFlag()} // before the command's name too
	a.EnableBashCompletion = true     // memfs completion bash|zsh asks the app for the next words
	for _, cmd := range a.Commands {
		for _, sub := range append([]*cli.Command{cmd}, cmd.Subcommands...) {
			sub.Before, sub.OnUsageError = checkFlags, usageError
			sub.Flags = append(sub.Flags, quietFlag())
			if sub.Action == nil {
				sub.Action = unknownCommand
			}
		}
	}
	return app{a}
}

// unknownCommand is the action of the program and of the commands made of
// subcommands: the help, or a short error for a word that names none.
func unknownCommand(c *cli.Context) error {
	if !c.Args().Present() && c.Command.Name == c.App.Name {
		return cli.ShowAppHelp(c)
	} else if !c.Args().Present() {
		return cli.ShowSubcommandHelp(c)
	}
	return argSpec(c.Command).UnknownCommand(c.Command.HelpName+" COMMAND [flags] [ARGS]", c.Args().First())
}

// usageError is every command's OnUsageError: a short error and the
// usage line (cliargs.Command.UsageError), where urfave/cli would print
// the whole help.
func usageError(c *cli.Context, err error, _ bool) error {
	if c.Command.Name == c.App.Name {
		return argSpec(&cli.Command{}).UsageError("", "memfs [--version] COMMAND [flags] [ARGS]", err)
	}
	return argSpec(c.Command).UsageError(c.Command.Name, c.Command.HelpName+" [flags] "+c.Command.ArgsUsage, err)
}

func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no INFO lines (warnings and errors only)"}
}

// logger returns the text logger commands log to: -q given to the
// command or before its name keeps INFO lines out.
func logger(c *cli.Context, debug bool) *slog.Logger {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	} else if slices.ContainsFunc(c.Lineage(), func(cc *cli.Context) bool { return cc.Bool("quiet") }) {
		level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
}
