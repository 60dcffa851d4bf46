package main

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"

	"github.com/memfs/memfs/session"
)

// namespaceDirs are the directories memfs exists for: notes, skills and
// sub-agent profiles. Every writable mount shows them.
var namespaceDirs = []string{"memory", "skills", "agents"}

// makeNamespace makes the namespace directories the session lacks (the
// first mount of a store, or after someone removed one): real directories,
// saved at the next flush. A name that another node holds keeps it.
func makeNamespace(c *session.Context, log *slog.Logger) {
	for _, d := range namespaceDirs {
		err := c.Mkdir(d, 0o755, uint32(os.Getuid()), uint32(os.Getgid()))
		switch {
		case err == nil:
			log.Info("made the namespace directory", "dir", d+"/")
		case errors.Is(err, fs.ErrExist):
		default:
			log.Warn("cannot make the namespace directory", "dir", d+"/", "err", err)
		}
	}
}
