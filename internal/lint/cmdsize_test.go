package lint

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxCommandLines is the most lines of non-test Go the command may hold:
// it is flags -> options -> calls (issue 28); logic a library user could
// want lives in a library package.
const maxCommandLines = 2500

// TestCommandIsThin counts the lines of cmd/memfs's non-test .go files.
func TestCommandIsThin(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=Dir,GoFiles,CgoFiles", commandPkg).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var p struct {
		Dir      string
		GoFiles  []string
		CgoFiles []string
	}
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, name := range append(p.GoFiles, p.CgoFiles...) {
		data, err := os.ReadFile(filepath.Join(p.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(data, []byte("\n"))
	}
	if total > maxCommandLines {
		t.Errorf("cmd/memfs holds %d lines of non-test Go, more than %d: move what is not flag handling into a library package", total, maxCommandLines)
	}
}
