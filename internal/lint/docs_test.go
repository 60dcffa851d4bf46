package lint

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The documentation is held to the binary (issue 30): every command and
// flag `memfs --help` and `memfs COMMAND --help` print has its place in
// docs/commands.md, nothing there or in a `memfs ...` example of the
// README or docs/ names a command or flag the binary lacks, the README
// stays a page a newcomer reads in full, and its links (and docs/'s)
// resolve.

// maxReadmeLines is the README's budget: the reference lives in docs/.
const maxReadmeLines = 300

// helpCmd is what the help of one command says.
type helpCmd struct {
	path  string   // "" for the program, "snapshot create" for a subcommand
	flags []string // every name, "--store", "-l"
	subs  []string // the subcommands' names and aliases, "help" left out
}

// everyCommandFlags are on every command (app.go adds them to each): they
// are documented once, in commands.md's "Every command".
var everyCommandFlags = []string{"--help", "-h", "--quiet", "-q"}

// TestDocsMatchHelp checks docs/commands.md and every `memfs ...` example
// of the README and docs/ against the help of a freshly built memfs.
func TestDocsMatchHelp(t *testing.T) {
	cmds := helpTree(t, buildMemfs(t))
	root := repoRoot(t)
	commands := readFile(t, filepath.Join(root, "docs", "commands.md"))

	sections := commandSections(commands)
	for path, c := range cmds {
		if path == "" {
			for _, f := range c.flags {
				if !strings.Contains(commands, "`"+f+"`") {
					t.Errorf("docs/commands.md does not name the program's flag %s", f)
				}
			}
			continue
		}
		body, ok := sections[path]
		if !ok {
			t.Errorf("docs/commands.md has no section \"### `memfs %s`\" for the command memfs --help lists", path)
			continue
		}
		for _, f := range c.flags {
			if !slices.Contains(everyCommandFlags, f) && !strings.Contains(body, "`"+f+"`") {
				t.Errorf("docs/commands.md, memfs %s: flag %s (memfs %s --help) is not documented", path, f, path)
			}
		}
		for _, f := range flagSpans(body) {
			if !c.has(f) {
				t.Errorf("docs/commands.md, memfs %s: documents %s, which memfs %s --help does not list", path, f, path)
			}
		}
	}
	for path := range sections {
		if _, ok := cmds[path]; !ok {
			t.Errorf("docs/commands.md documents memfs %s, which memfs --help does not list", path)
		}
	}
	for _, f := range everyCommandFlags {
		if !strings.Contains(commands, "`"+f+"`") {
			t.Errorf("docs/commands.md does not say that every command takes %s", f)
		}
	}

	for _, name := range docFiles(t, root) {
		text := readFile(t, filepath.Join(root, name))
		for _, ex := range examples(text) {
			if err := checkExample(cmds, ex); err != nil {
				t.Errorf("%s: %q: %v", name, ex, err)
			}
		}
	}
}

