package mountclient

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/internal/paths"
)

// AddSummary appends the step summary s to contextpack.SummariesKey in
// the mount (memfs.FS.AddSummary, through the mount), with Append.
func (c *Client) AddSummary(s contextpack.Summary) error {
	line, err := contextpack.SummaryLine(s)
	if err != nil {
		return err
	}
	return c.Append(contextpack.SummariesKey, line)
}

// Append writes data at the end of key in the mount, making the file
// (0644) and its directories: one write(2) on an O_APPEND descriptor,
// which memfs appends whole at the end of the file, so that concurrent
// appenders never interleave. No symlink is followed at the key.
func (c *Client) Append(key string, data []byte) error {
	r, err := c.Root() // a live mount: never a plain directory's file
	if err != nil {
		return err
	}
	defer r.Close()
	if dir := path.Dir(key); dir != "." {
		if err := paths.MkdirAllNoFollow(r, dir, 0o755); err != nil {
			return err
		}
	}
	f, err := paths.OpenNoFollow(r, key, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Events is the mount's event log, read through .memfs/events/: what the
// caller may read of it (eventlog.DirSys).
func (c *Client) Events() (eventlog.DirSys, error) {
	dir := filepath.Join(c.Dir, ".memfs")
	if _, err := os.Stat(filepath.Join(dir, "events")); err != nil {
		return eventlog.DirSys{}, fmt.Errorf("%s is not a memfs mount with an event log: %w", c.Dir, err)
	}
	return eventlog.NewDirSys(dir), nil
}
