// Package install puts memfs's files on a system: the mount(8) and
// umount(8) helper links, the shell completion scripts, the man page and
// the systemd units (memfs install). It never follows a symlink: a symlink where a file
// goes is refused, and one where a helper link goes is replaced as a
// name. Every place is checked before anything is written, so that a
// refusal leaves the system as it was.
//
// # Concurrency
//
// Install is not meant to run twice at once on the same places: the last
// rename wins.
package install

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/memfs/memfs/backend"
)

// The completion scripts follow urfave/cli v2.27's autocomplete/ scripts
// (MIT): the shell asks "memfs WORDS CUR --generate-bash-completion" for
// the words that may replace CUR, the word under the cursor, always given
// ("" for a new word) so that "--store " and "--sto" differ
// (cliargs.Complete answers).
const BashCompletion = `# bash completion for memfs (memfs completion bash)
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
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
    COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
    return 0
  fi
}
complete -o bashdefault -o default -F _memfs_complete memfs
`

// ZshCompletion works both from fpath (autoloaded as _memfs) and sourced.
// "0=zsh" asks urfave/cli for "name:usage" lines, which _describe shows.
const ZshCompletion = `#compdef memfs
# zsh completion for memfs (memfs completion zsh)
_memfs() {
  local -a opts
  local cur=${words[-1]}
  opts=("${(@f)$(env 0=zsh ${words[@]:0:#words[@]-1} "${cur}" --generate-bash-completion 2>/dev/null)}")
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

// Completion returns the completion script of shell, bash or zsh.
func Completion(shell string) (string, error) {
	switch shell {
	case "bash":
		return BashCompletion, nil
	case "zsh":
		return ZshCompletion, nil
	}
	return "", fmt.Errorf("completion: want bash or zsh, got %q", shell)
}

// Where Install writes the systemd units, under PREFIX.
const (
	SystemUnit = "lib/systemd/system/memfs@.service"
	UserUnit   = "lib/systemd/user/memfs@.service"
)

// Description is memfs install's help text.
const Description = "Writes, replacing what an earlier install wrote:\n" +
	"  HELPER-DIR/mount.fuse.memfs -> this memfs binary (mount(8) looks only in /sbin and /usr/sbin)\n" +
	"  HELPER-DIR/umount.fuse.memfs -> the same (umount then waits for memfs's last flush)\n" +
	"  PREFIX/share/bash-completion/completions/memfs\n" +
	"  PREFIX/share/zsh/site-functions/_memfs\n" +
	"  PREFIX/share/man/man1/memfs.1\n" +
	"  PREFIX/" + SystemUnit + " (systemctl enable --now memfs@$(systemd-escape --path DIR))\n" +
	"  PREFIX/" + UserUnit + " (systemctl --user enable --now memfs@memory: ~/memory,\n" +
	"    from the default store unless ~/.config/memfs/memory.env sets MEMFS_STORE)\n" +
	"The units run this memfs binary, as the helper links do: install again after moving it.\n" +
	"Links are never followed: a symlink where a file goes is refused (remove it first; nothing\n" +
	"is written then), and a symlink where a helper link goes is replaced, with a \"replaced\" line\n" +
	"naming what it pointed to; a file where a helper link goes is refused.\n" +
	"Without the helper link, mount(8) falls back to fuse3's mount.fuse, which runs \"memfs\" from\n" +
	"/usr/local/bin, /usr/bin or /bin (not your PATH)."

// Options says what Install puts where.
type Options struct {
	Prefix    string   // where share/ and lib/systemd/ go
	HelperDir string   // where the helper links go
	Helpers   []string // the helper links' names (mount.fuse.memfs, umount.fuse.memfs)
	Self      string   // what the helper links name: the memfs binary
	ManPage   string   // the man page, roff
}

// Install writes the helper links and the files (completions, man page,
// systemd units),
// replacing what an earlier install wrote, and says on w what it wrote;
// a Self in the temporary directory is warned about on warn.
func Install(o Options, w, warn io.Writer) error {
	files := []struct {
		path, content string
	}{
		{filepath.Join(o.Prefix, "share/bash-completion/completions/memfs"), BashCompletion},
		{filepath.Join(o.Prefix, "share/zsh/site-functions/_memfs"), ZshCompletion},
		{filepath.Join(o.Prefix, "share/man/man1/memfs.1"), o.ManPage},
		// In systemd's unit search paths for PREFIX /usr/local
		// (systemd.unit(5)); their commands run the binary the
		// helper links name.
		{filepath.Join(o.Prefix, SystemUnit), Unit(false, o.Self)},
		{filepath.Join(o.Prefix, UserUnit), Unit(true, o.Self)},
	}
	links := make([]string, len(o.Helpers))
	for i, h := range o.Helpers {
		links[i] = filepath.Join(o.HelperDir, h)
	}
	// Every place is checked before anything is written: a refusal
	// leaves the machine as it was.
	for _, f := range files {
		if err := checkFile(f.path); err != nil {
			return err
		}
	}
	for _, l := range links {
		if err := checkLink(l); err != nil {
			return err
		}
	}
	for _, l := range links {
		old, err := link(l, o.Self)
		if err != nil {
			return err
		}
		if old != "" && old != o.Self {
			fmt.Fprintf(w, "replaced %s -> %s\n", l, old)
		}
		fmt.Fprintf(w, "%s -> %s\n", l, o.Self)
	}
	if strings.HasPrefix(o.Self, os.TempDir()+"/") {
		fmt.Fprintf(warn, "warning: %s is a temporary binary (go run, go test): build or go install memfs, then install again\n", o.Self)
	}
	for _, f := range files {
		if err := writeFile(f.path, []byte(f.content)); err != nil {
			return err
		}
		fmt.Fprintln(w, f.path)
	}
	return nil
}

// checkFile refuses to install a file at path when a symlink is
// there (as root, writing through it would overwrite whatever it names)
// or anything but a regular file (an earlier install).
func checkFile(path string) error {
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

// checkLink refuses a helper link's place when something other
// than a symlink is there: that is someone else's helper.
func checkLink(link string) error {
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

// writeFile writes data to a new file beside path, made with O_EXCL and
// O_NOFOLLOW, and renames it over path: a symlink that appears at either
// name meanwhile is replaced as a name, never written through.
func writeFile(path string, data []byte) error {
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

// link makes link a symlink to target, replacing the symlink
// there (an earlier install's, or another's: checkLink refused
// anything else) as a name, never following it. It returns the target of
// the link it replaced, "" if none.
func link(link, target string) (string, error) {
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

// Locate fills in where Install writes: Prefix made absolute; HelperDir,
// when empty, /sbin (where mount(8) looks), or PREFIX/sbin for a prefix
// the user chose (prefixGiven); Self, this running binary, its symlinks
// resolved.
func (o *Options) Locate(prefixGiven bool) error {
	prefix, err := filepath.Abs(o.Prefix)
	if err != nil {
		return err
	}
	o.Prefix = prefix
	switch {
	case o.HelperDir != "":
	case prefixGiven:
		o.HelperDir = filepath.Join(prefix, "sbin")
	default:
		o.HelperDir = "/sbin"
	}
	if o.Self, err = os.Executable(); err != nil {
		return fmt.Errorf("install: cannot find the memfs binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(o.Self); err == nil {
		o.Self = r
	}
	return nil
}
