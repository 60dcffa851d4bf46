package main

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

	"github.com/memfs/memfs/mountclient"
	"github.com/urfave/cli/v2"
)

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
// must return once the file system is mounted: it starts "memfs mount" in
// the background and waits until that process answers in the mount.

// helperName is the name mount(8) looks for, for file system type fuse.memfs.
const helperName = "mount.fuse.memfs"

// helperArgs rewrites the two argument shapes mount(8) uses into
// "memfs mount-helper [FLAGS] SOURCE DIR", and umount(8)'s
// "umount.fuse.memfs DIR [FLAGS]" into "memfs umount-helper [FLAGS] DIR";
// other arguments are returned as they are. The second mount shape is
// recognised by a SOURCE that names a store (badger:PATH, dir:PATH) or by
// "-o" after SOURCE DIR, never by a command's name.
func helperArgs(args []string, commands []*cli.Command) []string {
	if len(args) >= 2 && filepath.Base(args[0]) == umountHelperName {
		out := []string{args[0], "umount-helper"}
		out = append(out, args[2:]...)
		return append(out, args[1])
	}
	if len(args) < 3 {
		return args
	}
	if filepath.Base(args[0]) != helperName {
		src := args[1]
		if isCommand(commands, src) || strings.HasPrefix(src, "-") {
			return args
		}
		kind, _, _ := strings.Cut(src, ":")
		if kind != "badger" && kind != "dir" && !(len(args) > 3 && strings.HasPrefix(args[3], "-o")) {
			return args
		}
	}
	out := []string{args[0], "mount-helper"}
	out = append(out, args[3:]...)
	return append(out, args[1], args[2])
}

func isCommand(commands []*cli.Command, name string) bool {
	for _, c := range commands {
		if slices.Contains(c.Names(), name) {
			return true
		}
	}
	return name == "help" || name == "h"
}

func mountHelperCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount-helper",
		Usage:     "what mount(8) runs for type fuse.memfs: start memfs mount in the background and wait until it serves",
		ArgsUsage: "SOURCE MOUNTPOINT",
		Hidden:    true,
		Description: "Run by mount -t fuse.memfs and /etc/fstab through /sbin/mount.fuse.memfs or mount.fuse3.\n" +
			"SOURCE is the store (badger:PATH or dir:PATH), or any word (memfs) with -o store=badger:PATH.\n" +
			"Options: ro, rw, allow_other, store=, log=FILE, timeout=DURATION, and every memfs mount flag\n" +
			"as NAME=VALUE or NAME (flush_interval=10s, bootstrap=memory/ repeated for more prefixes,\n" +
			"noxattrs for --xattrs=false); the generic options mount passes (defaults, dev, suid, exec,\n" +
			"auto, user, _netdev, nofail, atime, x-systemd.*, ...) are accepted and ignored.",
		UseShortOptionHandling: true,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "o", Usage: "mount options, comma-separated"},
			&cli.BoolFlag{Name: "s", Usage: "sloppy: ignore unknown options (with a warning) instead of failing"},
			&cli.BoolFlag{Name: "f", Usage: "fake: check the options and do not mount"},
			&cli.BoolFlag{Name: "n", Usage: "no mtab (ignored)"},
			&cli.BoolFlag{Name: "v", Usage: "verbose: print the memfs mount command"},
		},
		Action: mountHelperAction,
	}
}

