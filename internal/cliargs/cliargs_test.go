package cliargs

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func testRoot() *Command {
	store := Flag{Names: []string{"store"}, Value: true}
	return &Command{Subs: []*Command{
		{Names: []string{"ls"}, Flags: []Flag{store, {Names: []string{"long", "l"}}}},
		{Names: []string{"hint"}, Flags: []Flag{{Names: []string{"write"}}}},
		{Names: []string{"history"}, Flags: []Flag{store}, Subs: []*Command{
			{Names: []string{"redact"}, Flags: []Flag{store, {Names: []string{"version"}, Value: true}}},
		}},
	}}
}

func TestReorder(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ls memory/ -l", "ls -l memory/"},
		{"ls memory/ --store dir:/s -l", "ls --store dir:/s -l memory/"},
		{"ls --store=dir:/s memory/", "ls --store=dir:/s memory/"},
		{"ls memory/ --store -x", "ls --store -x memory/"}, // a value may start with a dash
		{"hint claude --write", "hint --write claude"},
		{"hint claude CLAUDE.md --write", "hint --write claude CLAUDE.md"},
		{"ls a -- -l b", "ls -- a -l b"},
		{"ls -- -l", "ls -- -l"},
		{"ls - -l", "ls -l -"},
		{"ls memory/ --bogus", "ls --bogus memory/"},
		{"history redact k --version 3", "history redact --version 3 k"},
		{"history k --store s", "history --store s k"},
		{"history --store s redact k", "history --store s redact k"},
		{"bogus a -x", "bogus a -x"},
		{"--version", "--version"},
		{"ls memory/ - " + CompleteFlag, "ls memory/ - " + CompleteFlag},
	} {
		got := strings.Join(Reorder(append([]string{"memfs"}, strings.Fields(tt.in)...), testRoot())[1:], " ")
		if got != tt.want {
			t.Errorf("Reorder(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Reorder([]string{"memfs"}, testRoot()); !slices.Equal(got, []string{"memfs"}) {
		t.Errorf("Reorder(memfs) = %q", got)
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"mount", "unmount", "ls", "log", "--long", "-l", "--store"}
	for _, tt := range []struct{ word, want string }{
		{"mout", "mount"}, {"--lnog", "--long"}, {"--sto", "--store"}, {"lss", "ls"}, {"bogus", ""}, {"--bogus", ""},
	} {
		if got := Suggest(tt.word, names); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

// UsageError names an unknown flag with a near one and the usage line;
// another error of a command gets the usage line, the program's none.
func TestUsageError(t *testing.T) {
	ls := testRoot().Sub("ls")
	for _, tt := range []struct {
		cmd, err, want string
	}{
		{"ls", "flag provided but not defined: -lnog", "ls: unknown flag --lnog; did you mean --long?\nusage: memfs ls [flags] (add --help for more)"},
		{"ls", "invalid value \"x\" for flag -limit", "ls: invalid value \"x\" for flag -limit\nusage: memfs ls [flags]"},
		{"", "invalid value \"x\" for flag -limit", "invalid value \"x\" for flag -limit"},
	} {
		if got := ls.UsageError(tt.cmd, "memfs ls [flags]", errors.New(tt.err)); got.Error() != tt.want {
			t.Errorf("UsageError(%q, %q) = %q, want %q", tt.cmd, tt.err, got, tt.want)
		}
	}
}

func TestComplete(t *testing.T) {
	root := testRoot()
	root.Subs = append(root.Subs, &Command{Names: []string{"mount-helper"}, Hidden: true})
	args := func(path []string, n int) []string {
		if strings.Join(path, " ") == "hint" && n == 0 {
			return []string{"claude", "codex"}
		}
		return nil
	}
	for _, tt := range []struct{ in, want string }{
		{"", "ls hint history"},
		{"h", "hint history"},
		{"ls -", "--store --long -l --help"},
		{"ls memory/ --l", "--long"},
		{"ls --store ", ""},
		{"ls --store x --", "--store --long"},
		{"hint ", "claude codex"},
		{"hint c", "claude codex"},
		{"hint claude ", ""},
		{"history ", "redact"},
		{"history redact --v", "--version"},
		{"ls -- -", ""},
	} {
		words := strings.Split(tt.in, " ")
		var got []string
		for _, c := range Complete(words, root, args) {
			got = append(got, c.Word)
		}
		if g := strings.Join(got, " "); !strings.HasPrefix(g, tt.want) || (tt.want == "" && g != "") {
			t.Errorf("Complete(%q) = %q, want %q first", tt.in, g, tt.want)
		}
	}
}

func TestRelative(t *testing.T) {
	keys := []string{"a.md", "../skills/x", "/m/agents/p.json", "/elsewhere/y", "sub/"}
	for _, tt := range []struct{ cwd, want string }{
		{"/m/memory", "memory/a.md skills/x agents/p.json /elsewhere/y memory/sub/"},
		{"/m", "a.md ../skills/x agents/p.json /elsewhere/y sub/"},
		{"/home", "a.md ../skills/x /m/agents/p.json /elsewhere/y sub/"},
	} {
		if got := strings.Join(relative(keys, "/m", tt.cwd), " "); got != tt.want {
			t.Errorf("relative(cwd %s) = %q, want %q", tt.cwd, got, tt.want)
		}
	}
}
