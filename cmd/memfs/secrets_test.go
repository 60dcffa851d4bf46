package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/testcorpus"
)

// These tests attack the promise that no secret ever reaches disk: they
// write secrets the way processes do (split over appends, line by line,
// held open across flushes, in names and attributes), kill memfs or let it
// flush, and then read every byte memfs could have left anywhere — store,
// journal, state and recovery directories, temp files, file names and
// extended attributes — looking for any 12 bytes of any secret.

// minLeak is the shortest piece of a secret that counts as a leak.
const minLeak = 12

// secretCorpus reads the project's corpus (testdata/secrets/secrets.txt).
func secretCorpus(t *testing.T) []testcorpus.Secret {
	t.Helper()
	c, err := testcorpus.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	if len(c) < 150 {
		t.Fatalf("the corpus has %d secrets", len(c))
	}
	return c
}

// leakScanner finds any minLeak-byte window of any secret in raw bytes.
type leakScanner struct {
	windows map[string]int // window -> index of the secret it comes from
	secrets []string
}

func newLeakScanner(secrets []string) *leakScanner {
	s := &leakScanner{windows: make(map[string]int), secrets: secrets}
	for i, sec := range secrets {
		for line := range strings.SplitSeq(sec, "\n") {
			if strings.HasPrefix(line, "-----") {
				continue // PEM armour lines are no secret; their base64 is
			}
			for j := 0; j+minLeak <= len(line); j++ {
				s.windows[line[j:j+minLeak]] = i
			}
		}
	}
	return s
}

// find returns the secret a window of b comes from, or -1.
func (s *leakScanner) find(b []byte) int {
	for j := 0; j+minLeak <= len(b); j++ {
		if i, ok := s.windows[string(b[j:j+minLeak])]; ok {
			return i
		}
	}
	return -1
}

// scanTree reports every file under root whose bytes, name or extended
// attributes (names and values) hold a piece of a secret.
func (s *leakScanner) scanTree(t *testing.T, root string) {
	t.Helper()
	leaks := 0
	report := func(where string, i int) {
		if leaks++; leaks <= 10 {
			t.Errorf("%s holds a piece of secret %d (%.12s...)", where, i, s.secrets[i])
		}
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if i := s.find([]byte(d.Name())); i >= 0 {
			report("the name of "+path, i)
		}
		s.scanXAttrs(path, report)
		if !d.Type().IsRegular() {
			return nil
		}
		// A window that spans a hole holds zeros: no secret does.
		return forData(path, func(_ int64, b []byte) error {
			if i := s.find(b); i >= 0 {
				report(path, i)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatalf("scan %s: %v", root, err)
	}
	if leaks > 0 {
		t.Fatalf("%d places under %s hold a secret", leaks, root)
	}
}

func (s *leakScanner) scanXAttrs(path string, report func(string, int)) {
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(path, buf)
	if err != nil || n == 0 {
		return
	}
	for name := range strings.SplitSeq(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if i := s.find([]byte(name)); i >= 0 {
			report("xattr name on "+path, i)
		}
		v := make([]byte, 64<<10)
		m, err := unix.Lgetxattr(path, name, v)
		if err != nil {
			continue
		}
		if i := s.find(v[:m]); i >= 0 {
			report("xattr "+name+" on "+path, i)
		}
	}
}

// appendTo appends data to path with its own open and close, as
// `printf ... >> path` does.
func appendTo(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// crashEnv gives the memfs process its own state and temp directories, so
// that the scan covers everything it could write.
func crashEnv(t *testing.T) (env []string, dirs []string) {
	state, tmp := t.TempDir(), t.TempDir()
	return []string{"XDG_STATE_HOME=" + state, "TMPDIR=" + tmp}, []string{state, tmp}
}

// TestNoSecretOnDiskAfterSplitAppendsAndKill9: every secret of the corpus
// split at every byte offset across two appends, and every PEM block
// appended line by line (and left open), then kill -9 before any flush:
// nothing memfs wrote holds a piece of a secret, and after the replay
// every file is there, redacted.
func TestNoSecretOnDiskAfterSplitAppendsAndKill9(t *testing.T) {
	t.Parallel()
	if raceDetector {
		// 40 s without the race detector, 8 min with it. scripts/test.sh
		// runs this package again without it (GOMAXPROCS=1), where this
		// test runs; the code it drives is under -race in the others.
		t.Skip("skipped under -race (8 min); runs in scripts/test.sh's pass without the race detector")
	}
	corpus := secretCorpus(t)
	var secrets []string
	for _, s := range corpus {
		secrets = append(secrets, s.Value)
	}
	scan := newLeakScanner(secrets)
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newStore()
			mnt := t.TempDir()
			env, dirs := crashEnv(t)
			p := startMount(t, store, mnt, env)
			if err := os.MkdirAll(filepath.Join(mnt, "memory", "split"), 0o755); err != nil {
				t.Fatal(err)
			}
			type job struct {
				path    string
				parts   []string
				markers int // markers the file holds after the replay
			}
			var jobs []job
			for i, s := range corpus {
				v := s.Value
				if strings.Contains(v, "\n") {
					// A PEM block: line by line, once whole and once
					// left open before the kill.
					lines := strings.SplitAfter(v, "\n")
					jobs = append(jobs, job{fmt.Sprintf("%s/memory/split/s%03d-lines.md", mnt, i), append([]string{s.Prefix}, lines...), 1})
					open := lines[:len(lines)/2]
					jobs = append(jobs, job{fmt.Sprintf("%s/memory/split/s%03d-open.md", mnt, i), append([]string{s.Prefix}, open...), 1})
				}
				// Every byte offset: one file per secret, a line per
				// split, each line written by two appends split there.
				var parts []string
				for off := 1; off < len(v); off++ {
					parts = append(parts, s.Prefix+v[:off], v[off:]+s.Suffix+"\n")
				}
				jobs = append(jobs, job{fmt.Sprintf("%s/memory/split/s%03d-splits.md", mnt, i), parts, len(parts) / 2})
			}
			var wg sync.WaitGroup
			work := make(chan job)
			var mu sync.Mutex
			var errs []error
			for range 4 {
				wg.Go(func() {
					for j := range work {
						for _, part := range j.parts {
							if err := appendTo(j.path, part); err != nil {
								mu.Lock()
								errs = append(errs, err)
								mu.Unlock()
							}
						}
					}
				})
			}
			for _, j := range jobs {
				work <- j
			}
			close(work)
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d appends failed, first: %v", len(errs), errs[0])
			}
			appends := 0
			for _, j := range jobs {
				appends += len(j.parts)
			}
			t.Logf("%d secrets of %d kinds split at every byte, %d appends to %d files", len(corpus), testcorpus.Kinds(corpus), appends, len(jobs))
			p.kill9(t)

			storeDir := store[strings.Index(store, ":")+1:]
			scan.scanTree(t, storeDir)
			for _, d := range dirs {
				scan.scanTree(t, d)
			}

			// Nothing closed was lost: every file comes back, redacted.
			p2 := startMount(t, store, mnt, env)
			missing := 0
			for _, j := range jobs {
				b, err := os.ReadFile(j.path)
				if err != nil || bytes.Count(b, []byte("[REDACTED")) < j.markers {
					if missing++; missing <= 5 {
						t.Errorf("%s after replay: %d markers, want %d (%v):\n%.600s", j.path, bytes.Count(b, []byte("[REDACTED")), j.markers, err, b)
					}
				}
			}
			if missing > 0 {
				t.Fatalf("%d of %d files lost or not redacted after the replay", missing, len(jobs))
			}
			if err := p2.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p2.log)
			}
			scan.scanTree(t, storeDir)
			for _, d := range dirs {
				scan.scanTree(t, d)
			}
		})
	}
}

