// Command memfs mounts an agent's memory as a directory, and works on a
// memory store without a mount. Run "memfs --help" for the commands.
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
