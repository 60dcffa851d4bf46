// Package mounthelper is memfs's side of mount(8) and umount(8) for file
// system type fuse.memfs: it reads their argument shapes, maps mount
// options to "memfs mount" arguments, starts that mount in the background
// and waits until it serves, and on unmount waits until memfs has made
// its last flush and exited. The command (cmd/memfs) defines the
// mount-helper and umount-helper commands over it.
//
// How mount(8) reaches memfs, measured on Debian 12 (util-linux 2.38.1,
// fuse3 3.14.0), for "mount -t fuse.memfs SOURCE DIR" and the fstab line
// "SOURCE DIR fuse.memfs OPTIONS 0 0":
//
//   - If /sbin/mount.fuse.memfs (or /usr/sbin/...; /usr/local/sbin is not
//     searched) exists, mount(8) runs it as
//     "/sbin/mount.fuse.memfs SOURCE DIR [-sfnv] -o OPTIONS", options
//     unfiltered (rw, noexec, nosuid, nodev, _netdev, user...).
//   - Otherwise it runs /sbin/mount.fuse (fuse3's mount.fuse3), which runs
//     "/bin/sh -c 'exec memfs SOURCE DIR -o OPTIONS'" with a fixed PATH
//     (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin, not
//     the caller's), after removing the options it handles itself (user,
//     _netdev, nofail, setuid=...) and adding dev,suid when not given.
//
// Both wait for the program to exit and report its status, so the helper
// must return once the file system is mounted: Start runs "memfs mount"
// in the background and waits until that process answers in the mount.
//
// # Concurrency
//
// The functions are safe for concurrent use; Start and ProcessGone block
// until their wait ends.
package mounthelper

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memfs/memfs/internal/cliargs"
	"github.com/memfs/memfs/internal/sdnotify"
	"github.com/memfs/memfs/mountclient"
)

// Name is the name mount(8) looks for, for file system type fuse.memfs.
const Name = "mount.fuse.memfs"

// UmountName is what umount(8) runs for type fuse.memfs, as
// "/sbin/umount.fuse.memfs DIR [-flnrv]" (measured as above).
const UmountName = "umount.fuse.memfs"

// MinWait is the least a command waits for memfs to flush, unmount or
// serve (unmount --timeout, the timeout= mount option): the last flush of
// even a small session needs a round trip to the store, and a shorter
// wait gives up before it could end (then reports a failure that is not).
const MinWait = time.Second

// Args rewrites the two argument shapes mount(8) uses into
// "memfs mount-helper [FLAGS] SOURCE DIR", and umount(8)'s
// "umount.fuse.memfs DIR [FLAGS]" into "memfs umount-helper [FLAGS] DIR";
// other arguments are returned as they are. The second mount shape is
// recognised by a SOURCE that names a local store (isStore) or by "-o"
// after SOURCE DIR, never by a command's name (isCommand).
func Args(args []string, isCommand, isStore func(string) bool) []string {
	if len(args) >= 2 && filepath.Base(args[0]) == UmountName {
		out := []string{args[0], "umount-helper"}
		out = append(out, args[2:]...)
		return append(out, args[1])
	}
	if len(args) < 3 {
		return args
	}
	if filepath.Base(args[0]) != Name {
		src := args[1]
		if isCommand(src) || strings.HasPrefix(src, "-") {
			return args
		}
		if !isStore(src) && !(len(args) > 3 && strings.HasPrefix(args[3], "-o")) {
			return args
		}
	}
	out := []string{args[0], "mount-helper"}
	out = append(out, args[3:]...)
	return append(out, args[1], args[2])
}

// Plan is what a mount through mount(8) will run.
type Plan struct {
	MountArgs []string      // the memfs arguments, "mount" first, the mountpoint last
	LogPath   string        // where the serving process logs
	Timeout   time.Duration // how long to wait for the mount to answer
	Ignored   []string      // unknown options left out (mount -s)
	Dir       string        // the working directory of the serving process ("": the caller's)
	Point     string        // the mountpoint, when MountArgs do not end with it
}

// Mountpoint is the mountpoint the plan mounts.
func (p Plan) Mountpoint() string {
	if p.Point != "" {
		return p.Point
	}
	return p.MountArgs[len(p.MountArgs)-1]
}

