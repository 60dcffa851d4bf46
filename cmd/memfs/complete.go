package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/cliargs"
)

// complete answers the completion scripts (cliargs.Answer); keys are
// what memfs ls lists.
func (a app) complete(words []string) error {
	if len(words) == 0 {
		words = []string{""}
	}
	return cliargs.Answer(a.Writer, words, argSpec(&cli.Command{Subcommands: a.Commands}), strings.HasSuffix(os.Getenv("0"), "zsh"), func(flags []string) []string {
		var out bytes.Buffer
		newApp(&out, io.Discard).RunContext(context.Background(), append([]string{"memfs", "ls"}, flags...))
		return strings.Fields(out.String())
	})
}
