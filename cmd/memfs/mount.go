package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/session"
)

func mountCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount",
		Usage:     "mount a memory store at MOUNTPOINT, in the foreground",
		ArgsUsage: "MOUNTPOINT",
		Description: "Serves the store as a directory until SIGINT/SIGTERM or memfs unmount, which flush and\n" +
			"unmount. Writes stay in memory until fsync, the flush interval, or unmount; a file closed\n" +
			"after writing survives a crash of memfs through the store's journal.",
		Flags: append([]cli.Flag{
			storeFlag(),
			&cli.StringSliceFlag{Name: "bootstrap", Value: cli.NewStringSlice("memory/"), Usage: "key prefixes whose values are loaded at mount (\"\" loads everything)"},
			&cli.DurationFlag{Name: "flush-interval", Value: 30 * time.Second, Usage: "flush dirty values this often (0 = only on fsync and unmount)"},
			&cli.DurationFlag{Name: "attr-timeout", Value: time.Second, Usage: "how long the kernel may cache attributes (0 = not at all)"},
			&cli.DurationFlag{Name: "entry-timeout", Value: time.Second, Usage: "how long the kernel may cache names (and missing names) (0 = not at all)"},
			&cli.Int64Flag{Name: "max-file-size", Value: 64 << 20, Usage: "largest file in bytes, at least 1 (there is no unlimited size); larger writes fail with EFBIG"},
			&cli.BoolFlag{Name: "read-only", Usage: "mount read-only"},
			&cli.BoolFlag{Name: "allow-other", Usage: "let other users in, held to the stored modes (needs user_allow_other in /etc/fuse.conf unless root)"},
			&cli.BoolFlag{Name: "debug", Usage: "log every FUSE request"},
			&cli.BoolFlag{Name: "index-at-mount", Usage: "open (and repair) the search index right after mounting, in the background, instead of at the first search"},
			&cli.BoolFlag{Name: "xattrs", Value: true, Usage: "extended attributes on the mount (getfattr/setfattr); --xattrs=false makes ls -l about 8x faster on large trees, the kernel then asks for no attribute"},
		}, append(transientFlags(), writeFlags()...)...),
		Action: mountAction,
	}
}

// checkMountpoint refuses what would fail late or deadlock: a missing or
// non-empty mountpoint, no /dev/fuse, a mountpoint inside the store or the
// store inside the mountpoint.
func checkMountpoint(mnt string, spec storeSpec) error {
	fi, err := os.Stat(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w\n  create it first: mkdir -p %s", mnt, err, mnt)
	}
	if !fi.IsDir() {
		return fmt.Errorf("mountpoint %s is not a directory", mnt)
	}
	ents, err := os.ReadDir(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w", mnt, err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("mountpoint %s is not empty (%d entries); mount on an empty directory", mnt, len(ents))
	}
	if err := checkOverlap(mnt, spec.path); err != nil {
		return err
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("no /dev/fuse (%v): load the fuse module (modprobe fuse) or install fuse3", err)
	}
	return nil
}

// makeMountpoint makes the mountpoint mnt when nothing is there, and
// reports whether it did. Only the last component is made: a user who
// names ~/memory expects it made, while a typo in a parent (~/memroy/x)
// should fail rather than leave a tree of directories behind.
func makeMountpoint(mnt string) (bool, error) {
	if _, err := os.Lstat(mnt); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // there, or unreadable: checkMountpoint says what is wrong
	}
	if err := os.Mkdir(mnt, 0o755); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("mountpoint %s: its parent %s does not exist\n  create it first: mkdir -p %s", mnt, filepath.Dir(mnt), mnt)
		}
		return false, fmt.Errorf("mountpoint %s: %w\n  create it first: mkdir -p %s", mnt, err, mnt)
	}
	return true, nil
}

// checkOverlap refuses a mountpoint inside the store or a store inside the
// mountpoint, comparing the paths with every symlink resolved: a link must
// not hide an overlap.
func checkOverlap(mnt, store string) error {
	m, s := resolved(mnt), resolved(store)
	if within(m, s) || within(s, m) {
		return fmt.Errorf("mountpoint %s and store %s overlap (%s and %s); the kernel would deadlock serving one from the other", mnt, store, m, s)
	}
	return nil
}

// resolved returns the absolute path p with every symlink resolved; a part
// that does not exist yet (a new store) is joined to its nearest existing
// parent, resolved.
func resolved(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(resolved(parent), filepath.Base(p))
}