// PlanOptions says what PlanMount knows of memfs.
type PlanOptions struct {
	// Mount is "memfs mount" as cliargs knows it: an option names one of
	// its flags, a boolean one (a flag without a value) as a bare option.
	Mount *cliargs.Command
	// Store parses a store spec and returns it in canonical form.
	Store func(spec string) (string, error)
	// StateDir is memfs's state directory, where a user's mount logs.
	StateDir string
	// Sloppy (mount -s) leaves unknown options out, listed in
	// Plan.Ignored, instead of failing.
	Sloppy bool
	// Check, when set, refuses "memfs mount" arguments (Plan.MountArgs)
	// before anything starts: an option's value out of its range.
	Check func(mountArgs []string) error
}

// MountHelp is memfs mount-helper's help text: the options PlanMount
// takes, for the stores (their forms) a SOURCE names.
func MountHelp(stores string) string {
	return "Run by mount -t fuse.memfs and /etc/fstab through /sbin/" + Name + " or mount.fuse3.\n" +
		"SOURCE is the store (" + stores + "), or any word (memfs) with -o store=SPEC.\n" +
		"Options: ro, rw, allow_other, store=, log=FILE, timeout=DURATION, and every memfs mount flag\n" +
		"as NAME=VALUE or NAME (flush_interval=10s, bootstrap=memory/ repeated for more prefixes,\n" +
		"noxattrs for --xattrs=false); the generic options mount passes (defaults, dev, suid, exec,\n" +
		"auto, user, _netdev, nofail, atime, x-systemd.*, ...) are accepted and ignored."
}

// ignoredOptions are options mount(8) and fuse pass that mean nothing to
// memfs (the kernel's flags for FUSE are set by memfs itself).
var ignoredOptions = []string{
	"rw", "defaults", "dev", "nodev", "suid", "nosuid", "exec",
	"auto", "noauto", "user", "nouser", "users", "owner", "group", "_netdev",
	"nofail", "async", "sync", "atime", "noatime", "relatime", "norelatime",
	"strictatime", "nostrictatime", "diratime", "nodiratime", "lazytime",
	"nolazytime", "loud", "silent", "default_permissions", "auto_unmount",
}

// PlanMount maps SOURCE, DIR and -o options to "memfs mount" arguments.
// memfs mount flags are found by name (o.Mount), so that a new mount flag
// is an option too. An unknown option is an error, or with o.Sloppy is
// left out and listed in Plan.Ignored.
func PlanMount(source, mnt string, opts []string, o PlanOptions) (Plan, error) {
	p := Plan{Timeout: 2 * time.Minute, Dir: "/"}
	store := source
	var flags []string
	for _, opt := range opts {
		if opt == "" {
			continue
		}
		name, value, hasValue := strings.Cut(opt, "=")
		switch {
		case slices.Contains(ignoredOptions, name),
			strings.HasPrefix(name, "x-"), name == "comment", name == "fsname", name == "subtype":
			continue
		case name == "ro":
			flags = append(flags, "--read-only")
			continue
		case name == "store":
			store = value
			continue
		case name == "log":
			p.LogPath = value
			continue
		case name == "timeout":
			d, err := time.ParseDuration(value)
			if err != nil || d < MinWait {
				return p, fmt.Errorf("option timeout=%s: want a duration of at least %v, such as 2m", value, MinWait)
			}
			p.Timeout = d
			continue
		case name == "noexec":
			// Never dropped without a word: the mount would run programs
			// the fstab line says it must not.
			return p, errors.New("option noexec: memfs mounts cannot refuse to execute files; remove it, or keep executables out of the memory")
		case name == "noxattrs":
			flags = append(flags, "--xattrs=false")
			continue
		default:
			flag := strings.ReplaceAll(name, "_", "-")
			if f := o.Mount.Flag(flag); f != nil {
				switch {
				case !f.Value && !hasValue:
					flags = append(flags, "--"+flag)
				case !hasValue:
					return p, fmt.Errorf("option %s needs a value: %s=VALUE", name, name)
				default:
					flags = append(flags, "--"+flag+"="+value)
				}
				continue
			}
		}
		if o.Sloppy {
			p.Ignored = append(p.Ignored, opt)
			continue
		}
		return p, fmt.Errorf("unknown mount option %q; memfs takes ro, allow_other, store=, log=, timeout= and its mount flags (memfs mount --help) as NAME=VALUE", opt)
	}
	spec, err := o.Store(store)
	if err != nil {
		return p, fmt.Errorf("SOURCE %q (or -o store=SPEC): %w", store, err)
	}
	if !filepath.IsAbs(mnt) {
		return p, fmt.Errorf("mountpoint %q: want an absolute path", mnt)
	}
	if p.LogPath == "" {
		p.LogPath = LogPath(mnt, o.StateDir)
	}
	p.MountArgs = append([]string{"mount", "--store", spec}, flags...)
	p.MountArgs = append(p.MountArgs, mnt)
	return p, nil
}

