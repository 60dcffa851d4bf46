// Package hint writes the section of an agent's instructions file
// (CLAUDE.md, AGENTS.md, GEMINI.md) that says where the agent's memory is
// mounted and how to use it (memfs hint). The section sits between two
// marker lines; writing it again replaces it there, and the rest of the
// file is the user's.
//
// # Concurrency
//
// The functions are safe for concurrent use, but two Writes of one file
// at once race: the last rename wins.
package hint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/repo"
)

// Files names each agent's instructions file.
var Files = map[string]string{
	"claude": "CLAUDE.md",
	"codex":  "AGENTS.md",
	"gemini": "GEMINI.md",
}

// The hint is written between these lines, and replaced there on the next
// --write: the rest of the file is the user's.
const (
	Begin = "<!-- memfs:begin (written by memfs hint; replaced on the next memfs hint --write) -->"
	End   = "<!-- memfs:end -->"
)

// File is agent's instructions file (Files); an unknown agent is an error
// naming the known ones.
func File(agent string) (string, error) {
	file, ok := Files[agent]
	if !ok {
		return "", fmt.Errorf("hint: unknown agent %q; want one of: claude, codex, gemini", agent)
	}
	return file, nil
}

// Placeholder stands for the mountpoint when none is given or found.
const Placeholder = "<MEMFS_MOUNT>"

// Section is the section for agent, markers included.
func Section(agent, mnt string) string { return sectionFor(agent, mnt, "") }

// sectionFor is Section, with the memory of the repository hash when it
// is not "": the instructions file is in that repository's working tree.
func sectionFor(agent, mnt, hash string) string {
	m := mnt
	var b strings.Builder
	b.WriteString(Begin + "\n")
	b.WriteString("## Memory (memfs)\n\n")
	fmt.Fprintf(&b, "Your long-term memory is a directory mounted at `%s` (memfs): plain files, read and\n", m)
	b.WriteString("written with ordinary file tools; what you write there persists across sessions.\n\n")
	switch agent {
	case "claude", "gemini":
		// Claude Code and Gemini CLI read an @ line of their
		// instructions file as an import of the file it names.
		fmt.Fprintf(&b, "The context pack, loaded at the start of every session:\n\n@%s/.memfs/context.md\n\n", m)
	case "codex":
		// Codex runs commands in a sandbox that writes only to its roots.
		fmt.Fprintf(&b, "Codex's sandbox must let you write there: the mount is a writable root in\n"+
			"~/.codex/config.toml:\n\n    [sandbox_workspace_write]\n    writable_roots = [%q]\n\n", m)
	}
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
	if hash != "" {
		writeRepo(&b, m, hash)
	}
	b.WriteString("Do not keep secrets in memory: they are redacted before anything is stored.\n")
	b.WriteString(End + "\n")
	return b.String()
}

// writeRepo is the part of a section on the memory of the repository hash.
func writeRepo(b *strings.Builder, m, hash string) {
	fmt.Fprintf(b, "This repository has a memory of its own: `%s/` on the branch where this was written\n", repo.Path(m, hash))
	b.WriteString("(`memfs repo path` prints it on any branch; a new branch's starts from its parent's):\n")
	b.WriteString("`conventions/` and `decisions/` are the rules of this code, always follow them; `notes/` the rest.\n")
	b.WriteString("Its pack, the rules first, then the notes that matter for a query:\n\n")
	b.WriteString("    memfs context --repo\n")
	fmt.Fprintf(b, "    cat %s\n\n", shellQuote(m+"/.memfs/context/repo:"+hash))
	b.WriteString("Record what you learn about this code there (`memfs repo check` says what a record lacks):\n\n")
	b.WriteString("    memfs repo add convention --id wrap-errors --title 'Wrap errors with %w' --tag go\n")
	b.WriteString("    memfs repo add decision --summary 'etcd over Consul' --rationale 'one namespace for many agents'\n")
	b.WriteString("    memfs repo add note --source agent 'TestFoo is flaky under -race'\n")
	b.WriteString("    memfs repo summary --run RUN --step STEP 'what this step did'\n\n")
}

// repoOf is the id of the repository dir is in, "" when it is in no git
// working tree (or git cannot say).
func repoOf(dir string) string {
	id, err := repo.Identify(context.Background(), dir)
	if err != nil {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(id.Path, ".git")); err != nil {
		return "" // the directory alone: no repository
	}
	return id.Hash
}

// Write puts section into file: in place of an earlier memfs section,
// else appended. It reports whether the file changed. A symlink is
// written through (target), never replaced.
func Write(file, section string) (bool, error) {
	return writeMarked(file, section, Begin, End)
}

