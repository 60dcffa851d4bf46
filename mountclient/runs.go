package mountclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/runs"
)

// runsDir is where a mount serves its runs: a directory per run.
const runsDir = ".memfs/runs"

// answerError is the extended attribute of a mount's answer file that
// names the errno of an answer that cannot be given (fsnode.ErrorXAttr).
const answerError = "user.memfs.error"

// Runs lists the runs the mount knows of, sorted.
func (c *Client) Runs() (ids []string, err error) {
	err = c.withRoot(func(r *os.Root) error {
		ents, err := readDir(r, runsDir)
		for _, e := range ents {
			ids = append(ids, e.Name())
		}
		return err
	})
	return ids, err
}

// RunFile reads the file name (memfs.RunMetaFile, RunSummariesFile,
// RunEventsFile) of run, as the mount gives it to this process. A file
// that holds why the mount cannot answer is that error, never its text.
func (c *Client) RunFile(run, name string) (b []byte, err error) {
	err = c.withRoot(func(r *os.Root) error {
		p := path.Join(runsDir, run, name)
		f, err := r.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if b, err = io.ReadAll(f); err != nil {
			return err
		}
		buf := make([]byte, 64)
		if n, xerr := unix.Fgetxattr(int(f.Fd()), answerError, buf); xerr == nil {
			return fmt.Errorf("%s: the mount cannot answer (%s):\n%s", p, buf[:n], strings.TrimSpace(string(b)))
		} else if !errors.Is(xerr, unix.ENODATA) && !errors.Is(xerr, unix.EOPNOTSUPP) {
			return xerr
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// CheckRuns folds the mount's event log anew (as this process may read
// it: .memfs/events/) and tells how each run's meta.json differs from the
// fold (`memfs runs rebuild --check` through a mount); none when they
// agree.
func (c *Client) CheckRuns(ctx context.Context) ([]string, error) {
	sys, err := c.Events()
	if err != nil {
		return nil, err
	}
	l, err := eventlog.Open(ctx, sys, nil)
	if err != nil {
		return nil, err
	}
	rebuilt, _, err := runs.New(nil, l).Rebuild(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := c.Runs()
	if err != nil {
		return nil, err
	}
	kept := make(map[string]runs.Meta, len(ids))
	for _, id := range ids {
		b, err := c.RunFile(id, "meta.json")
		if err != nil {
			return nil, err
		}
		var m runs.Meta
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s/meta.json: %w", id, err)
		}
		if m.Events > 0 {
			kept[id] = m
		}
	}
	return runs.Diff(kept, rebuilt), nil
}
