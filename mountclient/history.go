package mountclient

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/memfs/memfs/history"
)

// The mount's history, as memfs's commands use it: the read-only
// .memfs/history/KEY/ (a file per version named by its seq in 8 digits,
// and log) and .memfs/snapshots/ (mkdir takes a snapshot, rmdir removes
// one; a run's directory holds its checkpoints and latest, a symlink to
// the newest; .memfs/checkpoints/ holds the runs only, every run name
// a directory, so that mkdir RUN/STEP there checkpoints a new run).

const (
	historyDir     = ".memfs/history"
	snapshotsDir   = ".memfs/snapshots"
	checkpointsDir = ".memfs/checkpoints"
)

// withRoot runs fn on the mount's root.
func (c *Client) withRoot(fn func(r *os.Root) error) error {
	r, err := c.Root()
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r)
}

// History returns key's log: one line per version, oldest first.
func (c *Client) History(key string) (log []byte, err error) {
	err = c.withRoot(func(r *os.Root) error {
		log, err = r.ReadFile(path.Join(historyDir, key, "log"))
		return err
	})
	return log, err
}

// Snapshot takes the snapshot name; RUN/STEP, a checkpoint, goes through
// .memfs/checkpoints/, where a run without steps is a directory too.
func (c *Client) Snapshot(name string) error {
	dir := snapshotsDir
	if strings.Contains(name, "/") {
		dir = checkpointsDir
	}
	return c.withRoot(func(r *os.Root) error { return r.Mkdir(path.Join(dir, name), 0o755) })
}

// RemoveSnapshot removes the snapshot name.
func (c *Client) RemoveSnapshot(name string) error {
	return c.withRoot(func(r *os.Root) error { return r.Remove(path.Join(snapshotsDir, name)) })
}

// Latest returns the name of run's newest checkpoint (RUN/STEP).
func (c *Client) Latest(run string) (name string, err error) {
	err = c.withRoot(func(r *os.Root) error {
		step, err := r.Readlink(path.Join(snapshotsDir, run, "latest"))
		name = run + "/" + step
		return err
	})
	return name, err
}

// Snapshots returns the snapshot names: every one (run ""), or run's.
func (c *Client) Snapshots(run string) (names []string, err error) {
	err = c.withRoot(func(r *os.Root) error {
		names, err = snapshotNames(r, run)
		return err
	})
	return names, err
}

// ListSnapshots returns the snapshot names which names: "" every one,
// "RUN/" the checkpoints of RUN, "RUN/latest" the run's newest (Latest).
// What was read before an error is returned with it.
func (c *Client) ListSnapshots(which string) ([]string, error) {
	if run, ok := strings.CutSuffix(which, "/"+history.Latest); ok {
		name, err := c.Latest(run)
		return []string{name}, err
	}
	names, err := c.Snapshots(strings.TrimSuffix(which, "/"))
	if errors.Is(err, fs.ErrNotExist) && strings.HasSuffix(which, "/") {
		return nil, nil // a run with no checkpoint has none to list, as on a store
	}
	return names, err
}

func snapshotNames(r *os.Root, run string) ([]string, error) {
	ents, err := readDir(r, path.Join(snapshotsDir, run))
	var out []string
	for _, e := range ents {
		name := path.Join(run, e.Name())
		_, notRun := r.Lstat(path.Join(snapshotsDir, name, "latest"))
		switch {
		case run != "" && e.Name() == "latest":
		case run == "" && e.IsDir() && notRun == nil:
			steps, err := snapshotNames(r, name)
			if err != nil {
				return out, err
			}
			out = append(out, steps...)
		default:
			out = append(out, name)
		}
	}
	return out, err
}

func readDir(r *os.Root, dir string) ([]os.DirEntry, error) {
	d, err := r.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir(-1)
}

// Revert writes key's version at seq (0: the one before its last, as
// history.RevertTarget chooses it) through the mount as a new version,
// with that version's permissions and user.memfs.* attributes (those a
// caller may set), and returns its seq.
func (c *Client) Revert(key string, seq uint64) (uint64, error) {
	var data []byte
	var mode os.FileMode
	var attrs map[string][]byte
	err := c.withRoot(func(r *os.Root) error {
		// What the mount holds unflushed is the last version: its fsync
		// makes it one, so "the one before the last" is the one before it.
		f, err := r.Open(key)
		gone := errors.Is(err, fs.ErrNotExist)
		if err == nil {
			err = f.Sync()
			f.Close()
			if err != nil {
				return err
			}
		}
		if seq == 0 {
			if seq, err = revertSeq(r, key, gone); err != nil {
				return err
			}
		}
		name := path.Join(historyDir, key, fmt.Sprintf("%08d", seq))
		vf, err := r.Open(name)
		if err != nil {
			return err
		}
		defer vf.Close()
		st, err := vf.Stat()
		if err != nil {
			return err
		}
		mode = st.Mode().Perm()
		if attrs, err = settableXAttrs(vf); err != nil {
			return err
		}
		data, err = io.ReadAll(vf)
		return err
	})
	if err != nil {
		return seq, err
	}
	if err := c.PutMode(key, data, mode); err != nil { // the version's mode, as a revert in the store
		return seq, err
	}
	return seq, c.putXAttrs(key, attrs)
}

// revertSeq is the seq of the version of key a revert with no target
// goes back to, from the key's log (history.RevertTarget).
func revertSeq(r *os.Root, key string, gone bool) (uint64, error) {
	b, err := r.ReadFile(path.Join(historyDir, key, "log"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	var vs []history.Version
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := history.ParseLogLine(line); ok {
			vs = append(vs, v)
		}
	}
	v, ok, err := history.RevertTarget(key, vs, gone)
	if !ok && err == nil {
		err = fmt.Errorf("%s has no version to go back to", key)
	}
	return v.Seq, err
}
