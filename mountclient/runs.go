package mountclient

import (
	"os"
	"path"
)

// runsDir is where a mount serves its runs: a directory per run.
const runsDir = ".memfs/runs"

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
// RunEventsFile) of run, as the mount gives it to this process.
func (c *Client) RunFile(run, name string) (b []byte, err error) {
	err = c.withRoot(func(r *os.Root) error {
		b, err = r.ReadFile(path.Join(runsDir, run, name))
		return err
	})
	return b, err
}
