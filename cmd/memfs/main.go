// Command memfs mounts an agent's memory as a directory, and works on a
// memory store without a mount. Run "memfs --help" for the commands.
//
// # Concurrency
//
// A command runs on main's goroutine; SIGINT and SIGTERM cancel its
// context. A mount runs the engine (package memfs: the FUSE server, the
// serve loop, the search worker, the external-change watcher and its
// helper process, each described there) and one goroutine of its own, which
// turns the first SIGINT or SIGTERM into the end of the serve loop. A long
// command or flush may turn a progress spinner on a goroutine of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/sdnotify"
	"github.com/memfs/memfs/internal/usererr"
	"github.com/memfs/memfs/redact"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp(os.Stdout, os.Stderr)
	if err := app.RunContext(ctx, helperArgs(os.Args, app.Commands)); err != nil {
		msg := []byte(usererr.Message(err))
		if r, rerr := redact.NewFromFile(""); rerr == nil { // a key may hold a secret: the reason is printed, not it
			msg, _ = r.Redact("", msg)
		}
		fmt.Fprintln(os.Stderr, "memfs:", string(msg))
		sdnotify.Notify(sdnotify.Status(string(msg))) // a service manager (mount --daemon) shows why
		stop()
		code := 1
		var ec cli.ExitCoder
		if errors.As(err, &ec) && ec.ExitCode() > 0 { // memfs repo cache get's 3: stale
			code = ec.ExitCode()
		}
		os.Exit(code)
	}
}