// helperPlan is what a mount through mount(8) will run.
type helperPlan struct {
	mountArgs []string      // the memfs arguments, "mount" first
	logPath   string        // where the serving process logs
	timeout   time.Duration // how long to wait for the mount to answer
	ignored   []string      // unknown options left out (mount -s)
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

// planMount maps SOURCE, DIR and -o options to "memfs mount" arguments.
// memfs mount flags are found by name in mountFlags, so that a new mount
// flag is an option too. An unknown option is an error, or with sloppy
// (mount -s) is left out and listed in p.ignored.
func planMount(source, mnt string, opts []string, mountFlags []cli.Flag, sloppy bool) (helperPlan, error) {
	p := helperPlan{timeout: 2 * time.Minute}
	store := source
	var flags []string
	for _, o := range opts {
		if o == "" {
			continue
		}
		name, value, hasValue := strings.Cut(o, "=")
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
			p.logPath = value
			continue
		case name == "timeout":
			d, err := time.ParseDuration(value)
			if err != nil || d < minWait {
				return p, fmt.Errorf("option timeout=%s: want a duration of at least %v, such as 2m", value, minWait)
			}
			p.timeout = d
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
			if f := findFlag(mountFlags, flag); f != nil {
				if _, isBool := f.(*cli.BoolFlag); isBool && !hasValue {
					flags = append(flags, "--"+flag)
				} else if !hasValue {
					return p, fmt.Errorf("option %s needs a value: %s=VALUE", name, name)
				} else {
					flags = append(flags, "--"+flag+"="+value)
				}
				continue
			}
		}
		if sloppy {
			p.ignored = append(p.ignored, o)
			continue
		}
		return p, fmt.Errorf("unknown mount option %q; memfs takes ro, allow_other, store=, log=, timeout= and its mount flags (memfs mount --help) as NAME=VALUE", o)
	}
	spec, err := parseStore(store)
	if err != nil {
		return p, fmt.Errorf("SOURCE %q: want badger:PATH or dir:PATH (or -o store=badger:PATH): %w", store, err)
	}
	if !filepath.IsAbs(mnt) {
		return p, fmt.Errorf("mountpoint %q: want an absolute path", mnt)
	}
	if p.logPath == "" {
		p.logPath = helperLogPath(mnt)
	}
	p.mountArgs = append([]string{"mount", "--store", spec.String()}, flags...)
	p.mountArgs = append(p.mountArgs, mnt)
	return p, nil
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// helperLogPath is where a mount started by mount(8) logs: root's under
// /var/log/memfs (at boot there is no HOME), a user's in memfs's state
// directory; one file per mountpoint, appended to.
func helperLogPath(mnt string) string {
	name := strings.ReplaceAll(strings.Trim(mnt, "/"), "/", "-")
	if name == "" {
		name = "root"
	}
	if os.Geteuid() == 0 {
		return filepath.Join("/var/log/memfs", name+".log")
	}
	return filepath.Join(stateDir(), "log", name+".log")
}

func mountHelperAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return fmt.Errorf("mount-helper: want SOURCE MOUNTPOINT, got %d arguments", c.NArg())
	}
	var opts []string
	for _, o := range c.StringSlice("o") {
		opts = append(opts, strings.Split(o, ",")...)
	}
	p, err := planMount(c.Args().Get(0), c.Args().Get(1), opts, mountCommand().Flags, c.Bool("s"))
	if err != nil {
		return err
	}
	if len(p.ignored) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "memfs: ignoring unknown mount options (sloppy): %s\n", strings.Join(p.ignored, ","))
	}
	if c.Bool("v") || c.Bool("f") {
		fmt.Fprintf(c.App.Writer, "memfs %s (log: %s)\n", strings.Join(p.mountArgs, " "), p.logPath)
	}
	if c.Bool("f") {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("mount-helper: cannot find the memfs binary: %w", err)
	}
	pid, err := startBackground(self, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "memfs: serving %s as process %d, logging to %s\n", p.mountArgs[len(p.mountArgs)-1], pid, p.logPath)
	return nil
}

