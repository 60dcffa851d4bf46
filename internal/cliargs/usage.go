package cliargs

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// flagNames returns c's flag names as written: "--long", "-l".
func (c *Command) flagNames() []string {
	var names []string
	for _, f := range c.Flags {
		for _, n := range f.Names {
			names = append(names, dashed(n))
		}
	}
	return append(names, "--help")
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// UnknownFlag is the error for a flag c does not have (name without
// dashes): the flag, a near name of c's when there is one, and the usage
// line, so that the help need not be printed whole. prefix starts the
// message (the command's name, or "" for the program).
func (c *Command) UnknownFlag(prefix, usage, name string) error {
	return unknown(prefix, usage, "flag", dashed(name), Suggest(dashed(name), c.flagNames()))
}

// UsageError is the error for err, an error of parsing the command line
// of c, the command cmd ("" for the program) whose usage line is usage: a
// flag c does not have is told as UnknownFlag tells it (the flag package
// names it only in its message); any other error of a command comes with
// the usage line, and the program's as it is.
func (c *Command) UsageError(cmd, usage string, err error) error {
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	switch {
	case unknown:
		return c.UnknownFlag(cmd, usage, name)
	case cmd == "":
		return err
	}
	return fmt.Errorf("%s: %w\nusage: %s", cmd, err, usage)
}

// UnknownCommand is the error for a word that names none of c's
// subcommands.
func (c *Command) UnknownCommand(usage, word string) error {
	var names []string
	for _, s := range c.Subs {
		if !s.Hidden {
			names = append(names, s.Names...)
		}
	}
	return unknown("", usage, "command", fmt.Sprintf("%q", word), Suggest(word, names))
}

func unknown(prefix, usage, what, word, near string) error {
	msg := "unknown " + what + " " + word
	if prefix != "" {
		msg = prefix + ": " + msg
	}
	if near != "" {
		msg += "; did you mean " + near + "?"
	}
	return fmt.Errorf("%s\nusage: %s (add --help for more)", msg, usage)
}

// Suggest returns the candidate a mistyped word most likely meant: one
// that starts with it, or one within an edit distance of a third of its
// length (at least 1); "" when none is that near.
func Suggest(word string, candidates []string) string {
	best, bestD := "", max(1, len(word)/3)+1
	for _, c := range candidates {
		d := distance(word, c)
		if len(word) > 2 && strings.HasPrefix(c, word) {
			d = 0
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b, a transposition
// counting as one edit ("lnog" is one from "long").
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Version is the program's version from its build: the module version,
// else the commit it was built from ("(devel)" for a build from a tree
// without one).
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v, rev, dirty := info.Main.Version, "", ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		return "devel-" + rev[:min(12, len(rev))] + dirty
	}
	if v == "" {
		return "(devel)"
	}
	return v
}
