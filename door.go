package memfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// The doors that are not the mount (the MCP server, the memory tool's
// handler) read and write through the methods below, so that a change
// through them is the change a shell makes on the mount: the same
// session calls (create with truncate and a write, rename, unlink), the
// same checks (key rules, a secret in a name refused), the same
// redaction at the journal and the flush, and the same event, whose
// writer is by.

// ErrSecretName is the error of a change whose name holds a secret (the
// redaction rules find one in it): the name is refused, as the mount
// refuses it (EACCES), and the error names the rule, never the secret.
var ErrSecretName = session.ErrSecretName

// ReadFile returns the value of the file key, loading it, when the
// caller in ctx (AsUser; this process's user when ctx names none) could
// read it through the mount, else an error satisfying fs.ErrPermission.
// A directory is an error satisfying errors.Is(err, session.ErrIsDir); a
// missing key, fs.ErrNotExist.
func (f *FS) ReadFile(ctx context.Context, key string) ([]byte, error) {
	if st, err := f.c.Stat(key); err == nil && st.IsDir {
		return nil, &fs.PathError{Op: "read", Path: key, Err: session.ErrIsDir}
	}
	cr, ok := session.CredFrom(ctx)
	if !ok {
		cr = session.ProcessCred()
	}
	if f.c.Has(key) && !f.c.Access().CanRead(key, cr) {
		return nil, &fs.PathError{Op: "read", Path: key, Err: fs.ErrPermission}
	}
	h, err := f.c.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	// The handle pins the value: read it whole through the handle.
	v := make([]byte, h.Stat().Size)
	n, err := h.ReadAt(v, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return v[:n], nil
}

// parentKey is key's directory, "" at the root.
func parentKey(key string) string {
	dir, _ := backend.Split(key)
	return dir
}

// IsDir reports whether key is a directory of the session.
func (f *FS) IsDir(key string) bool {
	st, err := f.c.Stat(key)
	return err == nil && st.IsDir
}

// Exists reports whether key names a file or a directory.
func (f *FS) Exists(key string) bool {
	_, err := f.c.Stat(key)
	return err == nil
}

// Nodes lists the directories and other nodes under prefix (Nodes).
func (f *FS) Nodes(prefix string) []backend.Entry { return Nodes(f.c, prefix) }

// WriteFile makes value the whole content of the file key as by, as a
// shell's "> key" does on the mount: it creates the file (mode 0644,
// owned by this process's user) and its missing directories, or
// truncates it, then writes and closes it (the journal records it).
func (f *FS) WriteFile(ctx context.Context, key string, value []byte, by meta.WriterInfo) error {
	if err := f.mkdirAll(parentKey(key)); err != nil {
		return err
	}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	h, err := f.c.Create(key, session.CreateOptions{Mode: 0o644, UID: uid, GID: gid, Truncate: true, Writer: &by})
	if err != nil {
		return err
	}
	if _, err := h.WriteAt(value, 0); err != nil {
		return errors.Join(err, h.Close())
	}
	return h.Close()
}

// AppendFile writes data at the end of the file key as by, as a shell's
// ">> key" does on the mount: one append, whole (concurrent appenders
// never interleave), creating the file (mode 0644, owned by this
// process's user) and its missing directories.
func (f *FS) AppendFile(ctx context.Context, key string, data []byte, by meta.WriterInfo) error {
	if err := f.mkdirAll(parentKey(key)); err != nil {
		return err
	}
	h, err := f.c.Create(key, session.CreateOptions{Mode: 0o644, UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Writer: &by})
	if err != nil {
		return err
	}
	if _, err := h.Append(data); err != nil {
		return errors.Join(err, h.Close())
	}
	return h.Close()
}

// MkdirAll makes the directory dir and its missing parents with mode, as
// mkdir -p, owned by this process's user.
func (f *FS) MkdirAll(dir string, mode fs.FileMode) error { return f.mkdirAllMode(dir, mode) }

// CreateFile makes the file key with value and mode as by, as an
// O_CREAT|O_EXCL open, a write and a close do on the mount: an error
// satisfying fs.ErrExist when key exists, whatever it holds. Its parent
// directory must exist.
func (f *FS) CreateFile(ctx context.Context, key string, value []byte, mode fs.FileMode, by meta.WriterInfo) error {
	h, err := f.c.Create(key, session.CreateOptions{Mode: mode.Perm(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Exclusive: true, Writer: &by})
	if err != nil {
		return err
	}
	if _, err := h.WriteAt(value, 0); err != nil {
		return errors.Join(err, h.Close())
	}
	return h.Close()
}

// mkdirAll makes the directory dir and its missing parents, as mkdir -p.
func (f *FS) mkdirAll(dir string) error { return f.mkdirAllMode(dir, 0o755) }

func (f *FS) mkdirAllMode(dir string, mode fs.FileMode) error {
	if dir == "" || f.IsDir(dir) {
		return nil
	}
	if err := f.mkdirAllMode(parentKey(dir), mode); err != nil {
		return err
	}
	err := f.c.Mkdir(dir, mode.Perm(), uint32(os.Getuid()), uint32(os.Getgid()))
	if errors.Is(err, fs.ErrExist) && f.IsDir(dir) {
		return nil // made meanwhile
	}
	return err
}

// Rename moves the file or directory oldKey to newKey as by, making
// newKey's missing directories; an existing newKey is an error
// satisfying fs.ErrExist (renameat2's RENAME_NOREPLACE).
func (f *FS) Rename(ctx context.Context, oldKey, newKey string, by meta.WriterInfo) error {
	if !f.Exists(oldKey) {
		return &fs.PathError{Op: "rename", Path: oldKey, Err: fs.ErrNotExist}
	}
	if err := f.mkdirAll(parentKey(newKey)); err != nil {
		return err
	}
	return f.c.Rename(session.WithWriter(ctx, by), oldKey, newKey, session.RenameNoReplace)
}

// RemoveAll removes the file key as by, or the directory key with
// everything under it, its files as by, then its directories (RemoveTree).
func (f *FS) RemoveAll(ctx context.Context, key string, by meta.WriterInfo) error {
	st, err := f.c.Stat(key)
	if err != nil {
		return err
	}
	if !st.IsDir {
		return f.removeFile(ctx, key, st.Nlink, by)
	}
	for _, e := range Nodes(f.c, key+"/") {
		if e.Info.Mode.IsDir() {
			continue
		}
		fst, err := f.c.Stat(e.Key)
		if err != nil {
			return err
		}
		if err := f.removeFile(ctx, e.Key, fst.Nlink, by); err != nil {
			return err
		}
	}
	_, err = RemoveTree(ctx, f.c, key)
	return err
}

// removeFile removes the name key of a file of nlink names as by.
func (f *FS) removeFile(ctx context.Context, key string, nlink uint32, by meta.WriterInfo) error {
	if nlink > 1 {
		// Its other names are saved with it: load it (RemoveName).
		if err := f.c.Resolve(ctx, key); err != nil {
			return err
		}
	}
	return f.c.DeleteBy(key, &by)
}

// AsProcess is ctx with this process's user as the caller (a search, a
// context pack answers a caller with what it may read): a door whose
// requests come from this process's user, as the MCP server's do.
func AsProcess(ctx context.Context) context.Context {
	return session.WithCred(ctx, session.ProcessCred())
}

// AsUser is ctx with the caller uid, of the groups gids: what a door
// reads for it is what that user could read through the mount.
func AsUser(ctx context.Context, uid uint32, gids ...uint32) context.Context {
	return session.WithCred(ctx, session.Cred{UID: uid, GIDs: gids})
}

// SetAttr sets the extended attribute name of key to value as by, as
// setfattr does on the mount (memfs's own, user.memfs.*, are checked by
// meta.Validate; the ones memfs keeps itself are refused).
func (f *FS) SetAttr(ctx context.Context, key, name string, value []byte, by meta.WriterInfo) error {
	return f.c.XAttrs().Set(session.WithWriter(ctx, by), key, name, value, 0)
}

// Change is a change the session made, as the mount's .memfs/changes
// feed shows it: op (create, content, remove, rename, mkdir, rmdir,
// attr), the key, and a rename's old key.
type Change struct {
	Op     string `json:"op"`
	Key    string `json:"key"`
	OldKey string `json:"old_key,omitempty"`
}

// Watch tells fn of every change after it is made, with no lock held
// (fn must not block), until stop is called: the doors that are not the
// mount follow the change feed the mount shows as .memfs/changes.
func (f *FS) Watch(fn func(Change)) (stop func()) {
	return f.c.Watch(func(ch session.Change) { fn(Change{Op: string(ch.Op), Key: ch.Key, OldKey: ch.OldKey}) })
}
