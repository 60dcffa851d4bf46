package main

import (
	"github.com/memfs/memfs/internal/flagrule"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestFlagValidation: every numeric and duration flag out of its range is
// refused before the command does any work, with an error that names the
// command, the flag, the value as given and what is accepted. The store
// and the mountpoint named do not exist: a command that went on would
// create the store or fail on them, with another error.
func TestFlagValidation(t *testing.T) {
	tests := []struct {
		args []string // between the command and its --store / arguments
		want string   // in the error, after "command: "
	}{
		{[]string{"mount", "--max-file-size", "0"}, "--max-file-size 0: want a size in bytes of at least 1"},
		{[]string{"mount", "--max-file-size", "-1"}, "--max-file-size -1: want a size in bytes of at least 1"},
		{[]string{"mount", "--flush-interval", "-5s"}, "--flush-interval -5s: want 0 (flush only on fsync and unmount) or a duration of at least 100ms"},
		{[]string{"mount", "--attr-timeout", "-1s"}, "--attr-timeout -1s: want 0 (the kernel caches no attribute) or a duration of at least 1ms"},
		{[]string{"mount", "--entry-timeout", "-1ms"}, "--entry-timeout -1ms: want 0 (the kernel caches no name) or a duration of at least 1ms"},
		// Floors: a flush every nanosecond kept an idle mount at 60-77% of a core.
		{[]string{"mount", "--flush-interval", "1ns"}, "--flush-interval 1ns: want 0 (flush only on fsync and unmount) or a duration of at least 100ms"},
		{[]string{"mount", "--flush-interval", "99ms"}, "--flush-interval 99ms: want 0 (flush only on fsync and unmount) or a duration of at least 100ms"},
		{[]string{"mount", "--attr-timeout", "1ns"}, "--attr-timeout 1ns: want 0 (the kernel caches no attribute) or a duration of at least 1ms"},
		{[]string{"mount", "--entry-timeout", "999us"}, "--entry-timeout 999µs: want 0 (the kernel caches no name) or a duration of at least 1ms"},
		{[]string{"unmount", "--timeout", "0s"}, "--timeout 0s: want a duration of at least 1s"},
		{[]string{"unmount", "--timeout", "-1m"}, "--timeout -1m0s: want a duration of at least 1s"},
		{[]string{"unmount", "--timeout", "1ns"}, "--timeout 1ns: want a duration of at least 1s"},
		{[]string{"log", "--limit", "0"}, "--limit 0: want a number of events of at least 1"},
		{[]string{"log", "--limit", "-1"}, "--limit -1: want a number of events of at least 1"},
		{[]string{"log", "--before", "0"}, "--before 0: want a sequence number of at least 1"},
		{[]string{"ls", "--importance-min", "NaN"}, "--importance-min NaN: want a number from 0.0 to 1.0"},
		{[]string{"ls", "--importance-min", "1.5"}, "--importance-min 1.5: want a number from 0.0 to 1.0"},
		{[]string{"ls", "--importance-min", "-0.1"}, "--importance-min -0.1: want a number from 0.0 to 1.0"},
		{[]string{"search", "--top-k", "0"}, "--top-k 0: want a number of results of at least 1"},
		{[]string{"search", "--top-k", "-3"}, "--top-k -3: want a number of results of at least 1"},
		{[]string{"search", "--min-score", "-1"}, "--min-score -1: want a score of at least 0"},
		{[]string{"search", "--min-score", "NaN"}, "--min-score NaN: want a score of at least 0"},
		{[]string{"search", "--min-score", "Inf"}, "--min-score +Inf: want a score of at least 0"},
		{[]string{"search", "--importance-min", "2"}, `--importance-min "2": want a number from 0.0 to 1.0`},
		{[]string{"search", "--importance-min", "high"}, `--importance-min "high": want a number from 0.0 to 1.0`},
		{[]string{"context", "--max-chars", "0"}, "--max-chars 0: want a budget in characters of at least 1"},
		{[]string{"context", "--summaries", "-1"}, "--summaries -1: want a number of summaries of at least 0 (0: none)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			store := filepath.Join(dir, "store")
			args := slices.Clone(tt.args)
			cmd := args[0]
			if cmd != "unmount" {
				args = append(args, "--store", "dir:"+store)
			}
			switch cmd {
			case "mount", "unmount":
				args = append(args, filepath.Join(dir, "mnt"))
			case "search":
				args = append(args, "query")
			}
			out, errOut, err := run(t, "", args...)
			if err == nil {
				t.Fatalf("memfs %s succeeded, want an error\nstdout: %s\nstderr: %s", strings.Join(args, " "), out, errOut)
			}
			if want := cmd + ": " + tt.want; !strings.Contains(err.Error(), want) {
				t.Fatalf("memfs %s = %q, want it to contain %q", strings.Join(args, " "), err, want)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
			if _, err := os.Stat(store); !os.IsNotExist(err) {
				t.Errorf("the store %s was touched (stat: %v): the command did work before refusing its flag", store, err)
			}
		})
	}
}

// TestFlagZeroKeepsItsMeaning: where 0 means something (no periodic flush,
// no kernel caching, no summaries, from the first event) it is accepted,
// as is each floor itself; the command then fails on what comes after the
// flags, never on them.
func TestFlagZeroKeepsItsMeaning(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"mount", "--flush-interval", "0", "--attr-timeout", "0", "--entry-timeout", "0", "--max-file-size", "1", "--store", "dir:" + dir, filepath.Join(dir, "missing")},
		{"mount", "--flush-interval", "100ms", "--attr-timeout", "1ms", "--entry-timeout", "1ms", "--store", "dir:" + dir, filepath.Join(dir, "missing")},
		{"unmount", "--timeout", "1s", filepath.Join(dir, "missing")},
		{"log", "--after", "0", "--store", "dir:" + filepath.Join(dir, "missing")},
		{"context", "--summaries", "0", "--store", "dir:" + filepath.Join(dir, "missing")},
	} {
		_, _, err := run(t, "", args...)
		if err == nil || strings.Contains(err.Error(), ": want ") {
			t.Errorf("memfs %s = %v, want an error about the missing path, not about a flag", strings.Join(args, " "), err)
		}
	}
}