// Install writes agent's section for mnt into file (Write), with the
// memory of the repository file is in, if any, and registers
// memfs mcp beside it (WriteMCPBeside), as memfs hint --write does, and
// says on w what it did to each file: "FILE: memfs section written" (or
// "already up to date"), "MCPFILE: memfs MCP server registered (ARGS)"
// (or "already registered").
func Install(w io.Writer, agent, file, mnt string) error {
	changed, err := Write(file, sectionFor(agent, mnt, repoOf(filepath.Dir(file))))
	if err != nil {
		return fmt.Errorf("hint: %w", err)
	}
	msg := map[bool]string{true: "memfs section written", false: "memfs section already up to date"}[changed]
	fmt.Fprintf(w, "%s: %s\n", file, msg)
	mcpFile, changed, err := WriteMCPBeside(agent, file, mnt)
	if err == nil {
		msg = map[bool]string{true: "memfs MCP server registered", false: "memfs MCP server already registered"}[changed]
		_, err = fmt.Fprintf(w, "%s: %s (%s)\n", mcpFile, msg, strings.Join(MCPArgs(mnt), " "))
	}
	return err
}

// Description is memfs hint's help text: what Run does.
const Description = "Prints a short section for the agent's instructions file. With --write, puts it into FILE\n" +
	"(default: CLAUDE.md, AGENTS.md or GEMINI.md in the current directory) between marker\n" +
	"lines: a second run replaces that section in place, and changes nothing if it is the same.\n" +
	"The mountpoint is --mount, else the mount the other commands would use (--store, the mount\n" +
	"the working directory is in), else your one memfs mount, else the placeholder " + Placeholder + ".\n" +
	"FILE may be a symlink (a dotfiles manager's): it stays one, and the section is written into\n" +
	"the file it names when that is a regular file of yours; any other target is refused, unchanged.\n" +
	"--write also registers memfs mcp as the MCP server \"memfs\" where the agent reads them: .mcp.json\n" +
	"(claude), .gemini/settings.json (gemini) or .codex/config.toml (codex) beside FILE."

// Run is memfs hint on its arguments args (AGENT [FILE]): it prints
// agent's section for the mountpoint Mountpoint finds among given, routed
// and mounts, or with write installs it (Install) into FILE, else into
// agent's File in the working directory. When no mount is found it says
// so on warn, and the section names Placeholder.
func Run(w, warn io.Writer, args []string, write bool, given, routed string, mounts []string) error {
	agent := ""
	if len(args) > 0 {
		agent = args[0]
	}
	file, err := File(agent)
	if err != nil {
		return err
	}
	if len(args) > 2 || (len(args) == 2 && !write) {
		return fmt.Errorf("hint: want AGENT, and FILE only with --write; got %q", args)
	}
	mnt, found, err := Mountpoint(given, routed, mounts)
	if err != nil {
		return fmt.Errorf("hint: %w", err)
	}
	if !found {
		fmt.Fprintf(warn, "hint: no memfs mount found; replace %s with the mountpoint, or pass --mount DIR\n", Placeholder)
	}
	if !write {
		_, err := fmt.Fprint(w, sectionFor(agent, mnt, repoOf(".")))
		return err
	}
	if len(args) == 2 {
		file = args[1]
	}
	return Install(w, agent, file, mnt)
}

// writeMarked is Write with the marker lines begin and end.
func writeMarked(file, section, Begin, End string) (bool, error) {
	file, err := target(file)
	if err != nil {
		return false, err
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	var updated []byte
	begin := bytes.Index(old, []byte(Begin))
	end := bytes.Index(old, []byte(End))
	switch {
	case begin >= 0 && end > begin:
		end += len(End)
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
	return replace(file, old, updated)
}

// replace writes updated over file (target's), which holds old: not at
// all when they are equal (it reports whether it wrote).
func replace(file string, old, updated []byte) (bool, error) {
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

// target is the file Write changes for file: file itself,
// unless it is a symlink; then the file the link names, which must be a
// regular file of the caller's own (a dotfiles manager's link to the
// user's file). Anything else is refused: replacing the link would lose
// it, and writing into another user's file (root running hint in a
// user's directory) or a device is not hint's to do.
func target(file string) (string, error) {
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

// Mountpoint is the mountpoint a section names: given, made absolute;
// else routed, the mount the other commands work through (the store they
// name, the mount the working directory is in); else the one of mounts
// (the caller's memfs mounts); else Placeholder, and found is false.
// Several mounts, none given nor routed, is an error.
func Mountpoint(given, routed string, mounts []string) (mnt string, found bool, err error) {
	switch {
	case given != "":
		if abs, err := filepath.Abs(given); err == nil {
			given = abs
		}
		return given, true, nil
	case routed != "":
		return routed, true, nil
	case len(mounts) == 1:
		return mounts[0], true, nil
	case len(mounts) > 1:
		return "", false, fmt.Errorf("several memfs mounts (%s), none of the store the other commands use (--store, MEMFS_STORE, the default); choose one with --mount DIR", strings.Join(mounts, ", "))
	}
	return Placeholder, false, nil
}