// TestReadmeLinks holds the README to its budget and checks that every
// relative link of the README and docs/ names a file of the repository
// and, with a #fragment, a heading of it.
func TestReadmeLinks(t *testing.T) {
	root := repoRoot(t)
	readme := readFile(t, filepath.Join(root, "README.md"))
	if n := strings.Count(readme, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move reference material to docs/", n, maxReadmeLines)
	}
	if !strings.Contains(readme, "(docs/commands.md)") {
		t.Errorf("README.md does not link docs/commands.md")
	}
	for _, name := range docFiles(t, root) {
		text := readFile(t, filepath.Join(root, name))
		for _, m := range regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(stripFences(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if err := checkLink(root, name, target); err != nil {
				t.Errorf("%s: link %s: %v", name, target, err)
			}
		}
	}
}

func (c helpCmd) has(flag string) bool {
	return slices.Contains(c.flags, flag) || slices.Contains(everyCommandFlags, flag)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docFiles are README.md and docs/*.md, relative to root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(names) == 0 {
		t.Fatalf("docs/*.md: %v (found %d)", err, len(names))
	}
	out := []string{"README.md"}
	for _, n := range names {
		out = append(out, filepath.Join("docs", filepath.Base(n)))
	}
	return out
}

func buildMemfs(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "memfs")
	if out, err := exec.Command("go", "build", "-o", bin, commandPkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", commandPkg, err, out)
	}
	return bin
}

// helpTree runs memfs --help and COMMAND --help for every command and
// subcommand the helps list, keyed by path ("" the program).
func helpTree(t *testing.T, bin string) map[string]helpCmd {
	t.Helper()
	cmds := map[string]helpCmd{}
	var walk func(path []string)
	walk = func(path []string) {
		out, err := exec.Command(bin, append(slices.Clone(path), "--help")...).Output()
		if err != nil {
			t.Fatalf("memfs %s --help: %v", strings.Join(path, " "), err)
		}
		c := parseHelp(string(out))
		c.path = strings.Join(path, " ")
		cmds[c.path] = c
		for _, line := range helpSection(string(out), "COMMANDS") {
			names := helpNames(line)
			if len(names) == 0 || names[0] == "help" {
				continue
			}
			walk(append(slices.Clone(path), names[0]))
		}
	}
	walk(nil)
	if len(cmds) < 10 {
		t.Fatalf("memfs --help lists %d commands: the help's format changed (parseHelp)", len(cmds))
	}
	return cmds
}

// parseHelp reads urfave/cli v2's help: the names of OPTIONS / GLOBAL
// OPTIONS ("--bootstrap value [ --bootstrap value ]", "--long, -l") and
// of COMMANDS ("unmount, umount").
func parseHelp(help string) helpCmd {
	var c helpCmd
	opts := append(helpSection(help, "OPTIONS"), helpSection(help, "GLOBAL OPTIONS")...)
	for _, line := range opts {
		head, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
		for _, m := range regexp.MustCompile(`(?:^|[\s,\[])(--?[A-Za-z][\w-]*)`).FindAllStringSubmatch(head, -1) {
			if !slices.Contains(c.flags, m[1]) {
				c.flags = append(c.flags, m[1])
			}
		}
	}
	for _, line := range helpSection(help, "COMMANDS") {
		for _, n := range helpNames(line) {
			if n != "help" && n != "h" {
				c.subs = append(c.subs, n)
			}
		}
	}
	return c
}

// helpSection is the indented lines under "NAME:" in help.
func helpSection(help, name string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case line == name+":":
			in = true
		case in && strings.HasPrefix(line, "   ") && strings.HasPrefix(strings.TrimSpace(line), "-") == (name != "COMMANDS"):
			out = append(out, line)
		case in && strings.TrimSpace(line) == "":
		case in && !strings.HasPrefix(line, " "):
			in = false
		}
	}
	return out
}

// helpNames are the names of a COMMANDS line: "   unmount, umount  flush ...".
func helpNames(line string) []string {
	m := regexp.MustCompile(`^\s+([a-z][\w-]*(?:, [a-z][\w-]*)*)`).FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], ", ")
}

// commandSections maps "snapshot create" to the text under the heading
// "### `memfs snapshot create`", up to the next heading.
func commandSections(text string) map[string]string {
	out := map[string]string{}
	heading := regexp.MustCompile("(?m)^#{1,3} ")
	cmd := regexp.MustCompile("^### `memfs ([a-z][a-z -]*)`$")
	starts := heading.FindAllStringIndex(text, -1)
	for i, s := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		line, body, _ := strings.Cut(text[s[0]:end], "\n")
		if m := cmd.FindStringSubmatch(line); m != nil {
			out[m[1]] = body
		}
	}
	return out
}

// flagSpans are the flags a text names as a code span of its own:
// `--store`, `-l`, `--keep mine|theirs|merge` (its first word), leaving
// out spans that start with memfs (examples, checked as such).
func flagSpans(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`(--?[A-Za-z][\\w-]*)[^`]*`").FindAllStringSubmatch(stripFences(text), -1) {
		out = append(out, m[1])
	}
	return out
}

var fence = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```[ \t]*$")

func stripFences(text string) string { return fence.ReplaceAllString(text, "") }

// examples are the command lines a text shows: each line of a fenced
// block (its # comment left out), and each inline code span, that holds
// the word memfs.
func examples(text string) []string {
	var out []string
	for _, block := range fence.FindAllString(text, -1) {
		lines := strings.Split(block, "\n")
		for _, line := range lines[1 : len(lines)-1] {
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			if strings.Contains(line, "memfs") {
				out = append(out, strings.TrimSpace(line))
			}
		}
	}
	prose := strings.ReplaceAll(stripFences(text), "\n", " ")
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(prose, -1) {
		if strings.Contains(m[1], "memfs") {
			out = append(out, m[1])
		}
	}
	return out
}

// checkExample resolves each "memfs WORD..." of ex to a command and checks
// the flags that follow it, up to the end of that shell command. A memfs
// not followed by a command (memfs --version, the mount.fuse shape memfs
// SOURCE DIR) is checked only for a word that looks like a command and
// names none.
func checkExample(cmds map[string]helpCmd, ex string) error {
	words := strings.Fields(ex)
	cmdWord := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	flagWord := regexp.MustCompile(`^(--?[A-Za-z][\w-]*)`)
	for i, w := range words {
		if w != "memfs" && !strings.HasSuffix(w, "/memfs") {
			continue
		}
		path, j := "", i+1
		for ; j < len(words); j++ {
			next := strings.TrimSpace(path + " " + words[j])
			if _, ok := cmds[next]; ok {
				path = next
				continue
			}
			if path == "" && cmdWord.MatchString(words[j]) && words[j] != "memfs" {
				return fmt.Errorf("memfs %s: no such command in memfs --help", words[j])
			}
			break
		}
		if path == "" {
			continue // memfs --version, or memfs SOURCE DIR -o OPTIONS (mount.fuse's shape)
		}
		c := cmds[path]
		for ; j < len(words); j++ {
			w := words[j]
			if w == "--" || w == "|" || w == "||" || w == "&&" || w == "&" || w == ";" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") {
				break
			}
			if m := flagWord.FindStringSubmatch(w); m != nil && !c.has(m[1]) {
				return fmt.Errorf("memfs %s: flag %s is not in memfs %s --help", path, m[1], path)
			}
			if strings.HasSuffix(w, ";") {
				break
			}
		}
	}
	return nil
}

// checkLink checks a relative link of the file name (relative to root).
func checkLink(root, name, target string) error {
	file, frag, _ := strings.Cut(target, "#")
	path := filepath.Join(root, name)
	if file != "" {
		path = filepath.Join(filepath.Dir(path), file)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("outside the repository")
	}
	if _, err := os.Stat(path); err != nil {
		return err
	}
	if frag == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !slices.Contains(anchors(string(b)), frag) {
		return fmt.Errorf("%s has no heading with the anchor #%s", rel, frag)
	}
	return nil
}

// anchors are the fragments GitHub gives a Markdown file's headings:
// lower case, punctuation but - and _ dropped, spaces as -, a repeated
// one numbered.
func anchors(text string) []string {
	var out []string
	seen := map[string]int{}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, line := range strings.Split(stripFences(text), "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}
