// Package memorytool runs the commands of Claude's client-side memory
// tool (view, create, str_replace, insert, delete, rename on /memories)
// over an open memfs store, for a program that gives Claude the tool in
// Go, and for the MCP server (package mcpserver), which offers the same
// commands as its tools.
//
// Paths under /memories map to keys under a prefix (memory/ by default):
// /memories/notes.md is the key memory/notes.md, the file a mount shows
// at memory/notes.md. A path outside /memories, with a . or .. segment,
// an empty segment or a control character is refused (ErrPath) before
// anything is read.
//
// Every change goes through the engine's doors (memfs.FS.WriteFile,
// Rename, RemoveAll), so it is the change a shell makes on the mount:
// the same key rules (a name holding a secret is refused), the same
// redaction of what reaches the journal and the store, the same event,
// whose writer is the Handler's (the door's name, "mcp:<client>").
//
// Every mutation takes an optional expected SHA-256 (of the file's whole
// current value, hex): when the file holds something else, the command
// fails with ErrStale naming the current SHA-256, and changes nothing.
//
// The results are the texts the memory tool's documentation gives, which
// Claude reads; an error's text is meant to be returned to Claude as the
// tool result's content, with is_error set.
//
// A Handler works over an open store (New) or a running mount
// (NewFiles(Mount(c), opts)): through a mount, every command is made on
// the mount's files as this process's user, checked as any program's.
//
// A Handler is safe for concurrent use: it runs one command at a time,
// so that a compare-and-swap is atomic against the Handler's other
// callers (not against another program writing the same mount).
//
// Example:
//
//	h := memorytool.New(f, memorytool.Options{Writer: "my-agent"})
//	res, err := h.HandleJSON(ctx, toolUse.Input) // {"command":"view","path":"/memories"}
//	if err != nil {
//		// return err.Error() to Claude with is_error: true
//	}
//	// return res.Text to Claude
package memorytool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/repo"
)

// Root is the directory the memory tool names.
const Root = "/memories"

// DefaultPrefix is the key prefix Root maps to when Options.Prefix is
// empty: the always-loaded memory of a mount.
const DefaultPrefix = "memory/"

// MaxLines is the most lines view numbers, as the tool's documentation
// states.
const MaxLines = 999_999

var (
	// ErrPath is a path the tool may not name: outside /memories, a .
	// or .. segment, an empty segment, a control character, or a name
	// reserved for memfs.
	ErrPath = errors.New("invalid path")
	// ErrNotFound is a path that names nothing.
	ErrNotFound = fmt.Errorf("no such path: %w", fs.ErrNotExist)
	// ErrExists is a create or a rename onto a name that exists.
	ErrExists = fmt.Errorf("already exists: %w", fs.ErrExist)
	// ErrNotUnique is a str_replace whose old_str does not occur exactly
	// once.
	ErrNotUnique = errors.New("old_str does not occur exactly once")
	// ErrStale is a mutation whose expected SHA-256 is not the file's.
	ErrStale = errors.New("stale: the file changed")
	// ErrInvalid is an input the command does not take (a missing
	// argument, a line out of range, an unknown command).
	ErrInvalid = errors.New("invalid input")
)

// Error is a command's failure: Text is what Claude reads (the memory
// tool's wording), Err the sentinel (errors.Is) or the engine's cause.
type Error struct {
	Text string
	Err  error
}

func (e *Error) Error() string { return e.Text }
func (e *Error) Unwrap() error { return e.Err }

func fail(err error, format string, args ...any) error {
	return &Error{Text: fmt.Sprintf(format, args...), Err: err}
}

// Options configure a Handler.
type Options struct {
	// Prefix is the key prefix /memories maps to; DefaultPrefix when
	// empty. It names a directory: a missing final "/" is added.
	Prefix string
	// Writer names the door in the events of the Handler's changes
	// (meta.ValidateAgent's alphabet), such as "mcp:claude-code";
	// "memorytool" when empty.
	Writer string
}

// CheckPrefix refuses a prefix that names no directory of the store (see
// Options.Prefix; "" is DefaultPrefix).
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	p := strings.TrimSuffix(prefix, "/")
	if err := backend.ValidateKey(p); err != nil {
		return fmt.Errorf("prefix %q: %w (want a directory of the store, such as memory/)", prefix, err)
	}
	if backend.IsReserved(p) {
		return fmt.Errorf("prefix %q: a name reserved for memfs's own files", prefix)
	}
	return nil
}