// LogPath is where a mount started by mount(8) logs: root's under
// /var/log/memfs (at boot there is no HOME), a user's under stateDir/log;
// one file per mountpoint, appended to.
func LogPath(mnt, stateDir string) string {
	name := strings.ReplaceAll(strings.Trim(mnt, "/"), "/", "-")
	if name == "" {
		name = "root"
	}
	if os.Geteuid() == 0 {
		return filepath.Join("/var/log/memfs", name+".log")
	}
	return filepath.Join(stateDir, "log", name+".log")
}

// Mount is what mount(8) runs: it plans the mount of source on mnt with
// the -o options opts (each value of -o a comma-separated list), says on
// errw which options sloppy left out, on w the "memfs mount" it makes when
// verbose or fake (mount -f: nothing starts), and otherwise starts this
// program's own binary serving the mount (Start) and says which process
// serves it.
func Mount(source, mnt string, opts []string, o PlanOptions, verbose, fake bool, w, errw io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("mount-helper: cannot find the memfs binary: %w", err)
	}
	p, err := PlanMount(source, mnt, strings.Split(strings.Join(opts, ","), ","), o)
	if err == nil && o.Check != nil {
		err = o.Check(p.MountArgs)
	}
	if err != nil {
		return err
	}
	if len(p.Ignored) > 0 {
		fmt.Fprintf(errw, "memfs: ignoring unknown mount options (sloppy): %s\n", strings.Join(p.Ignored, ","))
	}
	if verbose || fake {
		fmt.Fprintf(w, "memfs %s (log: %s)\n", strings.Join(p.MountArgs, " "), p.LogPath)
	}
	if fake {
		return nil
	}
	pid, err := Start(self, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "memfs: serving %s as process %d, logging to %s\n", p.Mountpoint(), pid, p.LogPath)
	return nil
}

// DetachedEnv is set in the environment of a process Start started:
// memfs mount --daemon there serves in the foreground (it is the
// detached process).
const DetachedEnv = "MEMFS_DETACHED"

// Detached reports whether this process is one Start started.
func Detached() bool { return os.Getenv(DetachedEnv) == "1" }

// OpenLog opens the log file at path for appending, made 0600 (with its
// directory, 0700) when missing. It follows no symlink at path, and
// refuses anything but a regular file (a fifo would block the mount).
func OpenLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = fmt.Errorf("%s is a symlink: memfs follows none to its log; name the file itself", path)
		}
		return nil, fmt.Errorf("log: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("log: %s is not a regular file", path)
	}
	return f, nil
}

// Start starts "self p.MountArgs..." detached from the caller (its own
// session, stdin /dev/null, output appended to the log, in p.Dir) and
// waits until it notifies READY=1 (sdnotify, on a socket of Start's own)
// once its mount answers. If the process exits first, its STATUS= (the
// error it printed) or else its log lines are the error. A p.Timeout of
// 0 waits as long as it takes. It returns the serving process's pid.
func Start(self string, p Plan) (int, error) {
	logf, err := OpenLog(p.LogPath)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "--- %s memfs %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(p.MountArgs, " "))
	start, _ := logf.Seek(0, io.SeekCurrent)
	l, err := sdnotify.Listen()
	if err != nil {
		return 0, err
	}
	defer l.Close()

	cmd := exec.Command(self, p.MountArgs...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(withHome(os.Environ()), sdnotify.Socket+"="+l.Path(), DetachedEnv+"=1")
	cmd.Dir = p.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start memfs mount: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	mnt := p.Mountpoint()
	var deadline time.Time
	if p.Timeout > 0 {
		deadline = time.Now().Add(p.Timeout)
	}
	status := ""
	for {
		// What an exited process sent is queued on the socket: read
		// before the exit is looked at.
		st, err := l.Next(time.Now().Add(50 * time.Millisecond))
		if err == nil {
			if s, ok := st["STATUS"]; ok {
				status = s
			}
			if st["READY"] == "1" {
				return pid, nil
			}
			continue
		}
		select {
		case err := <-exited:
			if status == "" {
				status = "\n" + logSince(p.LogPath, start)
			}
			return 0, fmt.Errorf("memfs mount %s exited (%v) before serving: %s\n(log: %s)", mnt, err, status, p.LogPath)
		default:
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			// Not ready in time: leave nothing half-started behind.
			cmd.Process.Signal(syscall.SIGTERM)
			return 0, fmt.Errorf("memfs mount %s did not serve within %v (option timeout=); stopped process %d; log: %s", mnt, p.Timeout, pid, p.LogPath)
		}
	}
}

// Daemon is memfs mount --daemon: it starts the mount command args (os.Args[1:])
// again, detached (Start), in the caller's working directory, logging to
// logPath or else to LogPath's file, and returns once the mount at mnt
// answers: the line to print, or the mount's error.
func Daemon(args []string, mnt, logPath, stateDir string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if logPath == "" {
		logPath = LogPath(mnt, stateDir)
	}
	pid, err := Start(self, Plan{MountArgs: args, LogPath: logPath, Point: mnt})
	return fmt.Sprintf("memfs: serving %s as process %d, logging to %s", mnt, pid, logPath), err
}

// ServedBy returns the pid of the memfs process serving the live mount at
// mnt (mountclient.Open, of any user's), or 0.
func ServedBy(mnt string) int {
	c, err := mountclient.Open(mnt, mountclient.Any)
	if err != nil {
		return 0
	}
	return c.PID
}

// withHome gives the serving process a HOME: mount(8) at boot runs
// helpers without one, and memfs keeps its state under it.
func withHome(env []string) []string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HOME="); ok && v != "" {
			return env
		}
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		return append(env, "HOME="+u.HomeDir)
	}
	return env
}

