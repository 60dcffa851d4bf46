package memfs

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"sync"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/fsnode"
)

// applyOp is one line on the helper's standard input (see the __apply
// command of memfs).
type applyOp struct {
	Op   string      `json:"op"` // create, touch or remove
	Key  string      `json:"key"`
	Mode fs.FileMode `json:"mode,omitempty"`
}

// applier is the serving side: it starts the helper and sends it work.
type applier struct {
	root *fsnode.Root
	cmd  *exec.Cmd

	mu  sync.Mutex // guards enc (one writer on the pipe)
	enc *json.Encoder
	in  io.WriteCloser
}

// startApplier starts the helper command argv on mnt.
func startApplier(argv []string, mnt string, root *fsnode.Root) (*applier, error) {
	cmd := exec.Command(argv[0], append(argv[1:len(argv):len(argv)], mnt)...)
	cmd.Stderr = os.Stderr
	cmd.Dir = "/" // never hold the mountpoint busy
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &applier{root: root, cmd: cmd, enc: json.NewEncoder(in), in: in}, nil
}

func (a *applier) send(op applyOp) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.enc.Encode(op)
}

func (a *applier) Create(key string, e backend.Entry, dirty bool) error {
	a.root.Stage(key, e, dirty)
	return a.send(applyOp{Op: "create", Key: key, Mode: e.Info.Mode})
}

func (a *applier) Touch(key string) error {
	return a.send(applyOp{Op: "touch", Key: key})
}

func (a *applier) Remove(key string) error {
	a.root.Expect(key, "remove")
	return a.send(applyOp{Op: "remove", Key: key})
}

// stop ends the helper after the work it has been sent.
func (a *applier) stop() error {
	a.in.Close()
	return a.cmd.Wait()
}
