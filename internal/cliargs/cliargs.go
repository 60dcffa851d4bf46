// Package cliargs holds the command-line conventions of memfs that its
// parser (urfave/cli v2, which stops at the first argument as Go's flag
// package does) lacks: flags written after the arguments, as rclone, git
// and GNU tools take them, with "--" ending the flags; and the words a
// shell completion offers. It knows a command line only through Command,
// a description the command builds from its own flags, so that nothing
// here depends on the parser; and how an argument reads: keys relative
// to a mount (InMount), a FILE or stdin (ReadInput), a mode (ParseMode),
// a prefix given twice (Prefix).
//
// # Concurrency
//
// Everything here is a pure function of its arguments, but InMount (which
// reads the working directory) and ReadInput (a file, or stdin): all of it
// is safe for concurrent use.
package cliargs

import "strings"

// Command is what this package knows of a command: its names (the
// first is the name, the rest aliases), its flags and its subcommands.
type Command struct {
	Names  []string
	Usage  string
	Hidden bool
	Flags  []Flag
	Subs   []*Command
}

// Flag is one flag of a command: its names without dashes, and whether it
// takes a value (a bool flag does not).
type Flag struct {
	Names []string
	Value bool
}

// CompleteFlag is the flag the completion scripts append to ask for the
// words that may come next (urfave/cli's).
const CompleteFlag = "--generate-bash-completion"

// Sub returns the subcommand of c named name, or nil.
func (c *Command) Sub(name string) *Command {
	for _, s := range c.Subs {
		for _, n := range s.Names {
			if n == name {
				return s
			}
		}
	}
	return nil
}

// Flag returns c's flag named name (without dashes), or nil.
func (c *Command) Flag(name string) *Flag {
	for i, f := range c.Flags {
		for _, n := range f.Names {
			if n == name {
				return &c.Flags[i]
			}
		}
	}
	return nil
}

// Reorder returns args (args[0] is the program) with each command's flags
// moved before its arguments, keeping their order, so that a parser that
// stops at the first argument sees them all: "memfs ls memory/ -l" becomes
// "memfs ls -l memory/". A flag that takes a value keeps the word after it
// (which may start with a dash); "--" ends the flags, and every word after
// it stays an argument (Reorder keeps the "--" before the arguments). An
// unknown flag is moved as a flag with no value, for the parser to refuse.
// The first argument of a command that has subcommands may name one; an
// unknown first word of the program is left where it was with what
// follows (the parser reports the unknown command). A completion request
// (CompleteFlag last) is left as it was: its words are unfinished.
func Reorder(args []string, root *Command) []string {
	if len(args) == 0 || args[len(args)-1] == CompleteFlag {
		return args
	}
	out := []string{args[0]}
	cur, rest := root, args[1:]
	for {
		flags, pos, n, ended := split(cur, rest, len(cur.Subs) > 0)
		if len(cur.Subs) > 0 && !ended && len(pos) == 1 {
			if next := cur.Sub(pos[0]); next != nil {
				out = append(append(out, flags...), pos[0])
				cur, rest = next, rest[n:]
				continue
			}
			if cur == root {
				return append(append(out, flags...), rest[n-1:]...)
			}
			flags, pos, _, ended = split(cur, rest, false)
		}
		out = append(out, flags...)
		if ended {
			out = append(out, "--")
		}
		return append(out, pos...)
	}
}

// split parses the words of one command: its flags (each with its value),
// its arguments, how many words it read and whether "--" ended the flags.
// With atSub, it stops after the first argument, which may name a
// subcommand (whose words are its own).
func split(c *Command, words []string, atSub bool) (flags, pos []string, n int, ended bool) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return flags, append(pos, words[i+1:]...), len(words), true
		case len(w) > 1 && w[0] == '-':
			flags = append(flags, w)
			name := strings.TrimLeft(w, "-")
			if f := c.Flag(name); f != nil && f.Value && i+1 < len(words) {
				i++
				flags = append(flags, words[i])
			}
		default:
			pos = append(pos, w)
			if atSub {
				return flags, pos, i + 1, false
			}
		}
	}
	return flags, pos, len(words), false
}
