package mounthelper

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/cliargs"
)

func TestArgs(t *testing.T) {
	isCommand := func(name string) bool { return slices.Contains([]string{"mount", "ls", "help"}, name) }
	isStore := func(src string) bool { return strings.HasPrefix(src, "badger:") || strings.HasPrefix(src, "dir:") }
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"helper link, as mount(8) runs it",
			[]string{"/sbin/mount.fuse.memfs", "badger:/s", "/m", "-v", "-o", "rw,ro"},
			[]string{"/sbin/mount.fuse.memfs", "mount-helper", "-v", "-o", "rw,ro", "badger:/s", "/m"}},
		{"helper link, no options",
			[]string{"/usr/sbin/mount.fuse.memfs", "dir:/s", "/m"},
			[]string{"/usr/sbin/mount.fuse.memfs", "mount-helper", "dir:/s", "/m"}},
		{"memfs run by mount.fuse3",
			[]string{"memfs", "dir:/s", "/m", "-o", "dev,suid"},
			[]string{"memfs", "mount-helper", "-o", "dev,suid", "dir:/s", "/m"}},
		{"store in the options",
			[]string{"memfs", "memfs", "/m", "-o", "store=dir:/s"},
			[]string{"memfs", "mount-helper", "-o", "store=dir:/s", "memfs", "/m"}},
		{"a command is never a source",
			[]string{"memfs", "mount", "/m", "-o", "x"},
			[]string{"memfs", "mount", "/m", "-o", "x"}},
		{"a command with a store-like argument",
			[]string{"memfs", "ls", "dir:/s"},
			[]string{"memfs", "ls", "dir:/s"}},
		{"two words that are no store",
			[]string{"memfs", "foo", "/m"},
			[]string{"memfs", "foo", "/m"}},
		{"umount helper, as umount(8) runs it",
			[]string{"/sbin/umount.fuse.memfs", "/m", "-l"},
			[]string{"/sbin/umount.fuse.memfs", "umount-helper", "-l", "/m"}},
		{"flags first",
			[]string{"memfs", "--help", "dir:/s"},
			[]string{"memfs", "--help", "dir:/s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Args(slices.Clone(tt.in), isCommand, isStore); !slices.Equal(got, tt.want) {
				t.Errorf("Args(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPlanMount(t *testing.T) {
	mount := &cliargs.Command{Names: []string{"mount"}} // the flags used below
	for _, name := range []string{"read-only", "allow-other", "debug", "index-at-mount", "xattrs"} {
		mount.Flags = append(mount.Flags, cliargs.Flag{Names: []string{name}})
	}
	for _, name := range []string{"flush-interval", "bootstrap", "max-file-size", "agent"} {
		mount.Flags = append(mount.Flags, cliargs.Flag{Names: []string{name}, Value: true})
	}
	o := PlanOptions{
		Mount: mount,
		Store: func(spec string) (string, error) {
			if !strings.HasPrefix(spec, "badger:") && !strings.HasPrefix(spec, "dir:") {
				return "", fmt.Errorf("%q: want badger:PATH or dir:PATH", spec)
			}
			return spec, nil
		},
	}
	tests := []struct {
		name    string
		source  string
		opts    []string
		want    []string // mount arguments between "--store SPEC" and the mountpoint
		store   string
		wantErr string
	}{
		{name: "generic options ignored", source: "badger:/s",
			opts: []string{"rw", "defaults", "noauto", "_netdev", "user", "nofail", "dev", "suid", "nosuid", "nodev", "exec", "relatime", "x-systemd.automount", "comment=x"},
			want: nil, store: "badger:/s"},
		{name: "ro and allow_other", source: "dir:/s", opts: []string{"ro", "allow_other"},
			want: []string{"--read-only", "--allow-other"}, store: "dir:/s"},
		{name: "memfs flags by name", source: "dir:/s",
			opts:  []string{"flush_interval=5s", "bootstrap=memory/", "bootstrap=skills/", "debug", "index-at-mount", "noxattrs", "max_file_size=1024"},
			want:  []string{"--flush-interval=5s", "--bootstrap=memory/", "--bootstrap=skills/", "--debug", "--index-at-mount", "--xattrs=false", "--max-file-size=1024"},
			store: "dir:/s"},
		{name: "store option wins over the source", source: "memfs", opts: []string{"store=dir:/t"}, store: "dir:/t"},
		{name: "helper options are not memfs flags", source: "dir:/s", opts: []string{"log=/tmp/x.log", "timeout=5s"}, store: "dir:/s"},
		{name: "unknown option", source: "dir:/s", opts: []string{"compress"}, wantErr: `unknown mount option "compress"`},
		{name: "no store", source: "memfs", wantErr: `SOURCE "memfs" (or -o store=SPEC): "memfs": want badger:PATH`},
		{name: "bad timeout", source: "dir:/s", opts: []string{"timeout=soon"}, wantErr: "timeout=soon"},
		{name: "timeout under its floor", source: "dir:/s", opts: []string{"timeout=1ns"}, wantErr: "option timeout=1ns: want a duration of at least 1s"},
		{name: "noexec is never dropped silently", source: "dir:/s", opts: []string{"noexec"}, wantErr: "option noexec"},
		{name: "a value option without its value", source: "dir:/s", opts: []string{"agent"}, wantErr: "option agent needs a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := PlanMount(tt.source, "/m", tt.opts, o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("PlanMount error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := append(append([]string{"mount", "--store", tt.store}, tt.want...), "/m")
			if !slices.Equal(p.MountArgs, want) {
				t.Errorf("mount arguments = %q, want %q", p.MountArgs, want)
			}
			if !slices.Contains(tt.opts, "log=/tmp/x.log") {
				return
			}
			if p.LogPath != "/tmp/x.log" || p.Timeout != 5*time.Second {
				t.Errorf("log %q timeout %v, want /tmp/x.log 5s", p.LogPath, p.Timeout)
			}
		})
	}
}

func TestLogPath(t *testing.T) {
	want := filepath.Join("/state", "log", "srv-memory.log")
	if os.Geteuid() == 0 {
		want = "/var/log/memfs/srv-memory.log"
	}
	if got := LogPath("/srv/memory", "/state"); got != want {
		t.Errorf("LogPath = %q, want %q", got, want)
	}
}

func TestLogSince(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("old\nnew\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := logSince(path, 4); got != "new\n" {
		t.Errorf("logSince = %q, want the lines after the offset", got)
	}
	if got := logSince(path, 100); got != "" {
		t.Errorf("logSince past the end = %q, want nothing", got)
	}
}

// Mount with fake (mount -f) plans and says the memfs mount it would run,
// each -o value split at its commas, and starts nothing; sloppy, it names
// the options it left out.
func TestMountFake(t *testing.T) {
	o := PlanOptions{
		Mount:    &cliargs.Command{Flags: []cliargs.Flag{{Names: []string{"read-only"}}, {Names: []string{"flush-interval"}, Value: true}}},
		Store:    func(spec string) (string, error) { return spec, nil },
		StateDir: "/state",
		Sloppy:   true,
	}
	var w, errw strings.Builder
	if err := Mount("dir:/s", "/m", []string{"ro,flush_interval=5s", "compress"}, o, false, true, &w, &errw); err != nil {
		t.Fatal(err)
	}
	if want := "memfs mount --store dir:/s --read-only --flush-interval=5s /m (log: " + LogPath("/m", "/state") + ")\n"; w.String() != want {
		t.Errorf("said %q, want %q", w.String(), want)
	}
	if want := "memfs: ignoring unknown mount options (sloppy): compress\n"; errw.String() != want {
		t.Errorf("warned %q, want %q", errw.String(), want)
	}
}

// TestMountHelpNamesTheOptions: each option the help names is one
// PlanMount takes (none is refused, sloppy or not), and the stores given
// are named.
func TestMountHelpNamesTheOptions(t *testing.T) {
	help := MountHelp("dir:PATH")
	o := PlanOptions{
		Mount: &cliargs.Command{Flags: []cliargs.Flag{{Names: []string{"allow-other"}}, {Names: []string{"flush-interval"}, Value: true},
			{Names: []string{"bootstrap"}, Value: true}, {Names: []string{"xattrs"}}}},
		Store: func(spec string) (string, error) { return spec, nil },
	}
	for _, opt := range []string{"ro", "rw", "allow_other", "store=dir:/t", "log=/x.log", "timeout=5s", "flush_interval=10s",
		"bootstrap=memory/", "noxattrs", "defaults", "dev", "suid", "exec", "auto", "user", "_netdev", "nofail", "atime", "x-systemd.automount"} {
		name, _, _ := strings.Cut(opt, "=")
		if !strings.Contains(help, strings.TrimSuffix(name, ".automount")) {
			t.Errorf("MountHelp does not name %s", name)
		}
		if _, err := PlanMount("dir:/s", "/m", []string{opt}, o); err != nil {
			t.Errorf("an option the help names is refused: %v", err)
		}
	}
	if !strings.Contains(help, "SOURCE is the store (dir:PATH)") || !strings.Contains(help, Name) {
		t.Errorf("MountHelp names neither the stores nor %s:\n%s", Name, help)
	}
}
