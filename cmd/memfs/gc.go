package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "remove the data of a shared store that no key names any more (the chunks of overwritten large values)",
		Description: "The mounts of a shared (etcd) store elect one of them, which does this by itself every few minutes;\n" +
			"memfs gc does it now. A chunk is removed only when no key, conflict copy or system record names it and\n" +
			"it was last written long enough ago that no save in progress can still name it: the first gc of a store\n" +
			"only leaves a mark, and a later one removes what was unnamed since. Nothing is removed while a record is\n" +
			"damaged. A local store (badger, dir) keeps nothing apart from its keys: there is nothing to collect.",
		Flags: []cli.Flag{storeFlag()},
		Action: func(c *cli.Context) error {
			spec, err := parseStore(c.String("store"))
			if err != nil {
				return err
			}
			if spec.Local() {
				if err := spec.MustExist(); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "nothing to collect: a %s store keeps nothing apart from its keys\n", spec.Scheme())
				return nil
			}
			st, err := openStoreAs(spec, false, logger(c, false))
			if err != nil {
				return err
			}
			defer st.Close()
			col, ok := st.(backend.Collector)
			if !ok {
				fmt.Fprintf(c.App.Writer, "nothing to collect: the store %s keeps nothing apart from its keys\n", spec)
				return nil
			}
			got, err := col.Collect(c.Context)
			if err != nil {
				return err
			}
			if !got.Swept {
				fmt.Fprintf(c.App.Writer, "marked: nothing removed yet; a memfs gc %v or more from now (or a mount of the store) removes what no key names then\n", got.Wait)
				return nil
			}
			fmt.Fprintf(c.App.Writer, "removed %d chunks that no key named for %v or more\n", got.Removed, got.Wait)
			return nil
		},
	}
}
