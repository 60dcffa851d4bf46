package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestDotfilesAreKeys(t *testing.T) {
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mustRun(t, "hidden\n", "put", "--store", store, "memory/.hidden.md")
			mustRun(t, "env\n", "put", "--store", store, ".env")
			if got := mustRun(t, "", "cat", "--store", store, "memory/.hidden.md"); got != "hidden\n" {
				t.Errorf("cat memory/.hidden.md = %q, want %q", got, "hidden\n")
			}
			if got := mustRun(t, "", "ls", "--store", store); got != ".env\nmemory/.hidden.md\n" {
				t.Errorf("ls = %q, want both dotfiles", got)
			}
			mustRun(t, "", "rm", "--store", store, "memory/.hidden.md")
			if got := mustRun(t, "", "ls", "--store", store); got != ".env\n" {
				t.Errorf("ls after rm = %q, want %q", got, ".env\n")
			}
		})
	}
}

func TestStoreCommandsRefuseSessionOnlyNames(t *testing.T) {
	store := "dir:" + t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"put", "--store", store, "memory/.x.swp"}, "put: memory/.x.swp: a transient editor file lives only in a mounted session"},
		{[]string{"put", "--store", store, "memory/4913"}, "transient editor file"},
		{[]string{"put", "--store", store, ".#notes.md"}, "transient editor file"},
		{[]string{"put", "--store", store, ".memfs/search/x"}, "reserved for memfs's own files"},
		{[]string{"put", "--store", store, "a/.memfs-tmp-1"}, "reserved for memfs's own files"},
		{[]string{"cat", "--store", store, "memory/.x.swp"}, "transient editor file"},
		{[]string{"rm", "--store", store, "memory/.x.swp"}, "transient editor file"},
		{[]string{"rm", "-r", "--store", store, ".memfs-x/"}, "reserved"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[3:], " ")+" "+tt.args[0], func(t *testing.T) {
			_, _, err := run(t, "data", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("memfs %s = %v, want an error saying %q", strings.Join(tt.args, " "), err, tt.want)
			}
		})
	}
	// The process exits 1 and says why.
	cmd := exec.Command(os.Args[0], "put", "--store", store, "memory/.x.swp")
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	cmd.Stdin = strings.NewReader("swap")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("memfs put memory/.x.swp: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "memory/.x.swp: a transient editor file") {
		t.Errorf("memfs put memory/.x.swp said %q, want the reason", out)
	}
	if got := mustRun(t, "", "ls", "--store", store); got != "" {
		t.Errorf("ls after refused puts = %q, want nothing", got)
	}
}

func TestTransientFlag(t *testing.T) {
	tests := []struct {
		values  []string
		want    []string
		wantErr string
	}{
		{[]string{"*.tmp"}, []string{"*.tmp"}, ""},
		{[]string{"*.tmp", ".*.sw?"}, []string{"*.tmp", ".*.sw?"}, ""},
		{[]string{""}, []string{}, ""},
		{[]string{"["}, nil, `transient pattern "["`},
		{[]string{"a/b"}, nil, "without /"},
		{[]string{"", "*.tmp"}, nil, "cannot go with patterns"},
	}
	for _, tt := range tests {
		got, err := parseTransient(tt.values)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseTransient(%q) = %v, want an error saying %q", tt.values, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("parseTransient(%q): %v", tt.values, err)
		case got == nil || strings.Join(got, "\x00") != strings.Join(tt.want, "\x00"):
			t.Errorf("parseTransient(%q) = %#v, want %#v", tt.values, got, tt.want)
		}
	}
	// The mount refuses a bad pattern before it mounts anything.
	store := "dir:" + t.TempDir()
	for _, args := range [][]string{
		{"mount", "--store", store, "--transient", "[", t.TempDir()},
		{"mount", "--store", store, "--transient", "*.tmp", "--no-transient", t.TempDir()},
	} {
		_, _, err := run(t, "", args...)
		if err == nil || !strings.HasPrefix(err.Error(), "mount: ") || !strings.Contains(err.Error(), "transient") {
			t.Errorf("memfs %s = %v, want a mount: error about --transient", strings.Join(args, " "), err)
		}
	}
}