// logSince returns what the log got from offset on, at most the last 4 KiB.
func logSince(path string, offset int64) string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return ""
	}
	data = data[offset:]
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	return string(data)
}

// Unmount unmounts mnt as umount(8) would (lazy: MNT_DETACH; force:
// MNT_FORCE); a caller who is not root has a user's FUSE mount unmounted
// by fusermount3.
func Unmount(mnt string, lazy, force bool) error {
	flags := 0
	if lazy {
		flags |= syscall.MNT_DETACH
	}
	if force {
		flags |= syscall.MNT_FORCE
	}
	err := syscall.Unmount(mnt, flags)
	if err == nil {
		return nil
	}
	if !errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("umount %s: %w", mnt, err)
	}
	args := []string{"-u", mnt}
	if lazy {
		args = []string{"-u", "-z", mnt}
	}
	if out, ferr := exec.Command("fusermount3", args...).CombinedOutput(); ferr != nil {
		return fmt.Errorf("umount %s: %v; fusermount3: %v: %s", mnt, err, ferr, out)
	}
	return nil
}

// ProcessGone waits up to limit for pid to exit and reports whether it
// did. A zombie counts as gone: it holds nothing any more, and the process
// that reaps it (init, for a mount started by the helper) may be slow.
func ProcessGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
			// pid (comm) STATE ...; comm may hold spaces and parentheses.
			if i := strings.LastIndexByte(string(st), ')'); i >= 0 && strings.HasPrefix(string(st[i:]), ") Z") {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Umount is what umount(8) runs: UnmountAndWait of mnt, made absolute,
// and when verbose, on w, which memfs process flushed and exited (not
// waited for when lazy, nor for a dead mount).
func Umount(w io.Writer, mnt string, lazy, force, verbose bool, limit time.Duration) error {
	mnt, err := filepath.Abs(mnt)
	if err != nil {
		return err
	}
	pid, err := UnmountAndWait(mnt, lazy, force, limit)
	if err != nil || pid <= 0 || lazy {
		return err
	}
	if verbose {
		fmt.Fprintf(w, "%s: unmounted; memfs process %d flushed and exited\n", mnt, pid)
	}
	return nil
}

// UnmountAndWait is umount(8)'s helper: it unmounts mnt (Unmount), then,
// unless lazy, waits up to limit for the memfs process that served it to
// make its last flush and exit. It returns that process's pid (0 for a
// dead mount: nothing to wait for).
func UnmountAndWait(mnt string, lazy, force bool, limit time.Duration) (int, error) {
	pid := ServedBy(mnt)
	if err := Unmount(mnt, lazy, force); err != nil {
		return 0, err
	}
	if pid <= 0 || lazy {
		return pid, nil
	}
	if !ProcessGone(pid, limit) {
		return pid, fmt.Errorf("%s is unmounted, but memfs (process %d) has not finished its last flush after %v; see its log", mnt, pid, limit)
	}
	return pid, nil
}
