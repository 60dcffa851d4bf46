package extwatch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/session"
)

// The helper protocol: external changes are carried out through the
// mountpoint by a helper process, so that the kernel emits real inotify
// events to watchers on the mount. (Changes applied behind the kernel
// produce none, on every FUSE filesystem; and the serving process must
// never touch its own mount, or it can deadlock.) The serving side (a
// Helper, the Watcher's Applier) announces each create and removal in the
// session and writes one JSON line per change to the helper's standard
// input; the helper (RunHelper) carries it out under the mountpoint, and
// the mount recognises its request by the announcement.

// helperOp is one line on the helper's standard input.
type helperOp struct {
	Op   string      `json:"op"` // mkdir, create, touch, attr, remove or expire
	Key  string      `json:"key"`
	Mode fs.FileMode `json:"mode,omitempty"`
}

// helperReply is one line on the helper's standard output: the outcome of
// an op that waits for one (expire), in the order they were sent.
type helperReply struct {
	Key string `json:"key"`
	Err string `json:"err,omitempty"`
}

// RunHelper is the helper process's side: it reads changes from r and
// carries them out under the mountpoint mnt until r ends, replying on w
// to those that wait for their outcome (expire). A change that fails is
// logged and passed over (the serving side applies it directly when its
// announcement expires, or when the reply says it failed).
func RunHelper(mnt string, r io.Reader, w io.Writer, log *slog.Logger) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	enc := json.NewEncoder(w)
	for sc.Scan() {
		var op helperOp
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			log.Error("mount helper: bad request", "err", err)
			continue
		}
		// The mountpoint is opened per request: an open descriptor on it
		// between requests would make a plain umount fail with EBUSY.
		root, err := os.OpenRoot(mnt)
		if err == nil {
			err = helperApply(root, op)
			root.Close()
		}
		if err != nil && op.Op != "expire" {
			log.Warn("mount helper: external change not shown through the mount", "op", op.Op, "key", op.Key, "err", err)
		}
		if op.Op == "expire" {
			reply := helperReply{Key: op.Key}
			if err != nil {
				reply.Err = err.Error()
			}
			if err := enc.Encode(reply); err != nil {
				return fmt.Errorf("mount helper: reply: %w", err)
			}
		}
	}
	return sc.Err()
}

func helperApply(root *os.Root, op helperOp) error {
	name := filepath.FromSlash(op.Key)
	switch op.Op {
	case "mkdir":
		return root.Mkdir(name, op.Mode.Perm())
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
		f, err := paths.OpenNoFollow(root, name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
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
	case "attr":
		// A setxattr of session.AttrSignal, which memfs takes, while
		// announced, as this request and changes nothing for: the
		// kernel tells watchers of an attribute change (IN_ATTRIB).
		// Unannounced (late), memfs refuses it: still no change. Never
		// a fifo put in the key's place, never through a symlink.
		f, err := paths.OpenNoFollow(root, name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.Fsetxattr(int(f.Fd()), session.AttrSignal, []byte("helper"), 0)
	case "remove", "expire":
		return root.Remove(name)
	}
	return fmt.Errorf("unknown op %q", op.Op)
}

// ErrHelperExited is the error of a Helper's methods once its process has
// exited.
var ErrHelperExited = errors.New("extwatch: the mount helper process has exited")

// Helper is the serving side of the helper protocol: the helper process,
// and the Applier that sends it work. Its methods are safe for concurrent
// use.
type Helper struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited

	mu      sync.Mutex // guards enc, in and waiting (one writer on the pipe)
	enc     *json.Encoder
	in      io.WriteCloser
	waiting []chan error // the ops sent that wait for a reply, in order
}

var _ Applier = (*Helper)(nil)

// StartHelper starts cmd as the helper process. cmd must call RunHelper
// on the mountpoint with its standard input (memfs's hidden __apply
// command does); StartHelper sets its Stdin to a pipe and, when Dir is
// empty, its Dir to "/", so that the helper never holds the mountpoint
// busy. Close ends it.
func StartHelper(cmd *exec.Cmd) (*Helper, error) {
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &Helper{cmd: cmd, exited: make(chan struct{}), enc: json.NewEncoder(in), in: in}
	replies := make(chan struct{})
	go func() {
		defer close(replies)
		h.readReplies(out)
	}()
	go func() {
		<-replies // Wait closes the pipe: every reply is read first
		cmd.Wait()
		close(h.exited)
	}()
	return h, nil
}

// readReplies hands each reply on r to the op that waits for it, until r
// ends.
func (h *Helper) readReplies(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var reply helperReply
		if json.Unmarshal(sc.Bytes(), &reply) != nil {
			continue
		}
		h.mu.Lock()
		if len(h.waiting) == 0 {
			h.mu.Unlock()
			continue
		}
		ch := h.waiting[0]
		h.waiting = h.waiting[1:]
		h.mu.Unlock()
		if reply.Err != "" {
			ch <- errors.New(reply.Err)
		} else {
			ch <- nil
		}
	}
}

