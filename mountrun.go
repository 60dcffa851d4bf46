package memfs

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/sdnotify"
	"github.com/memfs/memfs/internal/usererr"
)

// RunOptions configure RunMount.
type RunOptions struct {
	// StoreDir is the store's local directory, "" for a store that is no
	// local directory: the mountpoint may not overlap it
	// (PrepareMountpoint).
	StoreDir string
	// Open opens the FS to mount, once the mountpoint is ready. Its ctx
	// is never cancelled: what it starts finishes after a cancellation of
	// RunMount's.
	Open func(ctx context.Context) (*FS, error)
	// Mount configures the mount. Its OnFlush is told of the final flush
	// too, as "final"; its Helper, when nil, is HelperArgs'.
	Mount MountOptions
	// HelperArgs, when set, make this program's own binary the helper
	// process, run with them and the mountpoint (extwatch.SelfHelper;
	// memfs: __apply), its standard error on HelperStderr.
	HelperArgs   []string
	HelperStderr io.Writer
	// Name names the store to a service manager: "serving NAME at MNT".
	Name string
	// ReadOnly says, in the log, that a cancellation unmounts without a
	// flush (the FS's session is read-only).
	ReadOnly bool
	// Logger receives what RunMount reports; slog.Default when nil.
	Logger *slog.Logger
}

// RunMount mounts an FS at mnt and serves it until ctx is done, as memfs
// mount does in the foreground: it readies mnt (PrepareMountpoint; a
// mountpoint it made is removed when the mount fails), opens the FS
// (RunOptions.Open), mounts it (FS.Mount; a failure is explained,
// usererr.Mount), tells a service manager that it is ready (sd_notify
// READY=1, with its status) and, once ctx is done, that it is stopping;
// then Mount.Serve flushes and unmounts, and the FS is closed. I/O
// goes on after ctx is done: the cancellation asks for the flush and the
// unmount (a busy mountpoint is retried until it is free), it cancels
// neither.
func RunMount(ctx context.Context, mnt string, o RunOptions) error {
	log := cmp.Or(o.Logger, slog.Default())
	made, err := PrepareMountpoint(mnt, o.StoreDir)
	if err != nil {
		return err
	}
	mounted := false
	if made {
		log.Info("created mountpoint", "mountpoint", mnt)
		defer func() {
			if !mounted {
				os.Remove(mnt) // this failed mount made it: leave nothing behind
			}
		}()
	}
	ioCtx := context.WithoutCancel(ctx)
	defer context.AfterFunc(ctx, func() {
		log.Info("signal: unmounting", "flush", !o.ReadOnly)
		sdnotify.Notify("STOPPING=1")
	})()
	f, err := o.Open(ioCtx)
	if err != nil {
		return err
	}
	mo := o.Mount
	if mo.Helper == nil && o.HelperArgs != nil {
		mo.Helper = extwatch.SelfHelper(o.HelperArgs, o.HelperStderr, log)
	}
	m, err := f.Mount(mnt, mo)
	if err != nil {
		f.Close(context.Background())
		return usererr.Mount(err, "/dev/fuse")
	}
	mounted = true
	if _, err := sdnotify.Notify("READY=1\n" + sdnotify.Status("serving "+o.Name+" at "+mnt)); err != nil {
		log.Warn("the service manager was not told that the mount is ready", "err", err)
	}
	err = m.Serve(ctx)
	sdnotify.Notify("STOPPING=1")
	if err != nil {
		f.Close(ioCtx)
		return err
	}
	if mo.OnFlush != nil {
		_, _, dirty, removed := f.c.Stats().Counts()
		defer mo.OnFlush("final", dirty+removed)()
	}
	return f.Close(ioCtx)
}