func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func mountAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("mount: want exactly one MOUNTPOINT, got %d arguments\n  usage: memfs mount [--store badger:PATH|dir:PATH] MOUNTPOINT", c.NArg())
	}
	mnt, err := filepath.Abs(c.Args().First())
	if err != nil {
		return err
	}
	spec, err := parseStore(c.String("store"))
	if err != nil {
		return err
	}
	transient, err := transientPatterns(c)
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	if c.Bool("read-only") {
		if err := spec.mustExist(); err != nil {
			return err
		}
	}
	if t, ok := servingMount(spec); ok {
		return fmt.Errorf("%s is already mounted at %s (memfs process %d); use that mount, or memfs unmount %s first",
			spec, t.mnt, t.pid, t.mnt)
	}
	log := logger(c, c.Bool("debug"))
	// Overlap first: a mountpoint made inside the store would be a key.
	if err := checkOverlap(mnt, spec.path); err != nil {
		return err
	}
	created, err := makeMountpoint(mnt)
	if err != nil {
		return err
	}
	mounted := false
	if created {
		log.Info("created mountpoint", "mountpoint", mnt)
		defer func() {
			if !mounted {
				os.Remove(mnt) // this failed mount made it: leave nothing behind
			}
		}()
	}
	if err := checkMountpoint(mnt, spec); err != nil {
		return err
	}
	// I/O must finish even after a signal cancelled the command's context.
	ctx := context.WithoutCancel(c.Context)

	// Signals are watched from here on: each one asks for flush + unmount,
	// and a second one retries after a busy mountpoint.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	red, err := newRedactor(c, log)
	if err != nil {
		return err
	}
	if err := checkAgent(c); err != nil {
		return err
	}
	o, err := openSession(ctx, spec, session.Options{
		Self:        selfWriter(c.String("agent")),
		Redactor:    red,
		MaxFileSize: c.Int64("max-file-size"),
		ReadOnly:    c.Bool("read-only"),
		DirUID:      uint32(os.Getuid()),
		DirGID:      uint32(os.Getgid()),
		Transient:   transient,
	}, log, c.StringSlice("bootstrap")...)
	if err != nil {
		return err
	}
	if !c.Bool("read-only") {
		makeNamespace(o.c, log)
	}
	// Indexing lists the store once, and that garbage would stay resident:
	// hand it back to the system before serving.
	debug.FreeOSMemory()
	if c.Bool("index-at-mount") {
		go func() {
			if _, err := o.searcher(ctx, log); err != nil {
				log.Error("search index unavailable; memfs reindex rebuilds it", "err", err)
			}
		}()
	}
	root := fsnode.NewRoot(o.c, fsnode.Options{
		Logger:          log,
		EntryTimeout:    c.Duration("entry-timeout"),
		AttrTimeout:     c.Duration("attr-timeout"),
		NegativeTimeout: c.Duration("entry-timeout"),
		Agent:           c.String("agent"),
		Events:          o.events,
		ContextPack:     contextAnswer(o.c, c.StringSlice("bootstrap"), o.searchFunc(log)),
		Search:          o.searchAnswer(log),
		Records:         o.events,
		Status: func() string {
			return fmt.Sprintf("store: %s\nmountpoint: %s\npid: %d\n", spec, mnt, os.Getpid())
		},
	})
	srv, err := fsnode.Mount(mnt, root, fsnode.MountOptions{
		AllowOther: c.Bool("allow-other"),
		ReadOnly:   c.Bool("read-only"),
		Debug:      c.Bool("debug"),
		NoXAttrs:   !c.Bool("xattrs"),
		FsName:     "memfs:" + spec.String(),
	})
	if err != nil {
		root.Close()
		o.close()
		return fmt.Errorf("%w\n  is %s already mounted, or FUSE unavailable here?", err, mnt)
	}
	mounted = true
	// A directory store can be changed by other programs: follow them.
	var ext *extwatch.Watcher
	var app *applier
	if ds, ok := o.store.(*dirstore.Store); ok && !c.Bool("read-only") {
		app, err = startApplier(mnt, root, c.App.ErrWriter)
		if err != nil {
			log.Warn("no helper process for external changes: they reach the mount, but watchers on it see no events", "err", err)
		}
		wopts := extwatch.Options{Logger: log}
		if app != nil {
			wopts.Applier = app
		}
		if ext, err = extwatch.Start(ds, o.c, wopts); err != nil {
			log.Warn("cannot watch the store for external changes", "err", err)
		}
	}
	stopExternal := func() {
		if ext != nil {
			ext.Close()
			ext = nil
		}
		if app != nil {
			app.stop()
			app = nil
		}
	}
	defer stopExternal()
	indexed, loaded, _, _ := o.c.Counts()
	log.Info("mounted", "mountpoint", mnt, "store", spec.String(), "keys", indexed, "loaded", loaded, "pid", os.Getpid())

	served := make(chan struct{})
	go func() {
		srv.Wait()
		close(served)
	}()
	var tick <-chan time.Time
	if iv := c.Duration("flush-interval"); iv > 0 {
		t := time.NewTicker(iv)
		defer t.Stop()
		tick = t.C
	}
	flush := func(why string) {
		defer announceFlush(o, log, c.App.ErrWriter, why)()
		if err := o.c.Flush(ctx); err != nil {
			log.Error("flush failed; data stays in memory and is retried", "why", why, "err", err)
		}
	}
	// retry is armed after a busy unmount: memfs tries again every few
	// seconds until the mountpoint is free, so one SIGTERM is enough.
	var retry <-chan time.Time
	var lastBusyLog time.Time
	unmount := func() bool {
		// External changes are followed until the unmount has succeeded
		// (stopExternal after the loop): a busy mountpoint may keep memfs
		// serving for long. The helper holds nothing open between requests.
		flush("unmount")
		err := unmountNow(mnt, srv)
		if err == nil {
			return true
		}
		if time.Since(lastBusyLog) > 30*time.Second {
			lastBusyLog = time.Now()
			log.Error("cannot unmount; still serving so that nothing is lost, and retrying: close what uses it",
				"mountpoint", mnt, "err", err, "users", strings.Join(mountUsers(mnt), ", "))
		}
		retry = time.After(2 * time.Second)
		return false
	}