// SelfHelper makes the command of a helper process that is this program's
// own binary, run with args and then the mountpoint (memfs: its hidden
// __apply command, which calls RunHelper), its standard error on stderr:
// a MountOptions.Helper of the engine. When the binary cannot be found it
// logs why and returns nil: external changes then reach the mount, but
// watchers on it see no events.
func SelfHelper(args []string, stderr io.Writer, log *slog.Logger) func(mnt string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("no helper process for external changes: they reach the mount, but watchers on it see no events", "err", err)
		return nil
	}
	return func(mnt string) *exec.Cmd {
		cmd := exec.Command(exe, append(slices.Clone(args), mnt)...)
		cmd.Stderr = stderr
		return cmd
	}
}

func (h *Helper) send(op helperOp) error {
	select {
	case <-h.exited:
		return ErrHelperExited
	default:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.enc.Encode(op); err != nil {
		return fmt.Errorf("extwatch: mount helper: %w", err)
	}
	return nil
}

// Mkdir asks the helper to make directory key (announced in the session).
func (h *Helper) Mkdir(key string, mode fs.FileMode) error {
	return h.send(helperOp{Op: "mkdir", Key: key, Mode: mode})
}

// Create asks the helper to create key (announced in the session).
func (h *Helper) Create(key string, mode fs.FileMode) error {
	return h.send(helperOp{Op: "create", Key: key, Mode: mode})
}

// Touch asks the helper to show a modification of key.
func (h *Helper) Touch(key string) error { return h.send(helperOp{Op: "touch", Key: key}) }

// Attr asks the helper to show a change of key's attributes (announced
// in the session).
func (h *Helper) Attr(key string) error { return h.send(helperOp{Op: "attr", Key: key}) }

// Remove asks the helper to remove key (announced in the session).
func (h *Helper) Remove(key string) error { return h.send(helperOp{Op: "remove", Key: key}) }

// Expire has the helper remove key, which expired (announced in the
// session: session.External.AnnounceExpire), and returns once it has,
// with the unlink's error: when it returns, no unlink of the helper's is
// on its way to the mount.
func (h *Helper) Expire(key string) error {
	ch := make(chan error, 1)
	h.mu.Lock()
	select {
	case <-h.exited:
		h.mu.Unlock()
		return ErrHelperExited
	default:
	}
	if err := h.enc.Encode(helperOp{Op: "expire", Key: key}); err != nil {
		h.mu.Unlock()
		return fmt.Errorf("extwatch: mount helper: %w", err)
	}
	h.waiting = append(h.waiting, ch)
	h.mu.Unlock()
	select {
	case err := <-ch:
		return err
	case <-h.exited:
		select {
		case err := <-ch: // every reply is read before exited closes
			return err
		default:
			return ErrHelperExited
		}
	}
}

// Exited is closed once the helper process has exited.
func (h *Helper) Exited() <-chan struct{} { return h.exited }

// PID returns the helper process's id.
func (h *Helper) PID() int { return h.cmd.Process.Pid }

// Close ends the helper after the work it has been sent, and waits for it
// to exit. It may be called more than once.
func (h *Helper) Close() error {
	h.mu.Lock()
	err := h.in.Close()
	h.mu.Unlock()
	<-h.exited
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	return err
}
