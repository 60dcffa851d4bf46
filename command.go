package memfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/internal/names"
	"github.com/memfs/memfs/internal/usererr"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/repo"
	"github.com/memfs/memfs/session"
)

// Access is what a program that works on a store without a mount (a
// memfs command) does to it (see CommandOptions).
type Access int

const (
	// ReadStore: the program only reads (ls, cat, log, search, context,
	// export). Open it over a store opened read-only, and nothing in its
	// directory changes: no lock PID, marker or journal is written, no
	// damaged value log or journal bytes are cut or moved aside, and the
	// search index is kept in memory. What a crashed mount left in the
	// journal is shown from memory (a read-only replay) and left there
	// for the next mount or program that writes.
	ReadStore Access = iota
	// RebuildIndex: the program rebuilds the search index (reindex) and
	// rewrites, redacted, the values another program left a secret in:
	// it writes as WriteStore does, but makes no store.
	RebuildIndex
	// WriteStore: the program writes values (put, rm, import, summary
	// add): the journal is replayed and saved, and the session flushed
	// before it closes.
	WriteStore
)

// CommandOptions describe a program that works on a store without a
// mount, as the memfs commands do.
type CommandOptions struct {
	Access Access
	// Agent labels the writer of the changes (a writing Access).
	Agent string
	// Redactor redacts what is written; nil is NoRedact's choice (see
	// Options). A ReadStore program takes neither.
	Redactor *redact.Redactor
	NoRedact bool
	// Shared is a store many processes write (etcd): the program's writes
	// keep another mount's too (session.KeepBoth); a local store keeps
	// another program's version beside (session.KeepBeside).
	Shared bool
	// Bootstrap and Embedder are Options'.
	Bootstrap []string
	Embedder  embed.Embedder
}

// Options returns the engine's Options for the program: it sees every key
// the store holds, whatever a mount keeps in memory only (no transient
// pattern), writes (when it may) as this process (SelfWriter), and with
// ReadStore writes no value at all.
func (o CommandOptions) Options() Options {
	write := o.Access != ReadStore
	policy := session.KeepBeside
	if o.Shared {
		policy = session.KeepBoth
	}
	so := session.Options{
		OnConflict: policy,
		DirUID:     uint32(os.Getuid()), DirGID: uint32(os.Getgid()),
		Transient: []string{},
		ReadOnly:  !write,
	}
	if write {
		so.Agent, so.Self, so.Redactor = o.Agent, SelfWriter(o.Agent), o.Redactor
	}
	return Options{Session: so, NoRedact: write && o.NoRedact,
		Bootstrap: o.Bootstrap, Embedder: o.Embedder}
}

// Finish closes f, which a program opened with o's Options, at the end of
// its work, and returns what the program reports: err, its work's error,
// with the failure of Close beside it when the program writes. What the
// work did before an error is kept: Close flushes it with ctx's values
// but not its cancellation. A ReadStore program saves nothing, so its
// Close has nothing to report after an error (and is not cancelled).
func (o CommandOptions) Finish(ctx context.Context, f *FS, err error) error {
	write := o.Access != ReadStore
	if err != nil {
		if ferr := f.Close(context.WithoutCancel(ctx)); ferr != nil && write {
			return errors.Join(err, ferr)
		}
		return err
	}
	if !write {
		ctx = context.Background()
	}
	return f.Close(ctx)
}

// SelfWriter is this process as the writer of the changes it makes on its
// own (a command, the journal replay of a mount): its uid and pid, "memfs",
// the agent id and its run (SelfRun).
func SelfWriter(agent string) *meta.WriterInfo {
	return &meta.WriterInfo{UID: uint32(os.Getuid()), PID: uint32(os.Getpid()), Comm: "memfs", Agent: agent, Run: SelfRun()}
}

// SelfRun is the run this process works for: MEMFS_RUN in its
// environment, when valid (meta.ValidateRun); else "". Through a mount,
// the run of a write is the writing process's MEMFS_RUN (fsnode reads it),
// or the mount's own.
func SelfRun() string {
	if r := os.Getenv("MEMFS_RUN"); meta.ValidateRun(r) == nil {
		return r
	}
	return ""
}

// CheckTransient refuses, for the store command cmd, a transient editor
// file (session.DefaultTransient): a mount keeps it in memory only, so
// that storing one would make a key no mount shows. A store written by a
// mount with other --transient patterns may hold such a key: cat and rm
// call this only for a key the store does not have, to say why.
func CheckTransient(cmd, key string) error {
	if session.IsTransient(key, session.DefaultTransient) {
		return fmt.Errorf("%s: %s: a transient editor file lives only in a mounted session (see --transient); not stored", cmd, key)
	}
	return nil
}

// Cat writes the values of keys to w for memfs cat, each read by value (a
// file's content, a symlink's target as the store holds it) from a
// session or through a mount (mountclient.Client.Cat). It stops at the
// first key it cannot print, saying what that means to the person who
// asked (usererr.Explain; a transient name's own reason, CheckTransient).
func Cat(w io.Writer, keys []string, value func(key string) ([]byte, error)) error {
	for _, k := range keys {
		v, err := value(k)
		if errors.Is(err, fs.ErrNotExist) {
			if err := CheckTransient("cat", k); err != nil {
				return err
			}
		}
		if err != nil {
			return usererr.Explain(err)
		}
		if _, err := w.Write(v); err != nil {
			return err
		}
	}
	return nil
}

// RmMissing is what memfs rm does with a key that names nothing (the
// missing of Remove and of mountclient.Client.Remove): with force,
// nothing; else it is refused (usererr.Refuse), a transient name with its
// own reason (CheckTransient).
func RmMissing(force bool) func(key string) error {
	return func(k string) error {
		if force {
			return nil
		}
		if err := CheckTransient("rm", k); err != nil {
			return usererr.Refuse(err)
		}
		return usererr.Refuse(fmt.Errorf("rm: %s: no such key (memfs ls lists them; -r removes a prefix)", names.Show(k)))
	}
}

// PutFile stores value under key for `memfs put` on a store: a new file
// gets mode and the caller's ids; an old regular file keeps its mode and
// owner unless setMode (--mode given), as a write through a mount does
// (mountclient.Client.Put), so that a put never widens a private file.
// A repository's record that breaks its schema is refused, nothing
// written (repo.CheckKey).
func PutFile(c *session.Context, key string, value []byte, mode fs.FileMode, setMode bool) error {
	if err := repo.CheckKey(key, value); err != nil {
		return err // a repository's record that breaks its schema: nothing written
	}
	info := backend.Info{Mode: mode, MTime: time.Now(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	if st, err := c.Stat(key); err == nil && st.Mode.IsRegular() {
		info.UID, info.GID = st.UID, st.GID
		if !setMode {
			info.Mode = st.Mode.Perm()
		}
	}
	return c.Put(backend.Entry{Key: key, Value: value, Info: info})
}
