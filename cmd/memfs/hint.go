package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/mountclient"
	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend"
)

// hintFiles names each agent's instructions file.
var hintFiles = map[string]string{
	"claude": "CLAUDE.md",
	"codex":  "AGENTS.md",
	"gemini": "GEMINI.md",
}

// The hint is written between these lines, and replaced there on the next
// --write: the rest of the file is the user's.
const (
	hintBegin = "<!-- memfs:begin (written by memfs hint; replaced on the next memfs hint --write) -->"
	hintEnd   = "<!-- memfs:end -->"
)

// mountPlaceholder stands for the mountpoint when none is given or found.
const mountPlaceholder = "<MEMFS_MOUNT>"

func hintCommand() *cli.Command {
	return &cli.Command{
		Name:      "hint",
		Usage:     "print, or write into CLAUDE.md / AGENTS.md / GEMINI.md, where the agent's memory is and how to use it",
		ArgsUsage: "claude|codex|gemini [FILE]",
		Description: "Prints a short section for the agent's instructions file. With --write, puts it into FILE\n" +
			"(default: CLAUDE.md, AGENTS.md or GEMINI.md in the current directory) between marker\n" +
			"lines: a second run replaces that section in place, and changes nothing if it is the same.\n" +
			"The mountpoint is --mount, else the one memfs mount of yours found in /proc/self/mountinfo\n" +
			"(other users' mounts are not candidates), else the placeholder " + mountPlaceholder + " to fill in.\n" +
			"FILE may be a symlink (a dotfiles manager's): it stays one, and the section is written into\n" +
			"the file it names when that is a regular file of yours; any other target is refused, unchanged.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "mount", Usage: "where the memory is mounted"},
			&cli.BoolFlag{Name: "write", Usage: "write the section into FILE instead of printing it"},
		},
		Action: hintAction,
	}
}

func hintAction(c *cli.Context) error {
	agent := c.Args().First()
	file, ok := hintFiles[agent]
	if !ok {
		return fmt.Errorf("hint: unknown agent %q; want one of: claude, codex, gemini", agent)
	}
	if c.NArg() > 2 || (c.NArg() == 2 && !c.Bool("write")) {
		return fmt.Errorf("hint: want AGENT, and FILE only with --write; got %q", c.Args().Slice())
	}
	mnt := c.String("mount")
	if mnt == "" {
		mounts := mountPoints(ownMounts(mountclient.Mounts(), uint32(os.Getuid())))
		switch len(mounts) {
		case 0:
			mnt = mountPlaceholder
			fmt.Fprintf(c.App.ErrWriter, "hint: no memfs mount found; replace %s with the mountpoint, or pass --mount DIR\n", mountPlaceholder)
		case 1:
			mnt = mounts[0]
		default:
			return fmt.Errorf("hint: several memfs mounts (%s); choose one with --mount DIR", strings.Join(mounts, ", "))
		}
	} else if abs, err := filepath.Abs(mnt); err == nil {
		mnt = abs
	}
	section := hintSection(agent, mnt)
	if !c.Bool("write") {
		_, err := fmt.Fprint(c.App.Writer, section)
		return err
	}
	if c.NArg() == 2 {
		file = c.Args().Get(1)
	}
	changed, err := writeHint(file, section)
	if err != nil {
		return fmt.Errorf("hint: %w", err)
	}
	if changed {
		fmt.Fprintf(c.App.Writer, "%s: memfs section written\n", file)
	} else {
		fmt.Fprintf(c.App.Writer, "%s: memfs section already up to date\n", file)
	}
	return nil
}