// Files is what a Handler reads and changes: an open store
// (*memfs.FS, through Engine) or a running mount (Mount). Keys are the
// store's; by names the writer where the door can say it (a mount names
// the process that made the change, as for any program on it). Both also
// append (an AppendFile method, as package repo's Appender), which with
// SetAttr, MkdirAll and CreateFile makes them the Files of package repo
// too.
type Files interface {
	ReadFile(ctx context.Context, key string) ([]byte, error)
	WriteFile(ctx context.Context, key string, value []byte, by meta.WriterInfo) error
	Exists(key string) bool
	IsDir(key string) bool
	// List lists the nodes under prefix ("KEY/"), directories included.
	List(prefix string) ([]backend.Entry, error)
	Rename(ctx context.Context, oldKey, newKey string, by meta.WriterInfo) error
	RemoveAll(ctx context.Context, key string, by meta.WriterInfo) error
	SetAttr(ctx context.Context, key, name string, value []byte, by meta.WriterInfo) error
	MkdirAll(dir string, mode fs.FileMode) error
	CreateFile(ctx context.Context, key string, value []byte, mode fs.FileMode, by meta.WriterInfo) error
}

// Engine is the Files of an open store.
func Engine(f *memfs.FS) Files { return engine{f} }

type engine struct{ *memfs.FS }

func (e engine) List(prefix string) ([]backend.Entry, error) { return e.Nodes(prefix), nil }

// Handler runs memory tool commands over an open store or a mount.
type Handler struct {
	f      Files  // immutable after New
	prefix string // the key of /memories, without a final "/"
	writer string

	mu sync.Mutex // held through each command: a compare-and-swap is atomic
}

// New returns a Handler over the open store f (NewFiles(Engine(f), opts)).
func New(f *memfs.FS, opts Options) *Handler { return NewFiles(Engine(f), opts) }

// NewFiles returns a Handler over f. opts.Prefix must pass CheckPrefix:
// any other names no directory, and every path under /memories is
// refused.
func NewFiles(f Files, opts Options) *Handler {
	p := strings.TrimSuffix(opts.Prefix, "/")
	if opts.Prefix == "" {
		p = strings.TrimSuffix(DefaultPrefix, "/")
	}
	w := opts.Writer
	if w == "" {
		w = "memorytool"
	}
	return &Handler{f: f, prefix: p, writer: w}
}

// Input is the memory tool's input: command and the arguments it takes.
// ExpectedSHA256 is memfs's own: the compare-and-swap of a mutation.
type Input struct {
	Command        string  `json:"command"`
	Path           string  `json:"path,omitempty"`
	ViewRange      []int   `json:"view_range,omitempty"`
	FileText       *string `json:"file_text,omitempty"`
	OldStr         *string `json:"old_str,omitempty"`
	NewStr         *string `json:"new_str,omitempty"`
	InsertLine     *int    `json:"insert_line,omitempty"`
	InsertText     *string `json:"insert_text,omitempty"`
	OldPath        string  `json:"old_path,omitempty"`
	NewPath        string  `json:"new_path,omitempty"`
	ExpectedSHA256 string  `json:"expected_sha256,omitempty"`
}

// Result is a command's outcome: Text for Claude, and the SHA-256 of the
// file the command read or wrote ("" for a directory or a deletion), for
// the next compare-and-swap.
type Result struct {
	Text   string `json:"text"`
	SHA256 string `json:"sha256,omitempty"`
}

// HandleJSON decodes the tool's JSON input and runs it (Run).
func (h *Handler) HandleJSON(ctx context.Context, input []byte) (Result, error) {
	var in Input
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fail(ErrInvalid, "Error: the input is not the memory tool's JSON: %v", err)
	}
	return h.Run(ctx, in)
}

// Run runs one command, writing (when it writes) as the Handler's writer
// (Options.Writer).
func (h *Handler) Run(ctx context.Context, in Input) (Result, error) {
	return h.RunAs(ctx, in, h.writer)
}

// RunAs is Run with the writer named agent (the MCP server names each
// client's door).
func (h *Handler) RunAs(ctx context.Context, in Input, agent string) (Result, error) {
	if err := meta.ValidateAgent(agent); err != nil {
		return Result{}, fail(ErrInvalid, "Error: writer %q: %v", agent, err)
	}
	by := *memfs.SelfWriter(agent)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch in.Command {
	case "view":
		return h.view(ctx, in)
	case "create":
		return h.create(ctx, in, by)
	case "str_replace":
		return h.strReplace(ctx, in, by)
	case "insert":
		return h.insert(ctx, in, by)
	case "delete":
		return h.delete(ctx, in, by)
	case "rename":
		return h.rename(ctx, in, by)
	}
	return Result{}, fail(ErrInvalid, "Error: unknown command %q: want view, create, str_replace, insert, delete or rename", in.Command)
}

