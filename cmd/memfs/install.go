package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend"
)

// The completion scripts follow urfave/cli v2.27's autocomplete/ scripts
// (MIT): the shell asks "memfs ... --generate-bash-completion" for the
// words that may come next (EnableBashCompletion in newApp).
const bashCompletion = `# bash completion for memfs (memfs completion bash)
_memfs_complete() {
  if [[ "${COMP_WORDS[0]}" != "source" ]]; then
    local cur opts words cword
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    if declare -F _init_completion >/dev/null 2>&1; then
      _init_completion -n "=:" || return
    else
      words=("${COMP_WORDS[@]}")
      cword=$COMP_CWORD
    fi
    words=("${words[@]:0:$cword}")
    if [[ "$cur" == "-"* ]]; then
      opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
    else
      opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
    fi
    COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
    return 0
  fi
}
complete -o bashdefault -o default -F _memfs_complete memfs
`

// zshCompletion works both from fpath (autoloaded as _memfs) and sourced.
// "0=zsh" asks urfave/cli for "name:usage" lines, which _describe shows.
const zshCompletion = `#compdef memfs
# zsh completion for memfs (memfs completion zsh)
_memfs() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(env 0=zsh ${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(env 0=zsh ${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
if [[ "${funcstack[1]}" == "_memfs" ]]; then
  _memfs "$@"
else
  compdef _memfs memfs
fi
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash or zsh",
		ArgsUsage: "bash|zsh",
		Description: "bash: memfs completion bash > /usr/local/share/bash-completion/completions/memfs\n" +
			"     (or: source <(memfs completion bash))\n" +
			"zsh:  memfs completion zsh > \"${fpath[1]}/_memfs\" (or source it after compinit)\n" +
			"memfs install writes both.",
		Action: func(c *cli.Context) error {
			script, err := completionScript(c.Args().First())
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

func completionScript(shell string) (string, error) {
	switch shell {
	case "bash":
		return bashCompletion, nil
	case "zsh":
		return zshCompletion, nil
	}
	return "", fmt.Errorf("completion: want bash or zsh, got %q", shell)
}

func manCommand() *cli.Command {
	return &cli.Command{
		Name:  "man",
		Usage: "print the memfs(1) man page (roff)",
		Description: "memfs man > /usr/local/share/man/man1/memfs.1 (memfs install writes it);\n" +
			"read it now with: memfs man | man -l -",
		Action: func(c *cli.Context) error {
			page, err := manPage(c.App)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, page)
			return err
		},
	}
}

// manPage renders the app's commands and flags as a section 1 man page.
func manPage(app *cli.App) (string, error) {
	page, err := app.ToManWithSection(1)
	if err != nil {
		return "", fmt.Errorf("man: %w", err)
	}
	return page + manSystem, nil
}

// manSystem documents what the commands' help cannot: mount(8), fstab and
// the files memfs uses.
const manSystem = `
.SH MOUNT(8) AND /ETC/FSTAB
With \fI/sbin/mount.fuse.memfs\fP linked to memfs (\fBmemfs install\fP), or memfs in
/usr/local/bin or /usr/bin and fuse3's mount.fuse installed:
.PP
.EX
mount -t fuse.memfs badger:/var/lib/memfs/store /srv/memory -o allow_other
.EE
.PP
and in /etc/fstab (the store is the first field, or \fBstore=\fP with any first field):
.PP
.EX
badger:/var/lib/memfs/store  /srv/memory  fuse.memfs  defaults,_netdev,flush_interval=10s  0  0
.EE
.PP
Options: \fBro\fP, \fBallow_other\fP, \fBstore=\fP\fISPEC\fP, \fBlog=\fP\fIFILE\fP, \fBtimeout=\fP\fIDURATION\fP (how long
mount waits for the mount to serve; 2m), and every flag of \fBmemfs mount\fP as \fINAME\fP=\fIVALUE\fP or \fINAME\fP
(flush_interval=10s, bootstrap=memory/ repeated for more prefixes, noxattrs); the generic
options (defaults, rw, dev, suid, exec, auto, noauto, user, _netdev, nofail, x-systemd.*, ...)
are accepted and ignored; any other option is refused. The helper starts \fBmemfs mount\fP in the
background and returns once the mount serves, or fails with the server's error.
Unmount with \fBmemfs unmount\fP \fIDIR\fP or \fBumount\fP \fIDIR\fP: with \fI/sbin/umount.fuse.memfs\fP (\fBmemfs install\fP)
umount returns once memfs has made its last flush and exited; without it, memfs flushes
just after the unmount.
.SH FILES
.TP
\fI/var/log/memfs/MOUNTPOINT.log\fP
log of a mount started by mount(8) as root (slashes of the mountpoint as dashes);
\fI$XDG_STATE_HOME/memfs/log/\fP for other users
.TP
\fI~/.local/share/memfs/store\fP
the default store (badger)
.TP
\fIcontrib/systemd/\fP
systemd units in the source tree: \fBmemfs@.service\fP (system) and \fBuser/memfs@.service\fP
.SH SEE ALSO
mount(8), fstab(5), mount.fuse3(8), systemd.service(5)
`

func installCommand() *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "install the mount helper (mount -t fuse.memfs, /etc/fstab), shell completions and the man page",
		Description: "Writes, replacing what an earlier install wrote:\n" +
			"  HELPER-DIR/mount.fuse.memfs -> this memfs binary (mount(8) looks only in /sbin and /usr/sbin)\n" +
			"  HELPER-DIR/umount.fuse.memfs -> the same (umount then waits for memfs's last flush)\n" +
			"  PREFIX/share/bash-completion/completions/memfs\n" +
			"  PREFIX/share/zsh/site-functions/_memfs\n" +
			"  PREFIX/share/man/man1/memfs.1\n" +
			"Links are never followed: a symlink where a file goes is refused (remove it first; nothing\n" +
			"is written then), and a symlink where a helper link goes is replaced, with a \"replaced\" line\n" +
			"naming what it pointed to; a file where a helper link goes is refused.\n" +
			"Without the helper link, mount(8) falls back to fuse3's mount.fuse, which runs \"memfs\" from\n" +
			"/usr/local/bin, /usr/bin or /bin (not your PATH).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "prefix", Value: "/usr/local", Usage: "where share/ goes"},
			&cli.StringFlag{Name: "helper-dir", Usage: "where the mount.fuse.memfs and umount.fuse.memfs links go", DefaultText: "/sbin, or PREFIX/sbin with --prefix"},
		},
		Action: installAction,
	}
}

func installAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return fmt.Errorf("install: takes no arguments, got %q", c.Args().Slice())
	}
	prefix, err := filepath.Abs(c.String("prefix"))
	if err != nil {
		return err
	}
	helperDir := c.String("helper-dir")
	switch {
	case helperDir != "":
	case c.IsSet("prefix"):
		helperDir = filepath.Join(prefix, "sbin")
	default:
		helperDir = "/sbin"
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("install: cannot find the memfs binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	page, err := manPage(c.App)
	if err != nil {
		return err
	}
	files := []struct {
		path, content string
	}{
		{filepath.Join(prefix, "share/bash-completion/completions/memfs"), bashCompletion},
		{filepath.Join(prefix, "share/zsh/site-functions/_memfs"), zshCompletion},
		{filepath.Join(prefix, "share/man/man1/memfs.1"), page},
	}
	links := []string{filepath.Join(helperDir, helperName), filepath.Join(helperDir, umountHelperName)}
	// Every place is checked before anything is written: a refusal
	// leaves the machine as it was.
	for _, f := range files {
		if err := checkInstallFile(f.path); err != nil {
			return err
		}
	}
	for _, link := range links {
		if err := checkInstallLink(link); err != nil {
			return err
		}
	}
	for _, link := range links {
		old, err := installLink(link, self)
		if err != nil {
			return err
		}
		if old != "" && old != self {
			fmt.Fprintf(c.App.Writer, "replaced %s -> %s\n", link, old)
		}
		fmt.Fprintf(c.App.Writer, "%s -> %s\n", link, self)
	}
	if strings.HasPrefix(self, os.TempDir()+"/") {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s is a temporary binary (go run, go test): build or go install memfs, then install again\n", self)
	}
	for _, f := range files {
		if err := installFile(f.path, []byte(f.content)); err != nil {
			return err
		}
		fmt.Fprintln(c.App.Writer, f.path)
	}
	return nil
}

// checkInstallFile refuses to install a file at path when a symlink is
// there (as root, writing through it would overwrite whatever it names)
// or anything but a regular file (an earlier install).
func checkInstallFile(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("install: %w", err)
	case fi.Mode().Type() == fs.ModeSymlink:
		target, _ := os.Readlink(path)
		return fmt.Errorf("install: %s is a symlink (to %s): memfs writes no file through a link; remove it if memfs should put its own file there", path, target)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("install: %s is a %s, not a file; remove it if memfs should put its file there", path, backend.TypeName(fi.Mode()))
	}
	return nil
}

// checkInstallLink refuses a helper link's place when something other
// than a symlink is there: that is someone else's helper.
func checkInstallLink(link string) error {
	fi, err := os.Lstat(link)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("install: %w", err)
	case fi.Mode().Type() != fs.ModeSymlink:
		return fmt.Errorf("install: %s exists and is not a symlink; remove it first if memfs should replace it", link)
	}
	return nil
}

// installFile writes data to a new file beside path, made with O_EXCL and
// O_NOFOLLOW, and renames it over path: a symlink that appears at either
// name meanwhile is replaced as a name, never written through.
func installFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	tmp := path + ".memfs-new"
	os.Remove(tmp) // a leftover of an interrupted install (a symlink itself, if one)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644) // the umask took bits off
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("install: %w", err)
	}
	return nil
}

// installLink makes link a symlink to target, replacing the symlink
// there (an earlier install's, or another's: checkInstallLink refused
// anything else) as a name, never following it. It returns the target of
// the link it replaced, "" if none.
func installLink(link, target string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	old, _ := os.Readlink(link)
	// A new name renamed over the old one: the helper is never missing.
	tmp := link + ".memfs-new"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("install: %w", err)
	}
	return old, nil
}