// TestWriterKeepsItsBytesAcrossRedactingFlushes: a process holds a file
// open (no O_APPEND) and writes secrets at its own offsets while flushes
// redact what reaches the store. It must read back exactly what it wrote
// (no hole, no marker under it), and the store must hold no secret, then
// or after a remount.
func TestWriterKeepsItsBytesAcrossRedactingFlushes(t *testing.T) {
	t.Parallel()
	corpus := secretCorpus(t)
	var lines, secrets []string
	for i, s := range corpus {
		if strings.Contains(s.Value, "\n") || i%7 != 0 {
			continue // one-line secrets, a sample of every kind's neighbours
		}
		lines = append(lines, s.Prefix+s.Value+s.Suffix+"\n")
		secrets = append(secrets, s.Value)
	}
	scan := newLeakScanner(secrets)
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newStore()
			mnt := t.TempDir()
			env, dirs := crashEnv(t)
			p := startMount(t, store, mnt, env)
			path := filepath.Join(mnt, "held.md")
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			for i, l := range lines {
				if _, err := f.WriteAt([]byte(l), int64(len(want))); err != nil {
					t.Fatal(err)
				}
				want = append(want, l...)
				if i%3 == 2 {
					fsyncPath(t, path) // another descriptor: a flush that redacts
				}
			}
			got := make([]byte, len(want)+10)
			n, _ := f.ReadAt(got, 0)
			if !bytes.Equal(got[:n], want) {
				t.Fatalf("the writer reads back %d bytes that differ from the %d it wrote (first difference at %d)",
					n, len(want), firstDiff(got[:n], want))
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			fsyncPath(t, path)
			storeDir := store[strings.Index(store, ":")+1:]
			scan.scanTree(t, storeDir)
			if err := p.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p.log)
			}
			if i := scan.find([]byte(p.log.String())); i >= 0 {
				t.Fatalf("memfs's log holds a piece of secret %d", i)
			}
			scan.scanTree(t, storeDir)
			for _, d := range dirs {
				scan.scanTree(t, d)
			}
			p2 := startMount(t, store, mnt, env)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.IndexByte(b, 0) >= 0 || strings.Count(string(b), "\n") != len(lines) || !bytes.Contains(b, []byte("[REDACTED")) {
				t.Fatalf("after a remount the file is not the redacted text (%d lines of %d, NUL %v)",
					strings.Count(string(b), "\n"), len(lines), bytes.IndexByte(b, 0) >= 0)
			}
			if err := p2.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p2.log)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSecretsInNamesAndAttributes: a name with a secret is refused with