// Key returns the key of the memory tool's path p, or an error wrapping
// ErrPath that says why the tool may not name it.
func (h *Handler) Key(p string) (string, error) {
	bad := func(why string) error {
		return fail(ErrPath, "Error: the path %q %s; paths are /memories or under it, such as /memories/notes.md", printable(p), why)
	}
	if !utf8.ValidString(p) {
		return "", bad("is not UTF-8")
	}
	if strings.ContainsFunc(p, unicode.IsControl) {
		return "", bad("holds a control character")
	}
	if p != Root && !strings.HasPrefix(p, Root+"/") {
		return "", bad("is outside " + Root)
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(p, Root), "/")
	rest = strings.TrimSuffix(rest, "/") // /memories/dir/ names the directory
	if rest == "" {
		return h.prefix, nil
	}
	for seg := range strings.SplitSeq(rest, "/") {
		switch seg {
		case "":
			return "", bad("has an empty segment")
		case ".", "..":
			return "", bad("has a . or .. segment")
		}
	}
	key := path.Join(h.prefix, rest)
	if err := backend.ValidateKey(key); err != nil {
		return "", fail(ErrPath, "Error: the path %q is not a valid name: %v", printable(p), err)
	}
	if backend.IsReserved(key) {
		return "", bad("names a file reserved for memfs")
	}
	return key, nil
}

// printable quotes what a refused path holds without its control
// characters (they are shown escaped by %q's caller).
func printable(p string) string {
	if utf8.ValidString(p) {
		return p
	}
	return strings.ToValidUTF8(p, "?")
}

// show is the path the tool names key by.
func (h *Handler) show(key string) string {
	if key == h.prefix {
		return Root
	}
	return Root + strings.TrimPrefix(key, h.prefix)
}

// Sum is the SHA-256 the commands compare and report, hex.
func Sum(value []byte) string {
	s := sha256.Sum256(value)
	return hex.EncodeToString(s[:])
}

// read returns the file at key (named p), or the tool's error.
func (h *Handler) read(ctx context.Context, key, p string) ([]byte, error) {
	v, err := h.f.ReadFile(ctx, key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(ErrNotFound, "Error: The path %s does not exist. Please provide a valid path.", p)
	case errors.Is(err, fs.ErrPermission):
		return nil, fail(err, "Error: %s: permission denied: the file's mode does not let this user read it", p)
	case err != nil && h.f.IsDir(key):
		return nil, fail(ErrInvalid, "Error: %s is a directory; this command takes a file", p)
	case err != nil:
		return nil, h.engineErr(err, "read", p)
	}
	return v, nil
}

// check is the compare-and-swap: the file's current value must have the
// expected SHA-256 (when one is given).
func check(expected string, current []byte, p string) error {
	if expected == "" {
		return nil
	}
	if got := Sum(current); !strings.EqualFold(got, expected) {
		return fail(ErrStale, "Error: %s changed: its SHA-256 is now %s, not the expected %s; view it again and redo the change on what it holds now", p, got, expected)
	}
	return nil
}

// engineErr turns the engine's error into one Claude can act on: what
// failed and what to do, never a syscall name.
func (h *Handler) engineErr(err error, op, p string) error {
	switch {
	case errors.Is(err, memfs.ErrSecretName):
		// Not echoed: the path holds the secret.
		return fail(err, "Error: %s refused: the path holds a secret (a token, a key); choose a name without it", op)
	case errors.Is(err, fs.ErrPermission):
		return fail(err, "Error: %s %s: permission denied: the file is not this server's user's to change", op, p)
	case errors.Is(err, backend.ErrInvalidKey):
		return fail(ErrPath, "Error: %s %s: not a valid name: %v", op, p, err)
	case errors.Is(err, fs.ErrExist):
		return fail(ErrExists, "Error: %s %s: the destination already exists", op, p)
	case errors.Is(err, fs.ErrNotExist):
		return fail(ErrNotFound, "Error: The path %s does not exist. Please provide a valid path.", p)
	}
	return fail(err, "Error: %s %s failed: %v", op, p, err)
}

