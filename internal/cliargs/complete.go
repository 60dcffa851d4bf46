package cliargs

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/memfs/memfs/internal/hint"
)

// Candidate is a word a completion offers, and what it is (zsh shows it).
type Candidate struct{ Word, Usage string }

// Complete returns the words that may replace the last of words: words
// are the command line after the program up to the cursor, the last
// being the word under it ("" for a new one). A word that starts with a
// dash is completed from the command's flags; else from its subcommands
// (before its first argument) and from args, which gives the values of
// a command's n-th argument (path: the command's names from the root,
// such as ["history", "redact"]). On the value of a flag, Complete offers
// nothing: the shell's default (file names) is the best there is.
func Complete(words []string, root *Command, args func(path []string, n int) []string) []Candidate {
	done, partial := words[:len(words)-1], words[len(words)-1]
	cur, path, n, ended := root, []string(nil), 0, false
	for i := 0; i < len(done); i++ {
		w := done[i]
		switch {
		case ended:
			n++
		case w == "--":
			ended = true
		case len(w) > 1 && w[0] == '-':
			if f := cur.Flag(strings.TrimLeft(w, "-")); f != nil && f.Value {
				if i+1 == len(done) {
					return nil
				}
				i++
			}
		default:
			if s := cur.Sub(w); s != nil && n == 0 {
				cur, path = s, append(path, s.Names[0])
				continue
			}
			n++
		}
	}
	var out []Candidate
	add := func(word, usage string) {
		if strings.HasPrefix(word, partial) {
			out = append(out, Candidate{word, usage})
		}
	}
	if strings.HasPrefix(partial, "-") && !ended {
		for _, f := range append(cur.Flags, Flag{Names: []string{"help"}}) {
			for _, name := range f.Names {
				add(dashed(name), "")
			}
		}
		return out
	}
	if n == 0 {
		for _, s := range cur.Subs {
			if !s.Hidden {
				add(s.Names[0], s.Usage)
			}
		}
	}
	if args != nil {
		for _, a := range args(path, n) {
			add(a, "")
		}
	}
	return out
}

// Answer writes the completion of words (Complete) for memfs's commands,
// one word a line, or "word:usage" lines for zsh. keys lists the keys of
// the store or mount that flags (the --store and --mount of words) name.
func Answer(w io.Writer, words []string, root *Command, zsh bool, keys func(flags []string) []string) error {
	args := func(path []string, n int) []string {
		switch command := strings.Join(path, " "); {
		case command == "hint" && n == 0:
			return slices.Sorted(maps.Keys(hint.Files))
		case command == "completion" && n == 0:
			return []string{"bash", "zsh"}
		case slices.Contains([]string{"cat", "rm"}, command),
			n == 0 && slices.Contains([]string{"ls", "put", "history", "revert", "diff", "restore"}, command):
			return keys(storeFlags(words[:len(words)-1]))
		}
		return nil
	}
	for _, c := range Complete(words, root, args) {
		var err error
		if c.Usage != "" && zsh {
			_, err = fmt.Fprintf(w, "%s:%s\n", strings.ReplaceAll(c.Word, ":", `\:`), c.Usage)
		} else {
			_, err = fmt.Fprintln(w, c.Word)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// storeFlags returns the --store and --mount flags of words, with their
// values.
func storeFlags(words []string) []string {
	var flags []string
	for i, w := range words {
		switch {
		case strings.HasPrefix(w, "--store=") || strings.HasPrefix(w, "--mount="):
			flags = append(flags, w)
		case (w == "--store" || w == "--mount") && i+1 < len(words):
			flags = append(flags, w, words[i+1])
		}
	}
	return flags
}
