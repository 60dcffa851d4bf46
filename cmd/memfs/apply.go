package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/urfave/cli/v2"
)

// The applier: external changes to a directory store are carried out
// through the mountpoint by a helper process, so that the kernel emits
// real inotify events to watchers on the mount. (Changes applied behind
// the kernel produce none, on every FUSE filesystem; and the serving
// process must never touch its own mount, or it can deadlock.)

// applyOp is one line on the helper's standard input.
type applyOp struct {
	Op   string      `json:"op"` // create, touch or remove
	Key  string      `json:"key"`
	Mode fs.FileMode `json:"mode,omitempty"`
}

func applyCommand() *cli.Command {
	return &cli.Command{
		Name:      "__apply",
		Hidden:    true,
		Usage:     "internal: carry out external changes through MOUNTPOINT (started by memfs mount)",
		ArgsUsage: "MOUNTPOINT",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("__apply: want MOUNTPOINT")
			}
			return runApplier(c.Args().First(), os.Stdin, logger(c, false))
		},
	}
}

// runApplier reads operations from r and performs them under mnt until r ends.
func runApplier(mnt string, r io.Reader, log *slog.Logger) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var op applyOp
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			log.Error("applier: bad request", "err", err)
			continue
		}
		// The mountpoint is opened per request: an open descriptor on it
		// between requests would make a plain umount fail with EBUSY.
		root, err := os.OpenRoot(mnt)
		if err == nil {
			err = applyOne(root, op)
			root.Close()
		}
		if err != nil {
			log.Warn("applier: external change not shown through the mount", "op", op.Op, "key", op.Key, "err", err)
		}
	}
	return sc.Err()
}

func applyOne(root *os.Root, op applyOp) error {
	name := filepath.FromSlash(op.Key)
	switch op.Op {
	case "create":
		if d := filepath.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, op.Mode.Perm())
		if err != nil {
			return err
		}
		return f.Close()
	case "touch":
		// fallocate(KEEP_SIZE) of one byte: the kernel tells watchers
		// of a modification (IN_MODIFY), and memfs, which holds the new
		// value already, changes nothing for it: no byte, no size. (A
		// truncate to a size sent with the op did the same only while
		// memfs expected it, and truncated the file for real when two
		// touches of one key were queued, or the helper ran late.)
		// Never a fifo put in the key's place (it would block), never
		// through a symlink.
		f, err := root.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if m := fi.Mode(); !m.IsRegular() || m&fs.ModeSetuid != 0 || (m&fs.ModeSetgid != 0 && m&0o010 != 0) {
			// The kernel drops setuid, and setgid with group execute,
			// from a file modified by a process without CAP_FSETID,
			// and memfs would keep that change: such a file gets no
			// event rather than losing its bits.
			return nil
		}
		return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 1)
	case "remove":
		return root.Remove(name)
	}
	return fmt.Errorf("unknown op %q", op.Op)
}