serve:
	for {
		select {
		case <-tick:
			flush("interval")
		case sig := <-sigs:
			log.Info("signal: flushing and unmounting", "signal", sig.String())
			lastBusyLog = time.Time{}
			if unmount() {
				break serve
			}
		case <-retry:
			if unmount() {
				break serve
			}
		case <-served:
			log.Info("unmounted from outside", "mountpoint", mnt)
			break serve
		}
	}
	<-served
	stopExternal() // also after an unmount from outside: nothing may change the session now
	root.Close()
	return shutdown(ctx, o, log, c.App.ErrWriter)
}

// unmountNow unmounts mnt. As root it calls umount(2) itself, so that a
// busy mountpoint is reported as EBUSY (go-fuse would fall back to
// fusermount and report that instead); the serving loop then ends by itself.
func unmountNow(mnt string, srv interface{ Unmount() error }) error {
	err := syscall.Unmount(mnt, 0)
	if err == nil || errors.Is(err, syscall.EBUSY) {
		return err
	}
	return srv.Unmount()
}

// bigFlush is how many unflushed entries make a flush worth following.
const bigFlush = 2000

// announceFlush follows a flush of bigFlush entries or more (see
// followFlush) and returns what ends that (call it when the flush is
// over); a smaller flush is not worth a line.
func announceFlush(o *opened, log *slog.Logger, w io.Writer, why string) func() {
	_, _, dirty, removed := o.c.Counts()
	if n := dirty + removed; n >= bigFlush {
		return followFlush(log, w, why, n)
	}
	return func() {}
}

// followFlush logs a flush of n entries before it runs, shows it going on
// while it runs (on a terminal w, a spinner with the time spent; else a
// log line every progressEvery), and returns what logs its end, with its
// duration. A flush is one store call (one transaction on badger), with
// no steps to count.
func followFlush(log *slog.Logger, w io.Writer, why string, n int) func() {
	log.Info("flush: saving the unflushed changes", "why", why, "entries", n)
	start := time.Now()
	var bar *progressbar.ProgressBar
	every := progressEvery
	if isTerminal(w) {
		bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(fmt.Sprintf("flush: %s entries", humanize.Comma(int64(n)))),
			progressbar.OptionSpinnerType(14), progressbar.OptionSetElapsedTime(true),
			progressbar.OptionClearOnFinish(),
			// No ticking goroutine of the library's own (it reads the
			// bar's state without its lock: a data race): the spinner
			// turns on this function's ticks.
			progressbar.OptionSetSpinnerChangeInterval(0))
		every = 100 * time.Millisecond
	}
	stop := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if bar != nil {
					bar.Add(1) // the spinner turns; nothing is counted
				} else {
					log.Info("flush: still saving", "why", why, "entries", n, "for", time.Since(start).Round(time.Second))
				}
			}
		}
	}()
	return func() {
		close(stop)
		<-ended
		if bar != nil {
			bar.Finish()
		}
		log.Info("flush done", "why", why, "entries", n, "took", time.Since(start).Round(time.Millisecond))
	}
}

