package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A mount is one memfs mount process this program started.
type mount struct {
	dir  string // the mountpoint
	log  string // its output
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done is closed
}

var (
	mu     sync.Mutex // guards mounts
	mounts = map[*mount]bool{}

	pinCPU string // the CPUs the mounts started run on (taskset -c), "" for any
)

// env is the mounts' environment: memfs's state, config and data under
// the work directory, not root's home.
func env(work string) []string {
	e := os.Environ()
	for _, v := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"} {
		e = append(e, v+"="+filepath.Join(work, "xdg", strings.ToLower(v)))
	}
	return e
}

// start runs `bin mount args... dir` and waits until .memfs/status names
// its PID; it returns the time from the start until then.
func start(work, bin, dir string, args ...string) (*mount, time.Duration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, 0, err
	}
	m := &mount{dir: dir, log: dir + ".log", done: make(chan struct{})}
	lf, err := os.Create(m.log)
	if err != nil {
		return nil, 0, err
	}
	argv := append(append([]string{bin, "mount"}, args...), dir)
	if pinCPU != "" {
		// taskset execs memfs: the PID stays the mount's.
		argv = append([]string{"taskset", "-c", pinCPU}, argv...)
	}
	m.cmd = exec.Command(argv[0], argv[1:]...)
	m.cmd.Stdout, m.cmd.Stderr, m.cmd.Env = lf, lf, env(work)
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	t0 := time.Now()
	if err := m.cmd.Start(); err != nil {
		lf.Close()
		return nil, 0, err
	}
	mu.Lock()
	mounts[m] = true
	mu.Unlock()
	go func() {
		m.err = m.cmd.Wait()
		lf.Close()
		close(m.done)
	}()
	want := []byte(fmt.Sprintf("pid: %d\n", m.cmd.Process.Pid))
	for {
		if b, err := os.ReadFile(filepath.Join(dir, ".memfs", "status")); err == nil && bytes.Contains(b, want) {
			return m, time.Since(t0), nil
		}
		select {
		case <-m.done:
			return nil, 0, fmt.Errorf("memfs mount %s exited (%v):\n%s", dir, m.err, tail(m.log))
		case <-time.After(time.Millisecond):
		}
	}
}

func (m *mount) pid() int { return m.cmd.Process.Pid }

// stop sends SIGTERM (memfs flushes and unmounts), then SIGKILL after
// timeout, and unmounts what is left.
func (m *mount) stop(timeout time.Duration) error {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case <-m.done:
		if m.err != nil {
			err = fmt.Errorf("memfs mount %s: %v:\n%s", m.dir, m.err, tail(m.log))
		}
	case <-time.After(timeout):
		_ = m.cmd.Process.Kill()
		<-m.done
		err = fmt.Errorf("memfs mount %s: killed after %v", m.dir, timeout)
	}
	if mounted(m.dir) {
		_ = exec.Command("fusermount3", "-u", "-z", m.dir).Run()
	}
	mu.Lock()
	delete(mounts, m)
	mu.Unlock()
	return err
}

// stopAll stops every mount still running.
func stopAll() {
	mu.Lock()
	all := make([]*mount, 0, len(mounts))
	for m := range mounts {
		all = append(all, m)
	}
	mu.Unlock()
	for _, m := range all {
		_ = m.stop(30 * time.Second)
	}
}

// mounted reports whether dir is a mountpoint in /proc/self/mountinfo.
func mounted(dir string) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fs := strings.Fields(s.Text()); len(fs) > 4 && fs[4] == dir {
			return true
		}
	}
	return false
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// cpu is the CPU time the process pid has run, every thread's
// (/proc/PID/task/*/schedstat: nanoseconds on a CPU).
func cpu(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			ns += n
		}
	}
	return time.Duration(ns)
}

// memMiB is the field (VmRSS, VmHWM) of the process's status in MiB.
func memMiB(pid int, field string) float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// runCmd runs a command, returning its output in the error.
func runCmd(work, name string, args ...string) error {
	c := exec.Command(name, args...)
	c.Env = env(work)
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
