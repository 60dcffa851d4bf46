package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/history"
)

// A chunked value's chunk damaged on disk (one byte flipped in the dir
// store's object file, or in badger's table that holds it; or the dir
// store's chunk file truncated or removed): memfs log --verify fails and
// names every version that holds the chunk, diff and revert refuse those
// versions, and reading them through the mount (.memfs/history and
// .memfs/at) is EIO, never an empty, short or wrong file. The live value
// and the versions without the chunk read as they are.
func TestDamagedChunk(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ kind, damage string }{{"dir", "flip"}, {"dir", "truncate"}, {"dir", "remove"}, {"badger", "flip"}, {"badger", "overwrite"}} {
		t.Run(c.kind+"/"+c.damage, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			store := c.kind + ":" + dir
			raw := make([]byte, 90<<10)
			rand.Read(raw)
			v1 := base64.StdEncoding.EncodeToString(raw) + "\n" // ~120 KiB: chunked
			v2 := v1 + "one line appended\n"
			v3 := "small, whole, undamaged\n"
			mustRun(t, v1, "put", "--store", store, "memory/big.md")
			mustRun(t, v2, "put", "--store", store, "memory/big.md")
			mustRun(t, v3, "put", "--store", store, "memory/big.md")
			mustRun(t, v2, "put", "--store", store, "memory/big.md") // the live value holds the chunk too
			seqs := versionSeqs(t, store, "memory/big.md")
			if len(seqs) != 4 {
				t.Fatalf("versions %v, want 4", seqs)
			}
			// A chunk of the middle: in v1 and v2 (the append changed the last only).
			plan := history.New(nil).PlanValue([]byte(v1))
			if len(plan.Records) < 4 {
				t.Fatalf("v1 is %d records; want it chunked", len(plan.Records))
			}
			chunk := plan.Records[len(plan.Records)/2]
			damageRecord(t, c.kind, c.damage, dir, chunk)
			if c.kind == "badger" && c.damage == "flip" {
				// badger checks its tables' checksums at open: the store
				// refuses to open, naming the damage, and serves nothing.
				for _, args := range [][]string{{"log", "--verify", "--store", store}, {"cat", "--store", store, "memory/big.md"}, {"history", "--store", store, "memory/big.md"}} {
					out, _, err := run(t, "", args...)
					if err == nil || !strings.Contains(err.Error(), "damaged") {
						t.Errorf("memfs %s on a damaged table: %.100q, %v; want a refusal naming the damage", args[0], out, err)
					}
				}
				return
			}

			_, stderr, err := run(t, "", "log", "--verify", "--store", store)
			if err == nil {
				t.Errorf("log --verify of a store with a damaged chunk succeeded; stderr %q", stderr)
			}
			for _, i := range []int{0, 1, 3} {
				if want := "memory/big.md@" + seqs[i]; !strings.Contains(stderr, want) {
					t.Errorf("log --verify: stderr %q does not name %s", stderr, want)
				}
			}
			if want := "memory/big.md@" + seqs[2]; strings.Contains(stderr, want+"\n") || strings.Contains(stderr, want+" ") {
				t.Errorf("log --verify: stderr %q names the undamaged version %s", stderr, want)
			}
			if out, _, err := run(t, "", "diff", "--store", store, "memory/big.md", seqs[0], seqs[2]); err == nil {
				t.Errorf("diff from a damaged version succeeded: %.200q", out)
			}
			if _, _, err := run(t, "", "revert", "--store", store, "--to", seqs[0], "memory/big.md"); err == nil {
				t.Errorf("revert to a damaged version succeeded")
			}
			if got := mustRun(t, "", "cat", "--store", store, "memory/big.md"); got != v2 {
				t.Errorf("the live value after the refused revert: %d bytes, want v2's %d", len(got), len(v2))
			}

			mnt := t.TempDir()
			startMount(t, store, mnt, nil)
			hist := filepath.Join(mnt, ".memfs", "history", "memory", "big.md")
			for _, i := range []int{0, 1, 3} {
				for _, p := range []string{filepath.Join(hist, pad8(seqs[i])), filepath.Join(mnt, ".memfs", "at", seqs[i], "memory", "big.md")} {
					b, err := os.ReadFile(p)
					if !errors.Is(err, syscall.EIO) {
						t.Errorf("cat %s (damaged) = %d bytes, %v; want EIO", p, len(b), err)
					}
				}
			}
			if b, err := os.ReadFile(filepath.Join(hist, pad8(seqs[2]))); err != nil || string(b) != v3 {
				t.Errorf("cat of the undamaged version: %q, %v", b, err)
			}
			if b, err := os.ReadFile(filepath.Join(mnt, "memory", "big.md")); err != nil || string(b) != v2 {
				t.Errorf("the live value through the mount: %d bytes, %v; want v2", len(b), err)
			}
		})
	}
}

// versionSeqs lists key's version seqs, oldest first (memfs history).
func versionSeqs(t *testing.T, store, key string) []string {
	t.Helper()
	var seqs []string
	for line := range strings.Lines(mustRun(t, "", "history", "--store", store, key)) {
		seqs = append(seqs, strings.TrimLeft(strings.Fields(line)[0], "0"))
	}
	return seqs
}

func pad8(seq string) string { return strings.Repeat("0", max(0, 8-len(seq))) + seq }

// damageRecord damages the system record r where the store keeps it on
// disk: the dir store's file of it; in badger, every place its tables
// hold a 64-byte run of its bytes ("flip"), or the record itself through
// the store ("overwrite": what a damaged block that passed badger's
// checks would read as).
func damageRecord(t *testing.T, kind, how, dir string, r history.Record) {
	t.Helper()
	if how == "overwrite" {
		st, err := badgerstore.Open(dir, badgerstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b := bytes.Clone(r.Data)
		b[len(b)/2] ^= 0x20
		if err := st.SaveSys(t.Context(), r.Name, b); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if kind == "dir" {
		path := filepath.Join(dir, ".memfs-sys", filepath.FromSlash(r.Name))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the chunk's file: %v", err)
		}
		switch how {
		case "flip":
			b[len(b)/2] ^= 0x20
			err = os.WriteFile(path, b, 0o600)
		case "truncate":
			err = os.Truncate(path, int64(len(b)/2))
		case "remove":
			err = os.Remove(path)
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	run := r.Data[len(r.Data)/2 : len(r.Data)/2+64]
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".sst") {
			return err // the value logs hold the live value, which has the same bytes
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		changed := false
		for i := bytes.Index(b, run); i >= 0; i = bytes.Index(b, run) {
			b[i+32] ^= 0x20
			n++
			changed = true
		}
		if changed {
			return os.WriteFile(path, b, 0o600)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no table of the badger store holds the chunk's bytes")
	}
	t.Logf("flipped a byte in %d copies of the chunk", n)
}
