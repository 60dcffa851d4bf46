// Package ignore decides which files memfs's search index and context
// packs leave out: VCS metadata (a .git, .hg or .svn file or directory, at
// any depth), binary values, and what the namespace's .memfsignore files
// exclude. The files stay in the store and the mount, unchanged: only
// search and packs skip them.
//
// A .memfsignore has gitignore's syntax and scope: at the root it applies
// to the whole namespace, in a directory to what is under it, a deeper
// file's patterns win over a shallower one's, and within a file the last
// matching pattern wins ("!pattern" includes again, even under a default:
// "!.git/" indexes a repository's metadata). Matching is go-git's
// plumbing/format/gitignore (see BENCHMARKS.md, Ignore rules, for the
// choice); this package only finds the files and orders their patterns.
//
// A value is binary (see Binary) as git and ripgrep judge it: a NUL byte
// in its first 8000 bytes (git's buffer_is_binary), or, a check of ours,
// bytes that are not UTF-8 in its first KiB (a Latin-1 text is therefore
// binary to memfs: notes are UTF-8).
//
// Rules are immutable; a nil *Rules holds the defaults only. Everything
// here may be called from any goroutine.
package ignore

import (
	"bytes"
	"context"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/memfs/memfs/backend"
)

// FileName is the name of an ignore file, at the root or in a directory.
const FileName = ".memfsignore"

// defaults come before every .memfsignore's patterns, which can undo them.
// Without a trailing slash: a .git file (a worktree's or a submodule's
// link to its repository) is VCS metadata too.
var defaults = [...]string{".git", ".hg", ".svn"}

// Rules is a namespace's ignore rules: the defaults and the patterns of
// its .memfsignore files.
type Rules struct {
	m gitignore.Matcher
}

// New returns the rules of the ignore files in files (each .memfsignore's
// key and its content); keys of other names are not read.
func New(files map[string][]byte) *Rules {
	ps := make([]gitignore.Pattern, 0, len(defaults))
	for _, d := range defaults {
		ps = append(ps, gitignore.ParsePattern(d, nil))
	}
	keys := make([]string, 0, len(files))
	for k := range files {
		if IsFile(k) {
			keys = append(keys, k)
		}
	}
	// gitignore.NewMatcher wants increasing priority: shallow files first.
	slices.SortFunc(keys, func(a, b string) int {
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		var domain []string
		if d := path.Dir(k); d != "." {
			domain = strings.Split(d, "/")
		}
		for line := range strings.SplitSeq(string(files[k]), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			ps = append(ps, gitignore.ParsePattern(line, domain))
		}
	}
	return &Rules{m: gitignore.NewMatcher(ps)}
}

// Ignored reports whether the file key is left out of search and packs by
// its name (see Binary for its value).
func (r *Rules) Ignored(key string) bool {
	if r == nil {
		r = none
	}
	return r.m.Match(strings.Split(key, "/"), false)
}

// none is the defaults alone.
var none = New(nil)

// IsFile reports whether key is an ignore file.
func IsFile(key string) bool {
	return key == FileName || strings.HasSuffix(key, "/"+FileName)
}

// Binary reports whether v is a binary value (see the package doc).
func Binary(v []byte) bool {
	if bytes.IndexByte(v[:min(len(v), 8000)], 0) >= 0 {
		return true
	}
	head := v[:min(len(v), 1<<10)]
	if len(v) > len(head) {
		// A rune the first KiB's end cuts is not invalid.
		for i := len(head) - 1; i >= max(0, len(head)-utf8.UTFMax+1); i-- {
			if utf8.RuneStart(head[i]) {
				if !utf8.FullRune(head[i:]) {
					head = head[:i]
				}
				break
			}
		}
	}
	return !utf8.Valid(head)
}

// Source is where Load finds the ignore files: a session.
type Source interface {
	Keys() []string
	Entry(key string) (backend.Entry, bool)
	Resolve(ctx context.Context, keys ...string) error
	Get(key string) ([]byte, bool)
}

// Load reads the rules of src's ignore files: the regular files named
// FileName (a directory or a symlink of that name holds none). A file
// that does not load (removed meanwhile, damaged: backend.KeyLocal) holds
// no patterns; an error is the store's (Resolve's, for a reason not the
// key's own).
func Load(ctx context.Context, src Source) (*Rules, error) {
	var keys []string
	for _, k := range src.Keys() {
		if !IsFile(k) {
			continue
		}
		if e, ok := src.Entry(k); ok && e.Info.Mode.IsRegular() {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return none, nil
	}
	if err := src.Resolve(ctx, keys...); err != nil && !backend.KeyLocal(err) {
		return nil, err
	}
	files := make(map[string][]byte, len(keys))
	for _, k := range keys {
		if v, ok := src.Get(k); ok {
			files[k] = v
		}
	}
	return New(files), nil
}
