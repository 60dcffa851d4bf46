package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
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

// --- edit in place ---

// editPrefix is what the edit workload's sed puts at the start of the
// first line of each edited file; the untimed revert takes it off again.
const editPrefix = "EDITED: "

// pickEdits returns n files spread evenly over the tree (every directory
// gets its share).
func pickEdits(files []treeFile, n int) []treeFile {
	n = min(n, len(files))
	if n <= 0 {
		return nil
	}
	out := make([]treeFile, 0, n)
	for i := range n {
		out = append(out, files[i*len(files)/n])
	}
	return out
}

// sedInPlace runs the real sed once: sed -i SCRIPT file..., and returns
// its duration.
func sedInPlace(root string, files []treeFile, script string) (time.Duration, error) {
	args := []string{"-i", script}
	for _, f := range files {
		args = append(args, filepath.Join(root, f.rel))
	}
	cmd := exec.Command("sed", args...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("sed -i %s on %d files: %v: %s", script, len(files), err, out.String())
	}
	return d, nil
}

// checkFiles reads every file back and compares it with prefix + its
// original content; it also checks that each directory holds no file the
// tree does not have (a sed temp file left behind).
func checkFiles(root string, files []treeFile, prefix string, inDir map[string]int) error {
	dirs := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f.rel))
		if err != nil {
			return err
		}
		if len(b) != len(prefix)+len(f.data) || !bytes.HasPrefix(b, []byte(prefix)) || !bytes.Equal(b[len(prefix):], f.data) {
			return fmt.Errorf("%s: %d bytes, not the expected %d (%q + original)", f.rel, len(b), len(prefix)+len(f.data), prefix)
		}
		dirs[filepath.Dir(f.rel)] = true
	}
	for d := range dirs {
		ents, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			return err
		}
		if len(ents) != inDir[d] {
			return fmt.Errorf("%s holds %d entries after sed -i, want %d", d, len(ents), inDir[d])
		}
	}
	return nil
}

// --- one large file, written and read sequentially ---

const chunkSize = 1 << 20

// bigName is the large file's name, at the root of the tree.
const bigName = "big.bin"

// bigData is the content of the large file: chunk i is one fixed random
// MiB whose first 8 bytes are i (little endian), cut at size.
type bigData struct {
	size  int64
	chunk []byte // the random MiB; the stamp is written into it per chunk
	sum   [sha256.Size]byte
}

func newBigData(size int64) *bigData {
	r := rand.New(rand.NewPCG(3, 1))
	b := &bigData{size: size, chunk: make([]byte, chunkSize)}
	for i := 0; i+8 <= len(b.chunk); i += 8 {
		binary.LittleEndian.PutUint64(b.chunk[i:], r.Uint64())
	}
	h := sha256.New()
	for i, off := 0, int64(0); off < size; i, off = i+1, off+chunkSize {
		h.Write(b.next(i, size-off))
	}
	h.Sum(b.sum[:0])
	return b
}

// next returns chunk i, n bytes at most (the buffer is reused).
func (b *bigData) next(i int, n int64) []byte {
	binary.LittleEndian.PutUint64(b.chunk, uint64(i))
	return b.chunk[:min(n, chunkSize)]
}

// seqWrite creates path and writes the data in 1 MiB writes, then fsyncs
// and closes it. It returns the time of the writes (open included) and of
// writes + fsync + close, and checks the size the file then has.
func seqWrite(path string, b *bigData) (write, synced time.Duration, err error) {
	t0 := time.Now()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, 0, err
	}
	for i, off := 0, int64(0); off < b.size; i, off = i+1, off+chunkSize {
		if _, err := f.Write(b.next(i, b.size-off)); err != nil {
			f.Close()
			return 0, 0, fmt.Errorf("write at %d: %w", off, err)
		}
	}
	write = time.Since(t0)
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, 0, fmt.Errorf("fsync: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, 0, fmt.Errorf("close: %w", err)
	}
	synced = time.Since(t0)
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	if fi.Size() != b.size {
		return 0, 0, fmt.Errorf("%s is %d bytes after the write, want %d", path, fi.Size(), b.size)
	}
	return write, synced, nil
}

// seqRead reads path in 1 MiB reads and checks the byte count. full: it
// also checks the SHA-256 of the whole content (for the untimed first
// read); otherwise only the stamp at the head of every MiB, so that the
// check costs nothing next to a read from the page cache.
func seqRead(path string, b *bigData, full bool) (time.Duration, error) {
	buf := make([]byte, chunkSize)
	h := sha256.New()
	t0 := time.Now()
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for i := 0; ; i++ {
		k, err := io.ReadFull(f, buf)
		if k > 0 {
			if full {
				h.Write(buf[:k])
			} else if k < 8 || binary.LittleEndian.Uint64(buf) != uint64(i) {
				return 0, fmt.Errorf("%s: MiB %d does not start with its stamp", path, i)
			}
			n += int64(k)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("read at %d: %w", n, err)
		}
	}
	d := time.Since(t0)
	if n != b.size {
		return 0, fmt.Errorf("%s: read %d bytes, want %d", path, n, b.size)
	}
	if full && !bytes.Equal(h.Sum(nil), b.sum[:]) {
		return 0, fmt.Errorf("%s: SHA-256 of the content read back differs from what was written", path)
	}
	return d, nil
}

// writeTreeParallel writes files under root on a few goroutines (for the
// large tree of the mount phase, built once).
func writeTreeParallel(root string, files []treeFile, workers int) error {
	dirs := map[string]bool{}
	for _, f := range files {
		dirs[filepath.Dir(f.rel)] = true
	}
	for d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := w; i < len(files); i += workers {
				if err := os.WriteFile(filepath.Join(root, files[i].rel), files[i].data, 0o644); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