// write makes value the content of key as by and reports its SHA-256.
func (h *Handler) write(ctx context.Context, key, p string, value []byte, by meta.WriterInfo, op string) (string, error) {
	if err := repo.CheckKey(key, value); err != nil {
		return "", fail(ErrInvalid, "Error: %s %s: %v", op, p, err) // a repository's record that breaks its schema
	}
	if err := h.f.WriteFile(ctx, key, value, by); err != nil {
		return "", h.engineErr(err, op, p)
	}
	return Sum(value), nil
}

func (h *Handler) create(ctx context.Context, in Input, by meta.WriterInfo) (Result, error) {
	key, err := h.Key(in.Path)
	if err != nil {
		return Result{}, err
	}
	if in.FileText == nil {
		return Result{}, fail(ErrInvalid, "Error: create needs file_text")
	}
	if key == h.prefix {
		return Result{}, fail(ErrInvalid, "Error: %s is the memory directory; create a file under it, such as /memories/notes.md", Root)
	}
	text := []byte(*in.FileText)
	if h.f.Exists(key) {
		cur, err := h.read(ctx, key, in.Path)
		if err != nil {
			return Result{}, err
		}
		switch {
		case string(cur) == *in.FileText:
			// A retry of a create that succeeded: already as asked.
			return Result{Text: "File created successfully at: " + in.Path, SHA256: Sum(cur)}, nil
		case in.ExpectedSHA256 == "":
			return Result{}, fail(ErrExists, "Error: File %s already exists", in.Path)
		}
		if err := check(in.ExpectedSHA256, cur, in.Path); err != nil {
			return Result{}, err
		}
	} else if in.ExpectedSHA256 != "" {
		return Result{}, fail(ErrStale, "Error: %s does not exist, so its SHA-256 is not the expected %s", in.Path, in.ExpectedSHA256)
	}
	sum, err := h.write(ctx, key, in.Path, text, by, "create")
	if err != nil {
		return Result{}, err
	}
	return Result{Text: "File created successfully at: " + in.Path, SHA256: sum}, nil
}

func (h *Handler) strReplace(ctx context.Context, in Input, by meta.WriterInfo) (Result, error) {
	key, err := h.Key(in.Path)
	if err != nil {
		return Result{}, err
	}
	if in.OldStr == nil || *in.OldStr == "" {
		return Result{}, fail(ErrInvalid, "Error: str_replace needs a non-empty old_str")
	}
	cur, err := h.read(ctx, key, in.Path)
	if err != nil {
		return Result{}, err
	}
	if err := check(in.ExpectedSHA256, cur, in.Path); err != nil {
		return Result{}, err
	}
	old, repl := *in.OldStr, ""
	if in.NewStr != nil {
		repl = *in.NewStr
	}
	at := occurrences(string(cur), old)
	switch {
	case len(at) == 0:
		return Result{}, fail(ErrNotUnique, "No replacement was performed, old_str `%s` did not appear verbatim in %s.", old, in.Path)
	case len(at) > 1:
		lines := make([]string, len(at))
		for i, off := range at {
			lines[i] = strconv.Itoa(1 + strings.Count(string(cur[:off]), "\n"))
		}
		return Result{}, fail(ErrNotUnique, "No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique",
			old, strings.Join(slices.Compact(lines), ", "))
	}
	next := string(cur[:at[0]]) + repl + string(cur[at[0]+len(old):])
	sum, err := h.write(ctx, key, in.Path, []byte(next), by, "str_replace")
	if err != nil {
		return Result{}, err
	}
	first := 1 + strings.Count(next[:at[0]], "\n")
	return Result{Text: "The memory file has been edited.\n" + snippet(next, first, first+strings.Count(repl, "\n")), SHA256: sum}, nil
}

// occurrences returns where old starts in s, overlapping occurrences
// included ("aa" occurs twice in "aaa": it is not unique).
func occurrences(s, old string) []int {
	var at []int
	for off := 0; ; {
		i := strings.Index(s[off:], old)
		if i < 0 {
			return at
		}
		at = append(at, off+i)
		off += i + 1
	}
}

// snippet numbers the lines around first..last of s (a few before and
// after), as the tool shows an edit.
func snippet(s string, first, last int) string {
	lines := splitLines(s)
	from, to := max(1, first-4), min(len(lines), last+4)
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, lines[i-1])
	}
	return b.String()
}

