package embed_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/embed"
)

// TestOpenOptional: the default table missing or damaged is a warning and
// no embedder; a table named outright and missing is an error.
func TestOpenOptional(t *testing.T) {
	dir := t.TempDir()
	o := embed.Options{Getenv: func(k string) string {
		if k == "MEMFS_MODEL_DIR" {
			return dir
		}
		return ""
	}}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if e, err := embed.OpenOptional("default", o, log); e != nil || err != nil || !strings.Contains(logs.String(), "not installed") {
		t.Errorf("default, not installed: %v, %v, log %q; want nil, nil and a warning", e, err, logs.String())
	}
	if err := os.WriteFile(filepath.Join(dir, embed.DefaultTable), []byte("not a table"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	if e, err := embed.OpenOptional("", o, log); e != nil || err != nil || !strings.Contains(logs.String(), "damaged") {
		t.Errorf("default, damaged: %v, %v, log %q; want nil, nil and a warning", e, err, logs.String())
	}
	missing := "static:" + filepath.Join(dir, "missing.mfse")
	if _, err := embed.OpenOptional(missing, o, log); err == nil {
		t.Errorf("%s: no error, want Open's", missing)
	}
}
