package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The tree: files of 1–4 KiB of word text, file i in directory i%dirs.
// One file in 50 starts with the grep word, once; no other text has it.

const grepWord = "zanzibar"

var vocab = strings.Fields(`memory agent note skill tool context recall vector
token deploy review kernel session store flush mount write read cache index
prompt reply user project build test error fix branch commit merge release
config path file directory key value journal redact secret model plan task
step goal result summary todo done open close lock queue event watch change
schema table query api client server request response timeout retry backoff
log trace metric alert budget limit quota owner team meeting decision idea
the a of to and in is for on with as by at from that this it be are was`)

type treeFile struct {
	rel  string // path relative to the tree root
	data []byte
}

// genText returns size bytes of lines of words.
func genText(r *rand.Rand, size int, lead string) []byte {
	var b bytes.Buffer
	b.Grow(size + 128)
	b.WriteString(lead)
	for b.Len() < size {
		if r.IntN(8) == 0 {
			b.WriteString("## ")
		}
		n := 5 + r.IntN(10)
		for j := 0; j < n; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocab[r.IntN(len(vocab))])
		}
		b.WriteByte('\n')
	}
	out := b.Bytes()[:size]
	out[size-1] = '\n'
	return out
}

// genTree makes n files in dirs directories: "PREFIX%03d/NAME%05d.md",
// ordered directory by directory (the order a walk gives).
func genTree(n, dirs int, seed uint64, dirFmt, fileFmt string, plant bool) []treeFile {
	r := rand.New(rand.NewPCG(seed, 1))
	files := make([]treeFile, n)
	for i := range files {
		lead := ""
		if plant && i%50 == 7 {
			lead = grepWord + " was mentioned here\n"
		}
		files[i] = treeFile{
			rel:  filepath.Join(fmt.Sprintf(dirFmt, i%dirs), fmt.Sprintf(fileFmt, i)),
			data: genText(r, 1024+r.IntN(3073), lead),
		}
	}
	// directory-major order
	byDir := make([]treeFile, 0, n)
	for d := 0; d < dirs; d++ {
		for i := d; i < n; i += dirs {
			byDir = append(byDir, files[i])
		}
	}
	return byDir
}

func planted(files []treeFile) int {
	n := 0
	for _, f := range files {
		if bytes.HasPrefix(f.data, []byte(grepWord)) {
			n++
		}
	}
	return n
}

func totalBytes(files []treeFile) int64 {
	var n int64
	for _, f := range files {
		n += int64(len(f.data))
	}
	return n
}

func writeTree(root string, files []treeFile) error {
	for _, f := range files {
		p := filepath.Join(root, f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// --- workloads; each returns its duration ---

// readAll reads every file with os.ReadFile, one after the other, in
// directory order, and checks the byte count.
func readAll(root string, files []treeFile, want int64) (time.Duration, error) {
	t0 := time.Now()
	var n int64
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f.rel))
		if err != nil {
			return 0, err
		}
		n += int64(len(b))
	}
	d := time.Since(t0)
	if n != want {
		return 0, fmt.Errorf("read %d bytes, want %d", n, want)
	}
	return d, nil
}

// lsLR runs the real ls -lR, output to /dev/null.
func lsLR(root string) (time.Duration, error) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	cmd := exec.Command("ls", "-lR", root)
	cmd.Dir = "/"
	cmd.Stdout = null
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	err = cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("ls -lR: %v: %s", err, errb.String())
	}
	return d, nil
}

// lineCounter counts the lines written to it.
type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// runCounted runs a command whose output goes through a pipe (not
// /dev/null: GNU grep stops at the first match when its output is
// /dev/null) and returns the duration and the number of output lines.
func runCounted(name string, args ...string) (time.Duration, int, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = "/"
	var c lineCounter
	var errb bytes.Buffer
	cmd.Stdout = io.Writer(&c)
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v: %s", name, err, errb.String())
	}
	return d, c.n, nil
}

// createFiles makes the directories of files and writes each file
// (open O_CREAT|O_TRUNC, write, close), no fsync.
func createFiles(root string, files []treeFile) (time.Duration, error) {
	t0 := time.Now()
	made := map[string]bool{}
	for _, f := range files {
		p := filepath.Join(root, f.rel)
		if d := filepath.Dir(p); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return 0, err
			}
			made[d] = true
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// dropCaches writes back dirty data and drops the page, dentry and inode
// caches (needs root).
func dropCaches() error {
	syscallSync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0)
}