// hintSection is the section for agent, markers included.
func hintSection(agent, mnt string) string {
	m := mnt
	var b strings.Builder
	b.WriteString(hintBegin + "\n")
	b.WriteString("## Memory (memfs)\n\n")
	fmt.Fprintf(&b, "Your long-term memory is a directory mounted at `%s` (memfs): plain files, read and\n", m)
	b.WriteString("written with ordinary file tools; what you write there persists across sessions.\n\n")
	b.WriteString("Read first:\n")
	fmt.Fprintf(&b, "- `%s/.memfs/context.md`: the context pack in one bounded file: the index of skills, the\n  latest step summaries, and the notes that matter most (importance, recency).\n", m)
	fmt.Fprintf(&b, "- `%s/memory/`: notes; `memory/global.md` always applies, `memory/<project>/` per project.\n", m)
	fmt.Fprintf(&b, "- `%s/skills/*/SKILL.md`: skills (front matter: name, description); open a skill's\n  `resources/` only when the skill calls for them.\n", m)
	fmt.Fprintf(&b, "- `%s/agents/*.json`: sub-agent profiles.\n\n", m)
	b.WriteString("Search in your own words: with an embedder (`.memfs/status` says), notes are found by\n")
	b.WriteString("meaning as well as by their words. The query is the file name; filters as words: `tag:X`,\n")
	b.WriteString("`top:5`, `since:24h`, `prefix:memory%2Fproject`, `mode:keyword` for the words alone:\n\n")
	fmt.Fprintf(&b, "    cat %s\n", shellQuote(m+"/.memfs/search/kernel cache tag:fuse top:5"))
	fmt.Fprintf(&b, "    cat %s    # a context pack, its notes ranked by a query\n\n", shellQuote(m+"/.memfs/context/kernel cache"))
	b.WriteString("Write one topic per Markdown file under `memory/`, then tag it (extended attributes):\n\n")
	note := shellQuote(m + "/memory/NOTE.md")
	fmt.Fprintf(&b, "    setfattr -n user.memfs.tags -v 'go,fuse' %s\n", note)
	fmt.Fprintf(&b, "    setfattr -n user.memfs.importance -v 0.8 %s\n", note)
	fmt.Fprintf(&b, "    setfattr -n user.memfs.source -v agent %s\n", note)
	fmt.Fprintf(&b, "    setfattr -n user.memfs.agent -v %s %s\n", agent, note)
	fmt.Fprintf(&b, "    getfattr -d -m user.memfs %s\n\n", note)
	b.WriteString("Do not keep secrets in memory: they are redacted before anything is stored.\n")
	b.WriteString(hintEnd + "\n")
	return b.String()
}

// writeHint puts section into file: in place of an earlier memfs section,
// else appended. It reports whether the file changed. A symlink is
// written through (hintTarget), never replaced.
func writeHint(file, section string) (bool, error) {
	file, err := hintTarget(file)
	if err != nil {
		return false, err
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	var updated []byte
	begin := bytes.Index(old, []byte(hintBegin))
	end := bytes.Index(old, []byte(hintEnd))
	switch {
	case begin >= 0 && end > begin:
		end += len(hintEnd)
		if end < len(old) && old[end] == '\n' {
			end++
		}
		updated = slices.Concat(old[:begin], []byte(section), old[end:])
	case begin >= 0 || end >= 0:
		return false, fmt.Errorf("%s has a memfs marker line without its pair; fix or remove it first", file)
	default:
		updated = slices.Clone(old)
		if len(updated) > 0 {
			if !bytes.HasSuffix(updated, []byte("\n")) {
				updated = append(updated, '\n')
			}
			updated = append(updated, '\n')
		}
		updated = append(updated, section...)
	}
	if bytes.Equal(updated, old) {
		return false, nil
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Lstat(file); err == nil {
		mode = fi.Mode().Perm()
	}
	// Written beside and renamed over: a crash leaves the old file or the
	// new. The new one is made O_EXCL|O_NOFOLLOW: a symlink at its name
	// is never written through.
	tmp := file + ".memfs-tmp"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return false, err
	}
	_, err = f.Write(updated)
	if err == nil {
		err = f.Chmod(mode) // the umask took bits off
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, nil
}

// hintTarget is the file hint --write changes for file: file itself,
// unless it is a symlink; then the file the link names, which must be a
// regular file of the caller's own (a dotfiles manager's link to the
// user's file). Anything else is refused: replacing the link would lose
// it, and writing into another user's file (root running hint in a
// user's directory) or a device is not hint's to do.
func hintTarget(file string) (string, error) {
	fi, err := os.Lstat(file)
	if err != nil || fi.Mode().Type() != fs.ModeSymlink {
		return file, nil // a missing file is made; ReadFile reports the rest
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", fmt.Errorf("%s is a symlink that names nothing (%v); write to its target or remove the link", file, err)
	}
	fi, err = os.Lstat(real)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is a symlink to %s, which is not a regular file (a %s); nothing was written", file, real, backend.TypeName(fi.Mode()))
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != uint32(os.Geteuid()) {
		return "", fmt.Errorf("%s is a symlink to %s, which is not yours (owner uid %d); nothing was written: run hint as its owner, or write to a file of your own", file, real, uid)
	}
	return real, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// mountPoints are the mountpoints of mounts.
func mountPoints(mounts []mountinfo.Mount) []string {
	points := make([]string, len(mounts))
	for i, m := range mounts {
		points[i] = m.Point
	}
	return points
}

// ownMounts keeps the mounts that the user uid made: another user's
// mount is not where the caller's agent keeps its memory.
func ownMounts(mounts []mountinfo.Mount, uid uint32) []mountinfo.Mount {
	var own []mountinfo.Mount
	for _, m := range mounts {
		if m.UID == uid {
			own = append(own, m)
		}
	}
	return own
}
