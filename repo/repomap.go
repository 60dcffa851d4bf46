package repo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Bounds of a repository map.
const (
	// MaxMapSymbols is the most symbols a map lists for one file.
	MaxMapSymbols = 200
	// MaxMapFileSize is the largest file a map reads symbols from; a
	// larger one is listed without them.
	MaxMapFileSize = 1 << 20
	// MaxMapFiles is the most files a map lists.
	MaxMapFiles = 10000
)

// MapName is the name of the repository's map among its derived
// artifacts (IndexKey).
const MapName = "map.md"

// MapOptions are Map's options. The zero value reads symbols with
// Universal Ctags when it is installed.
type MapOptions struct {
	// NoCtags reads symbols with go/parser, of Go files alone, even when
	// Universal Ctags is installed.
	NoCtags bool
}

// Map is the map of the repository top: Markdown that lists its files
// and each file's top-level symbols, for an agent to find its way.
func Map(ctx context.Context, top string) ([]byte, error) { return MapOptions{}.Map(ctx, top) }

// Map is a Markdown map of the working tree top: its files (those git
// lists, tracked and untracked but not ignored, or outside git every file
// but in directories whose name starts with '.'), sorted, each with its
// top-level symbols. Symbols come from Universal Ctags (`ctags --version`
// says "Universal Ctags"), else from go/parser for Go files (methods as
// (T) Name) and none for others; the map's first line says which, and how
// many files it lists:
//
//	<!-- repository map: 2 files, symbols by go/parser -->
//	- `cmd/main.go`: func main
//	- `store.go`: type Store, (Store) Get, func Open, const MaxKey
//
// A map lists at most MaxMapFiles files and MaxMapSymbols symbols a file,
// and no symbols of a file over MaxMapFileSize.
func (o MapOptions) Map(ctx context.Context, top string) ([]byte, error) {
	files, more, err := mapFiles(ctx, top)
	if err != nil {
		return nil, err
	}
	var read []string // the files whose symbols are read
	listed := files[:0]
	large := map[string]bool{}
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(f)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // tracked, but removed from the working tree
		case err != nil:
			return nil, err
		case !fi.Mode().IsRegular():
		case fi.Size() > MaxMapFileSize:
			large[f] = true
		default:
			read = append(read, f)
		}
		listed = append(listed, f)
	}
	by, syms := "go/parser", map[string][]string(nil)
	if !o.NoCtags && universalCtags(ctx) {
		if syms, err = ctagsSymbols(ctx, top, read); err == nil {
			by = "universal-ctags"
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// else ctags failed (built without JSON, say) or took over
		// ctagsTimeout: go/parser
	}
	if by == "go/parser" {
		syms = goSymbols(top, read)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!-- repository map: %d files, symbols by %s -->\n", len(listed), by)
	for _, f := range listed {
		fmt.Fprintf(&b, "- %s", codeSpan(f))
		s := syms[f]
		switch {
		case large[f]:
			b.WriteString(" (over 1 MiB: no symbols)")
		case len(s) > MaxMapSymbols:
			fmt.Fprintf(&b, ": %s (and %d more)", strings.Join(s[:MaxMapSymbols], ", "), len(s)-MaxMapSymbols)
		case len(s) > 0:
			b.WriteString(": " + strings.Join(s, ", "))
		}
		b.WriteByte('\n')
	}
	if more {
		fmt.Fprintf(&b, "- (more files, not listed: a map lists at most %d)\n", MaxMapFiles)
	}
	return b.Bytes(), nil
}

// mapFiles are the files of the working tree top, relative with '/',
// sorted, at most MaxMapFiles of them (more says there were more).
func mapFiles(ctx context.Context, top string) (files []string, more bool, err error) {
	var out bytes.Buffer
	err = gitTo(ctx, top, &out, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	switch {
	case errors.Is(err, errNotRepo), errors.Is(err, exec.ErrNotFound):
		files, err = walkFiles(top)
	case err == nil:
		for f := range strings.SplitSeq(out.String(), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	}
	if err != nil {
		return nil, false, err
	}
	slices.Sort(files)
	files = slices.Compact(files) // a conflict lists a path once a stage
	if len(files) > MaxMapFiles {
		return files[:MaxMapFiles], true, nil
	}
	return files, false, nil
}

// walkFiles is every file under top but in directories whose name starts
// with '.', stopping after MaxMapFiles+1.
func walkFiles(top string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != top && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(top, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		if len(files) > MaxMapFiles {
			return fs.SkipAll
		}
		return nil
	})
	return files, err
}

// codeSpan is a file's name as Markdown code; quoted when it has a
// backquote or a character that is not printable.
func codeSpan(name string) string {
	if !strings.Contains(name, "`") && printable(name) {
		return "`" + name + "`"
	}
	return fmt.Sprintf("`%q`", name)
}

// ctagsTimeout bounds a run of ctags, which Map then does without: a
// parser of ctags's may loop on a file no one meant it to read.
const ctagsTimeout = 60 * time.Second

// universalCtags reports whether the ctags installed is Universal Ctags.
func universalCtags(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, ctagsTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctags", "--version").Output()
	return err == nil && bytes.Contains(out, []byte("Universal Ctags"))
}

// ctagTag is what Map reads of a ctags JSON tag.
type ctagTag struct {
	Type      string `json:"_type"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Kind      string `json:"kind"`
	Scope     string `json:"scope"`
	ScopeKind string `json:"scopeKind"`
	Language  string `json:"language"`
}

// ctagsSymbols are the top-level symbols of files (relative to top) by
// Universal Ctags, by file, in line order. ctags that runs over
// ctagsTimeout is stopped, and ctagsSymbols fails.
func ctagsSymbols(ctx context.Context, top string, files []string) (map[string][]string, error) {
	var list strings.Builder
	for _, f := range files {
		if printable(f) { // -L reads a name a line
			// -L reads a line that starts with '-' as an option, even
			// after --options=NONE: a file named --options=/dev/zero
			// would hang ctags, another would load an option file.
			list.WriteString("./" + f + "\n")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, ctagsTimeout)
	defer cancel()
	// --options=NONE: no option file of the user's or the repository's
	// (.ctags.d) changes what is read or how it is written.
	cmd := exec.CommandContext(ctx, "ctags", "--options=NONE", "--output-format=json", "--fields=+nKl",
		"--sort=no", "-f", "-", "-L", "-")
	cmd.Dir = top
	cmd.Stdin = strings.NewReader(list.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	tags, decodeErr := readTags(stdout)
	io.Copy(io.Discard, stdout) // what a bad line left, so that ctags ends
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("ctags in %s: %s: %w", top, cut(strings.TrimSpace(stderr.String())), err)
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("ctags in %s: %w", top, decodeErr)
	}
	syms := map[string][]string{}
	for f, ts := range tags {
		slices.SortStableFunc(ts, func(a, b ctagTag) int { return cmp.Compare(a.Line, b.Line) })
		for _, t := range ts {
			syms[f] = append(syms[f], symbol(t))
		}
	}
	return syms, nil
}

// readTags reads ctags's JSON tags, the top-level ones by file.
func readTags(r io.Reader) (map[string][]ctagTag, error) {
	tags := map[string][]ctagTag{}
	dec := json.NewDecoder(r)
	for {
		var t ctagTag
		err := dec.Decode(&t)
		if err == io.EOF {
			return tags, nil
		}
		if err != nil {
			return nil, err
		}
		if t.Type != "tag" || t.Kind == "package" || !topLevel(t) {
			continue
		}
		f := strings.TrimPrefix(t.Path, "./") // as ctagsSymbols named it
		tags[f] = append(tags[f], t)
	}
}

// topLevel reports whether t is declared at a file's top level: no scope,
// or Go's package scope; a Go method is, as Go declares it.
func topLevel(t ctagTag) bool {
	return t.Scope == "" || t.ScopeKind == "package" || isGoMethod(t)
}

func isGoMethod(t ctagTag) bool { return t.Language == "Go" && t.Kind == "func" && t.Scope != "" }

// symbol is t as a map lists it: "kind name", or "(T) Name" for a Go
// method.
func symbol(t ctagTag) string {
	if isGoMethod(t) && t.ScopeKind != "package" {
		return "(" + clean(t.Scope[strings.LastIndexByte(t.Scope, '.')+1:]) + ") " + clean(t.Name)
	}
	return clean(t.Kind) + " " + clean(t.Name)
}

// clean is s without control characters, for a line of Markdown.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// goSymbols are the top-level declarations of the Go files of files
// (relative to top) by go/parser, by file, in source order; a file that
// does not parse gives what was read before the error.
func goSymbols(top string, files []string) map[string][]string {
	syms := map[string][]string{}
	for _, f := range files {
		if path.Ext(f) != ".go" {
			continue
		}
		src, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(f)))
		if err != nil || len(src) > MaxMapFileSize {
			continue // changed meanwhile
		}
		file, _ := parser.ParseFile(token.NewFileSet(), f, src, parser.SkipObjectResolution)
		if file != nil {
			syms[f] = declarations(file)
		}
	}
	return syms
}

// declarations are a Go file's top-level names: "func F", "(T) M",
// "type T", "const C", "var V".
func declarations(file *ast.File) []string {
	var out []string
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) > 0 {
				out = append(out, "("+receiver(d.Recv.List[0].Type)+") "+d.Name.Name)
			} else {
				out = append(out, "func "+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out = append(out, "type "+s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							out = append(out, d.Tok.String()+" "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// receiver is the name of a method's receiver type: T of *T, T[K] or T.
func receiver(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}