// startBackground starts "memfs mount" detached from the caller (its own
// session, stdin /dev/null, output appended to the log) and waits until
// the mount's .memfs/status names it. If the process exits first, its
// log lines are the error. It returns the serving process's pid.
func startBackground(self string, p helperPlan) (int, error) {
	if err := os.MkdirAll(filepath.Dir(p.logPath), 0o700); err != nil {
		return 0, fmt.Errorf("log directory: %w", err)
	}
	logf, err := os.OpenFile(p.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return 0, fmt.Errorf("log: %w", err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "--- %s memfs %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(p.mountArgs, " "))
	start, _ := logf.Seek(0, io.SeekCurrent)

	cmd := exec.Command(self, p.mountArgs...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = helperEnv(os.Environ())
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start memfs mount: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	mnt := p.mountArgs[len(p.mountArgs)-1]
	deadline := time.Now().Add(p.timeout)
	for {
		if servedBy(mnt) == pid {
			return pid, nil
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("memfs mount %s exited (%v) before serving:\n%s(log: %s)", mnt, err, logSince(p.logPath, start), p.logPath)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			// Not ready in time: leave nothing half-started behind.
			cmd.Process.Signal(syscall.SIGTERM)
			return 0, fmt.Errorf("memfs mount %s did not serve within %v (option timeout=); stopped process %d; log: %s", mnt, p.timeout, pid, p.logPath)
		}
	}
}

// servedBy returns the pid of the memfs process serving the live mount at
// mnt (mountclient.Open, of any user's), or 0.
func servedBy(mnt string) int {
	c, err := mountclient.Open(mnt, mountclient.Any)
	if err != nil {
		return 0
	}
	return c.PID
}

// helperEnv gives the serving process a HOME: mount(8) at boot runs
// helpers without one, and memfs keeps its state under it.
func helperEnv(env []string) []string {
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

// umountHelperName is what umount(8) runs for type fuse.memfs, as
// "/sbin/umount.fuse.memfs DIR [-flnrv]" (measured as above).
const umountHelperName = "umount.fuse.memfs"

func umountHelperCommand() *cli.Command {
	return &cli.Command{
		Name:      "umount-helper",
		Usage:     "what umount(8) runs for type fuse.memfs: unmount, then wait until memfs has flushed and exited",
		ArgsUsage: "MOUNTPOINT",
		Hidden:    true,
		Description: "Unmounts as umount(8) would (a busy mount fails at once with EBUSY, as always), then waits\n" +
			"for the memfs process that served it to make its last flush and exit, so that when umount\n" +
			"returns the store is written and free (systemd stops an fstab mount with umount, then\n" +
			"kills what is left of it).",
		UseShortOptionHandling: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "l", Usage: "lazy: detach now, memfs finishes when the last user is gone (not waited for)"},
			&cli.BoolFlag{Name: "f", Usage: "force"},
			&cli.BoolFlag{Name: "n", Usage: "no mtab (ignored)"},
			&cli.BoolFlag{Name: "r", Usage: "remount read-only on failure (ignored)"},
			&cli.BoolFlag{Name: "v", Usage: "verbose"},
			&cli.StringFlag{Name: "t", Usage: "type (ignored)"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "how long to wait for memfs to exit (at least 1s)"},
		},
		Action: umountHelperAction,
	}
}

func umountHelperAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("umount-helper: want MOUNTPOINT, got %d arguments", c.NArg())
	}
	mnt, err := filepath.Abs(c.Args().First())
	if err != nil {
		return err
	}
	pid := servedBy(mnt) // 0 for a dead mount: nothing to wait for
	flags := 0
	if c.Bool("l") {
		flags |= syscall.MNT_DETACH
	}
	if c.Bool("f") {
		flags |= syscall.MNT_FORCE
	}
	if err := syscall.Unmount(mnt, flags); err != nil {
		if !errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("umount %s: %w", mnt, err)
		}
		// Not root: a user's FUSE mount is unmounted by fusermount3.
		args := []string{"-u", mnt}
		if c.Bool("l") {
			args = []string{"-u", "-z", mnt}
		}
		if out, ferr := exec.Command("fusermount3", args...).CombinedOutput(); ferr != nil {
			return fmt.Errorf("umount %s: %v; fusermount3: %v: %s", mnt, err, ferr, out)
		}
	}
	if pid <= 0 || c.Bool("l") {
		return nil
	}
	if !processGone(pid, c.Duration("timeout")) {
		return fmt.Errorf("%s is unmounted, but memfs (process %d) has not finished its last flush after %v; see its log", mnt, pid, c.Duration("timeout"))
	}
	if c.Bool("v") {
		fmt.Fprintf(c.App.Writer, "%s: unmounted; memfs process %d flushed and exited\n", mnt, pid)
	}
	return nil
}

// processGone waits up to limit for pid to exit and reports whether it
// did. A zombie counts as gone: it holds nothing any more, and the process
// that reaps it (init, for a mount started by the helper) may be slow.
func processGone(pid int, limit time.Duration) bool {
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