// TestEveryNumericFlagHasARule keeps flagrule's table complete: every numeric or
// duration flag of every command has a rule, every rule names a flag of
// its command, and every default passes its rule.
func TestEveryNumericFlagHasARule(t *testing.T) {
	var walk func(parent string, cmds []*cli.Command)
	walk = func(parent string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			full := strings.TrimSpace(parent + " " + cmd.Name) // "repo ls" is not "ls"
			rules := flagrule.For(full)
			for _, f := range cmd.Flags {
				name := f.Names()[0]
				i := slices.IndexFunc(rules, func(r flagrule.Rule) bool { return r.Name == name })
				switch f.(type) {
				case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag, *cli.Float64Flag, *cli.DurationFlag,
					*cli.IntSliceFlag, *cli.Int64SliceFlag, *cli.UintSliceFlag, *cli.Uint64SliceFlag, *cli.Float64SliceFlag:
					if i < 0 {
						t.Errorf("memfs %s --%s (%T) has no rule in flagrule's table", full, name, f)
						continue
					}
				}
				if i < 0 {
					continue
				}
				var def any
				switch f := f.(type) {
				case *cli.IntFlag:
					def = f.Value
				case *cli.Int64Flag:
					def = f.Value
				case *cli.Uint64Flag:
					def = f.Value
				case *cli.Float64Flag:
					def = f.Value
				case *cli.DurationFlag:
					def = f.Value
				case *cli.StringFlag:
					def = f.Value
				default:
					t.Errorf("memfs %s --%s: %T, which the rules do not read", full, name, f)
					continue
				}
				// A zero default is "unset" (no bound, no filter): never checked.
				if err := rules[i].Check(full, def); err != nil && !reflect.ValueOf(def).IsZero() {
					t.Errorf("the default of memfs %s --%s breaks its rule: %v", full, name, err)
				}
			}
			for _, r := range rules {
				if !slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return f.Names()[0] == r.Name }) {
					t.Errorf("flagrule.For(%q) has a rule for --%s, which the command does not have", full, r.Name)
				}
			}
			walk(full, cmd.Subcommands)
		}
	}
	walk("", newApp(io.Discard, io.Discard).Commands)
}

// TestLogAfterZero: --after 0 pages forward from the first event, as its
// Usage says (it used to mean "no bound" and show the latest events).
func TestLogAfterZero(t *testing.T) {
	store := "dir:" + t.TempDir()
	for _, k := range []string{"k1", "k2", "k3"} {
		mustRun(t, "x\n", "put", "--store", store, k)
	}
	out, errOut, err := run(t, "", "log", "--store", store, "--after", "0", "--limit", "1")
	if err != nil {
		t.Fatalf("memfs log --after 0: %v\n%s", err, errOut)
	}
	if f := strings.Fields(out); len(f) < 5 || f[0] != "1" || f[4] != "k1" {
		t.Errorf("memfs log --after 0 --limit 1 = %q, want the first event (seq 1, k1)", out)
	}
	if !strings.Contains(errOut, "(more: --after 1)") {
		t.Errorf("stderr = %q, want the hint for the next page forward", errOut)
	}
}
