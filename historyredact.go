package memfs

import (
	"context"
	"log/slog"
	"os"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/packhist"
)

// RedactVersion blanks the bytes of the version of key at seq in the
// history of st (history.Store.Redact: its record stays, marked), and in
// the context packs' archive (packhist.Redact: a pack as of a seq that
// needs it fails with packhist.ErrRedacted), and
// appends an event saying so (eventlog.OpRedact, by agent). Run it on a
// store no mount serves, or a shared one: the event log is opened here.
// Versions that share the bytes are named in the result, not redacted.
func RedactVersion(ctx context.Context, st backend.SysStore, key string, seq uint64, agent string, log *slog.Logger) (history.Redacted, error) {
	r, err := history.New(st).Redact(ctx, key, seq)
	if err != nil {
		return r, err
	}
	if err := packhist.Redact(ctx, st, key, seq); err != nil {
		return r, err
	}
	l, err := eventlog.Open(ctx, st, log)
	if err != nil {
		return r, err
	}
	w := meta.WriterInfo{UID: uint32(os.Geteuid()), PID: uint32(os.Getpid()), Comm: "memfs", Agent: agent}
	_, err = l.Append(ctx, []eventlog.Event{{Op: eventlog.OpRedact, Key: key, Size: r.Version.Size, Writer: w, Redacted: seq}})
	return r, err
}
