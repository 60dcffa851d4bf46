package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/mcpserver"
	"github.com/memfs/memfs/memorytool"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the store to agents over the Model Context Protocol: stdio, or streamable HTTP with --http (claude mcp add memfs -- memfs mcp)",
		Flags: append([]cli.Flag{storeFlag(), mountFlag("serve through"),
			&cli.StringFlag{Name: "http", Usage: "serve streamable HTTP at HOST:PORT (127.0.0.1:8765); beyond loopback only with a bearer token"},
			&cli.StringFlag{Name: "token-file", Usage: "a file holding the bearer token HTTP clients send (else $" + mcpserver.TokenEnv + ")"},
			&cli.StringFlag{Name: "prefix", Value: memorytool.DefaultPrefix, Usage: "the key prefix the memory tool's /memories names"},
		}, writeFlags()...),
		Action: func(c *cli.Context) error {
			o := mcpserver.ServeOptions{HTTP: c.String("http"), TokenFile: c.String("token-file"),
				Options: mcpserver.Options{Prefix: c.String("prefix"), Version: c.App.Version, Logger: logger(c, false)}}
			t, err := locate(c)
			if err = errors.Join(err, o.Check()); err != nil {
				return fmt.Errorf("mcp: %w", err)
			} else if t.mnt != "" {
				return mcpserver.ServeMount(c.Context, t.Client, o)
			}
			return withSession(c, memfs.WriteStore, func(ctx context.Context, of *opened) error { return mcpserver.Serve(ctx, of.FS, o) })
		},
	}
}