// EACCES wherever a name is made (create, mkdir, rename, link target of a
// rename, attribute name); attribute values are redacted on their way to
// the store; the log names the rule and never the secret.
func TestSecretsInNamesAndAttributes(t *testing.T) {
	t.Parallel()
	token := "ghp_" + "R8dM2qLx7VbN4tKc9WzP3sHy6FjA1uEo5GiD" // a fake GitHub token
	aws := "AKIA" + "QX7RZ2LMN4TPV6WY"
	scan := newLeakScanner([]string{token, aws})
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mnt := t.TempDir()
			env, dirs := crashEnv(t)
			p := startMount(t, store, mnt, env)
			mem := filepath.Join(mnt, "memory")
			if err := os.MkdirAll(mem, 0o755); err != nil {
				t.Fatal(err)
			}
			plain := filepath.Join(mem, "plain.md")
			if err := os.WriteFile(plain, []byte("nothing here\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			refused := []struct {
				what string
				err  error
			}{
				{"create", os.WriteFile(filepath.Join(mem, token+".md"), []byte("x"), 0o644)},
				{"create in a dir", os.WriteFile(filepath.Join(mem, "key-"+aws), []byte("x"), 0o644)},
				{"mkdir", os.Mkdir(filepath.Join(mem, "d-"+token), 0o755)},
				{"rename", os.Rename(plain, filepath.Join(mem, "renamed-"+token))},
				{"xattr name", unix.Setxattr(plain, "user."+token, []byte("v"), 0)},
			}
			for _, r := range refused {
				if !errors.Is(r.err, unix.EACCES) {
					t.Errorf("%s with a secret in the name: got %v, want EACCES", r.what, r.err)
				}
			}
			for _, x := range []struct{ name, value string }{
				{"user.note", "deploy with " + token},
				{"user.memfs.agent", "bot-" + aws},
				{"user.memfs.tags", "ci," + token},
			} {
				if err := unix.Setxattr(plain, x.name, []byte(x.value), 0); err != nil {
					t.Errorf("setxattr %s: %v", x.name, err)
				}
			}
			fsyncPath(t, plain)
			if err := p.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p.log)
			}
			if i := scan.find([]byte(p.log.String())); i >= 0 {
				t.Fatalf("memfs's log holds a piece of a secret:\n%s", p.log)
			}
			if !strings.Contains(p.log.String(), "github") {
				t.Errorf("the log does not name the rule that refused a name:\n%s", p.log)
			}
			storeDir := store[strings.Index(store, ":")+1:]
			scan.scanTree(t, storeDir)
			for _, d := range dirs {
				scan.scanTree(t, d)
			}
			p2 := startMount(t, store, mnt, env)
			v := make([]byte, 256)
			n, err := unix.Getxattr(plain, "user.note", v)
			if err != nil || !strings.HasPrefix(string(v[:n]), "deploy with [REDACTED") {
				t.Errorf("user.note after remount: %q, %v; want it redacted", v[:max(n, 0)], err)
			}
			if err := p2.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p2.log)
			}
		})
	}
}

// TestDebugLogHoldsNoValue: --debug logs every FUSE request, but never a
// byte of a value or an attribute (go-fuse quotes the first 8 bytes of each
// payload), and names only redacted.
func TestDebugLogHoldsNoValue(t *testing.T) {
	t.Parallel()
	aws := "AKIA" + "TAHIQX7RZ2LMN4TP"
	value := "plain words that are no secret at all\n"
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	env, _ := crashEnv(t)
	p := startMount(t, store, mnt, env, "--debug")
	path := filepath.Join(mnt, "note.md")
	if err := os.WriteFile(path, []byte("key "+aws+"\n"+value), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(path, "user.note", []byte(value), 0); err != nil {
		t.Fatal(err)
	}
	os.Stat(filepath.Join(mnt, "x-"+aws)) // a lookup of a name with a secret
	fsyncPath(t, path)
	if err := p.terminate(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.log)
	}
	log := p.log.String()
	if !strings.Contains(log, "WRITE") || !strings.Contains(log, "SETXATTR") {
		t.Fatalf("--debug logged no requests:\n%.2000s", log)
	}
	for _, piece := range []string{aws[:8], "plain wo", "key AKIA"} {
		if strings.Contains(log, piece) {
			t.Errorf("the debug log holds %q, a piece of a value", piece)
		}
	}
}
