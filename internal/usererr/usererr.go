// Package usererr says what an error of a memfs command means to the
// person who ran it: what to do next ("memfs ls lists the keys"), a key
// refused before any work, and a message without the names of the system
// calls that failed (an os.Root's "statat", "openat"). The errors it
// returns wrap the ones it is given, so errors.Is still sees through them.
//
// # Concurrency
//
// Everything here is a function of its arguments (and, for Mount, of the
// device file it checks).
package usererr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// Explain adds what to do to the errors a user can cause.
func Explain(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, backend.ErrInvalidKey):
		return fmt.Errorf("%w\n  keys are relative slash-separated paths without . or .. segments or control characters, e.g. memory/notes.md", err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w\n  memfs ls lists the keys", err)
	}
	return err
}

// OpenStore says what err, the failure to open the store named store,
// means. A command goes through the mount that serves its store when it
// sees one: a store another program holds (backend.ErrStoreInUse) is then
// held by a command at work, or by a mount this process cannot see.
func OpenStore(store string, err error) error {
	if errors.Is(err, backend.ErrStoreInUse) {
		return fmt.Errorf("%w\n  another program holds %s: a memfs command still at work (wait for it), "+
			"or a memfs mount not visible here (another mount namespace: unmount it there)", err, store)
	}
	return fmt.Errorf("open store %s: %w", store, err)
}

// CheckKey refuses, for the store command cmd, a key the store never
// holds: an invalid key, or one of memfs's own names.
func CheckKey(cmd, key string) error {
	if err := backend.ValidateKey(key); err != nil {
		return fmt.Errorf("%s: %w", cmd, Explain(err))
	}
	if backend.IsReserved(key) {
		return fmt.Errorf("%s: %s: a name reserved for memfs's own files (.memfs, .memfs-*, .memfs.* at the root, .memfs-tmp-*); not a key", cmd, key)
	}
	return nil
}

// CheckKeys is CheckKey of each of keys, in order; with dirs, a key may
// end in a slash (rm's PREFIX/), checked without it.
func CheckKeys(cmd string, keys []string, dirs bool) error {
	for _, k := range keys {
		if dirs {
			k = strings.TrimSuffix(k, "/")
		}
		if err := CheckKey(cmd, k); err != nil {
			return err
		}
	}
	return nil
}

// CheckPrefix returns the key prefix p for the store command cmd (its
// flag named in cmd) without leading and trailing slashes: "" for the
// whole store, else a key CheckKey takes.
func CheckPrefix(cmd, p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	if err := CheckKey(cmd, p); err != nil {
		return "", err
	}
	return p, nil
}

// Refuse marks err as one a command makes itself, such as rm's for a key
// that names nothing: Rm tells it as it is.
func Refuse(err error) error { return refused{err} }

type refused struct{ error }

// Rm says what an error of rm (memfs.Remove, mountclient.Client.Remove)
// means.
func Rm(err error) error {
	var pe *fs.PathError
	var r refused
	switch {
	case err == nil:
		return nil
	case errors.As(err, &r):
		return r.error
	case errors.As(err, &pe) && errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("rm: %s is a directory: -r removes it and every key under it", pe.Path)
	}
	return fmt.Errorf("rm: %w", Explain(err))
}

// Message is err's text as a person reads it: each failed operation on a
// path is told as what was done, not as the system call that did it
// ("statat memory/a: permission denied" reads "stat memory/a: ...").
func Message(err error) string {
	msg := err.Error()
	for e := err; e != nil; e = errors.Unwrap(e) {
		pe, ok := e.(*fs.PathError)
		if !ok {
			continue
		}
		if op := plainOp(pe.Op); op != pe.Op {
			msg = strings.Replace(msg, pe.Op+" "+pe.Path+": ", op+" "+pe.Path+": ", 1)
		}
	}
	return msg
}

// plainOp names the operation of a system call of the *at family (an
// os.Root's, a dirstore's) as the call without "at" does: "openat" is
// "open", "fstatat" and "statat" are "stat".
func plainOp(op string) string {
	switch op {
	case "statat", "lstatat", "fstatat", "newfstatat":
		return "stat"
	case "openat", "openat2":
		return "open"
	case "mkdirat":
		return "mkdir"
	case "unlinkat", "removeat":
		return "remove"
	case "renameat", "renameat2":
		return "rename"
	case "readlinkat":
		return "readlink"
	case "symlinkat":
		return "symlink"
	case "linkat":
		return "link"
	case "fchmodat", "chmodat":
		return "chmod"
	case "fchownat", "chownat":
		return "chown"
	}
	return op
}

// Mount adds to a failed mount what the machine lacks, when it lacks it:
// the FUSE device dev (/dev/fuse), or the right to open it. fusermount
// then fails with no more than its exit code.
func Mount(err error, dev string) error {
	if err == nil {
		return nil
	}
	if _, serr := os.Stat(dev); serr != nil {
		return fmt.Errorf("%w\n  %s does not exist: load the fuse module (modprobe fuse), or give a container the device (docker run --device /dev/fuse --cap-add SYS_ADMIN)", err, dev)
	}
	if aerr := unix.Access(dev, unix.R_OK|unix.W_OK); aerr != nil {
		return fmt.Errorf("%w\n  %s is not readable and writable by you (%v): ls -l %s; it is usually mode 0666, or add yourself to its group", err, dev, aerr, dev)
	}
	return err
}
