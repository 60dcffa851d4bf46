package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend/badgerstore"
)

// TestBadgerDamagedValueLog: bytes flipped in a badger value log, its
// length kept, were served as the file's content (memfs cat: exit 0, other
// bytes). The damaged value (in the newest value log) fails to read, naming the damage, and every
// other value reads. A command that writes keeps the damaged value log
// whole (badger cut it at the damage, and the intact values after it),
// keeps a copy of it under damaged/ in the store, and says where.
func TestBadgerDamagedValueLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "badger:" + dir
	values := map[string]string{"memory/small.md": "small\n"}
	mustRun(t, values["memory/small.md"], "put", "--store", store, "memory/small.md")
	for i := range 3 {
		// Over badger's value threshold: in the value log.
		k := fmt.Sprintf("skills/big%d/SKILL.md", i)
		values[k] = strings.Repeat(fmt.Sprintf("line %d of a long skill that goes to the value log\n", i), 3000)
		mustRun(t, values[k], "put", "--store", store, k)
	}
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	var vlog string
	var data []byte
	for _, v := range vlogs {
		if b, err := os.ReadFile(v); err == nil && bytes.Contains(b, []byte(values["skills/big2/SKILL.md"])) {
			vlog, data = v, b
		}
	}
	if vlog == "" {
		t.Fatalf("no value log holds skills/big2/SKILL.md: %v", vlogs)
	}
	at := bytes.Index(data, []byte(values["skills/big2/SKILL.md"]))
	for i := at + 1000; i < at+2000; i += 7 {
		data[i] ^= 0x5A
	}
	if err := os.WriteFile(vlog, data, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		for k, want := range values {
			out, errOut, err := run(t, "", "cat", "--store", store, k)
			if k == "skills/big2/SKILL.md" {
				if err == nil {
					t.Errorf("memfs cat %s, a damaged value: exit 0 with %d bytes (same as written: %v)", k, len(out), out == want)
				} else if msg := err.Error() + errOut; !strings.Contains(msg, "damaged") || !strings.Contains(msg, k) {
					t.Errorf("memfs cat %s: %q, want an error naming the key and the damage", k, msg)
				}
				continue
			}
			if err != nil || out != want {
				t.Errorf("memfs cat %s, an undamaged value: %v, %d bytes (want %d)\n%s", k, err, len(out), len(want), errOut)
			}
		}
	}
	check()
	_, errOut, err := run(t, "more\n", "put", "--store", store, "memory/more.md")
	if err != nil {
		t.Fatalf("memfs put on the damaged store: %v\n%s", err, errOut)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, badgerstore.DamagedDir, "*", filepath.Base(vlog)))
	if len(kept) != 1 {
		t.Fatalf("copies of the damaged value log: %v, want 1\nstderr: %s", kept, errOut)
	}
	if b, err := os.ReadFile(kept[0]); err != nil || !bytes.Equal(b, data) {
		t.Errorf("the copy %s: %d bytes (%v), want the %d damaged bytes", kept[0], len(b), err, len(data))
	}
	if !strings.Contains(errOut, kept[0]) {
		t.Errorf("memfs put: stderr %q, want it to name %s", errOut, kept[0])
	}
	check()
	if got := mustRun(t, "", "cat", "--store", store, "memory/more.md"); got != "more\n" {
		t.Errorf("a value written after the damage: %q", got)
	}
}