// splitLines splits s into lines; a final newline ends the last line
// rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func (h *Handler) insert(ctx context.Context, in Input, by meta.WriterInfo) (Result, error) {
	key, err := h.Key(in.Path)
	if err != nil {
		return Result{}, err
	}
	if in.InsertLine == nil || in.InsertText == nil {
		return Result{}, fail(ErrInvalid, "Error: insert needs insert_line and insert_text")
	}
	cur, err := h.read(ctx, key, in.Path)
	if err != nil {
		return Result{}, err
	}
	if err := check(in.ExpectedSHA256, cur, in.Path); err != nil {
		return Result{}, err
	}
	lines := splitLines(string(cur))
	n := *in.InsertLine
	if n < 0 || n > len(lines) {
		return Result{}, fail(ErrInvalid, "Error: Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", n, len(lines))
	}
	ins := splitLines(*in.InsertText)
	if len(ins) == 0 {
		ins = []string{""} // an empty insert_text inserts an empty line
	}
	next := strings.Join(slices.Concat(lines[:n], ins, lines[n:]), "\n")
	if len(cur) == 0 || cur[len(cur)-1] == '\n' {
		next += "\n"
	}
	sum, err := h.write(ctx, key, in.Path, []byte(next), by, "insert")
	if err != nil {
		return Result{}, err
	}
	return Result{Text: fmt.Sprintf("The file %s has been edited.", in.Path), SHA256: sum}, nil
}

func (h *Handler) delete(ctx context.Context, in Input, by meta.WriterInfo) (Result, error) {
	key, err := h.Key(in.Path)
	if err != nil {
		return Result{}, err
	}
	if key == h.prefix {
		return Result{}, fail(ErrInvalid, "Error: Cannot delete the %s directory itself; delete the files under it", Root)
	}
	if !h.f.Exists(key) {
		return Result{}, fail(ErrNotFound, "Error: The path %s does not exist", in.Path)
	}
	if err := h.expectFile(ctx, key, in.Path, in.ExpectedSHA256); err != nil {
		return Result{}, err
	}
	if err := h.f.RemoveAll(ctx, key, by); err != nil {
		return Result{}, h.engineErr(err, "delete", in.Path)
	}
	return Result{Text: "Successfully deleted " + in.Path}, nil
}

// expectFile is check for a command that takes a file or a directory:
// the expected SHA-256 is a file's.
func (h *Handler) expectFile(ctx context.Context, key, p, expected string) error {
	if expected == "" {
		return nil
	}
	if h.f.IsDir(key) {
		return fail(ErrInvalid, "Error: %s is a directory: expected_sha256 names a file's content", p)
	}
	cur, err := h.read(ctx, key, p)
	if err != nil {
		return err
	}
	return check(expected, cur, p)
}

func (h *Handler) rename(ctx context.Context, in Input, by meta.WriterInfo) (Result, error) {
	oldKey, err := h.Key(in.OldPath)
	if err != nil {
		return Result{}, err
	}
	newKey, err := h.Key(in.NewPath)
	if err != nil {
		return Result{}, err
	}
	if oldKey == h.prefix || newKey == h.prefix {
		return Result{}, fail(ErrInvalid, "Error: Cannot rename the %s directory itself", Root)
	}
	if !h.f.Exists(oldKey) {
		return Result{}, fail(ErrNotFound, "Error: The path %s does not exist", in.OldPath)
	}
	if h.f.Exists(newKey) {
		return Result{}, fail(ErrExists, "Error: The destination %s already exists", in.NewPath)
	}
	if err := h.expectFile(ctx, oldKey, in.OldPath, in.ExpectedSHA256); err != nil {
		return Result{}, err
	}
	if _, _, _, record := repo.ParseKey(newKey); record && !h.f.IsDir(oldKey) {
		v, err := h.f.ReadFile(ctx, oldKey)
		if err == nil {
			err = repo.CheckKey(newKey, v)
		}
		if err != nil { // a file that would be a repository's broken record
			return Result{}, fail(ErrInvalid, "Error: rename %s to %s: %v", in.OldPath, in.NewPath, err)
		}
	}
	if err := h.f.Rename(ctx, oldKey, newKey, by); err != nil {
		return Result{}, h.engineErr(err, "rename", in.OldPath+" to "+in.NewPath)
	}
	return Result{Text: fmt.Sprintf("Successfully renamed %s to %s", in.OldPath, in.NewPath)}, nil
}
