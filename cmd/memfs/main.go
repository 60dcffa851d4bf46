// Command memfs mounts an agent's memory as a directory, and works on a
// memory store without a mount. Run "memfs --help" for the commands.
//
// # Concurrency
//
// A command runs on main's goroutine; SIGINT and SIGTERM cancel its
// context. A mount adds the FUSE server's goroutines (see fsnode), one
// that waits for the server to end, the serve loop (flush on fsync, on a
// tick and at the end, then unmount and shut down, in that order), the
// --index-at-mount indexer, the search worker (searcher.go: applyMu
// before mu; the index is opened once under opened.indexMu and published
// through an atomic pointer), and for a directory store the external-change
// watcher (extwatch) with its helper process (apply.go: applier.mu guards
// the pipe). A long command may turn a progress spinner on a goroutine of
// its own.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp(os.Stdout, os.Stderr)
	if err := app.RunContext(ctx, helperArgs(os.Args, app.Commands)); err != nil {
		fmt.Fprintln(os.Stderr, "memfs:", err)
		stop()
		os.Exit(1)
	}
}