// shutdown makes the last flush. If the store still refuses, the dirty
// values go to a recovery directory, and the error names it.
func shutdown(ctx context.Context, o *opened, log *slog.Logger, w io.Writer) error {
	defer announceFlush(o, log, w, "final")()
	var err error
	for attempt := range 3 {
		if err = o.c.Flush(ctx); err == nil {
			break
		}
		log.Error("final flush failed", "attempt", attempt+1, "err", err)
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	if err == nil && o.readOnly {
		return o.close() // the journal stays for the next writable session
	}
	if err == nil {
		if jerr := o.journal.Reset(); jerr != nil {
			log.Warn("journal reset failed; it will be replayed (harmlessly) at the next mount", "err", jerr)
		}
		return o.close()
	}
	dir, rerr := writeRecovery(o.c.DirtyEntries())
	o.close() // the journal keeps the closed files as well
	if rerr != nil {
		return fmt.Errorf("final flush failed (%v) and the recovery directory could not be written (%v); the journal %s still holds every closed file",
			err, rerr, o.spec.journalPath())
	}
	return fmt.Errorf("final flush failed: %v\n  the unsaved values were written to %s (and stay in the journal %s)", err, dir, o.spec.journalPath())
}

// writeRecovery writes entries as plain files under a new directory in the
// state directory and returns it. The values are already redacted.
func writeRecovery(entries []backend.Entry) (string, error) {
	dir := filepath.Join(stateDir(), "recovery", time.Now().UTC().Format("20060102T150405Z")+fmt.Sprintf("-%d", os.Getpid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	var errs []error
	for _, e := range entries {
		if d := filepath.Dir(e.Key); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := root.WriteFile(e.Key, e.Value, 0o600); err != nil {
			errs = append(errs, err)
			continue
		}
		// The attributes go with the value, so that memfs import brings
		// both back; a filesystem without them loses only them.
		if err := setFileXAttrs(filepath.Join(dir, e.Key), e.Info.XAttrs); err != nil {
			errs = append(errs, err)
		}
	}
	return dir, errors.Join(errs...)
}

// mountUsers lists the processes with a working directory or an open file
// under mnt, as "PID (command)".
func mountUsers(mnt string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var users []string
	for _, p := range procs {
		if using(p, mnt) {
			comm, _ := os.ReadFile(filepath.Join(p, "comm"))
			users = append(users, fmt.Sprintf("%s (%s)", filepath.Base(p), strings.TrimSpace(string(comm))))
		}
	}
	return users
}

func using(proc, mnt string) bool {
	if cwd, err := os.Readlink(filepath.Join(proc, "cwd")); err == nil && within(cwd, mnt) {
		return true
	}
	fds, _ := os.ReadDir(filepath.Join(proc, "fd"))
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(proc, "fd", fd.Name())); err == nil && within(target, mnt) {
			return true
		}
	}
	return false
}

func unmountCommand() *cli.Command {
	return &cli.Command{
		Name:      "unmount",
		Aliases:   []string{"umount"},
		Usage:     "flush through the running memfs, then unmount MOUNTPOINT",
		ArgsUsage: "MOUNTPOINT",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "how long to wait for the flush and unmount (more than 0)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("unmount: want exactly one MOUNTPOINT")
			}
			mnt, err := filepath.Abs(c.Args().First())
			if err != nil {
				return err
			}
			return unmount(c, mnt, c.Duration("timeout"))
		},
	}
}

func unmount(c *cli.Context, mnt string, timeout time.Duration) error {
	if !isMounted(mnt) {
		return fmt.Errorf("%s is not mounted", mnt)
	}
	status, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status"))
	if err != nil {
		// The serving process is gone (ENOTCONN), or cannot answer:
		// nothing to flush here; its journal is replayed at the next
		// mount. Requests still waiting on the mount fail at once.
		if aerr := abortConnection(mnt); aerr != nil {
			fmt.Fprintf(c.App.ErrWriter, "%s: %v\n", mnt, aerr)
		}
		if derr := syscall.Unmount(mnt, syscall.MNT_DETACH); derr != nil {
			return fmt.Errorf("%s: memfs does not answer (%v) and the unmount failed: %w", mnt, err, derr)
		}
		fmt.Fprintf(c.App.Writer, "%s: the memfs process was gone; detached the dead mount. Mount the store again to replay its journal.\n", mnt)
		return nil
	}
	pid := 0
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "pid: "); ok {
			fmt.Sscan(v, &pid)
		}
	}
	if pid <= 0 {
		return fmt.Errorf("%s: .memfs/status names no pid; is this a memfs mount?", mnt)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal memfs process %d: %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !isMounted(mnt) {
			// Wait for the process to finish its last flush and exit.
			for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil {
				time.Sleep(20 * time.Millisecond)
			}
			fmt.Fprintf(c.App.Writer, "%s: flushed and unmounted\n", mnt)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s is still mounted after %v: is it busy? in use by: %s (see the memfs log of process %d)",
		mnt, timeout, strings.Join(mountUsers(mnt), ", "), pid)
}

// isMounted reports whether mnt is a mountpoint, from /proc/self/mountinfo.
func isMounted(mnt string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMount(f[4]) == mnt {
			return true
		}
	}
	return false
}

// unescapeMount undoes the octal escapes of mountinfo (\040 for space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
