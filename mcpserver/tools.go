package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/memorytool"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/search"
)

// The inputs of the memory tool's commands, one type each, so that each
// tool's schema names only what it takes.
type (
	viewIn struct {
		Path      string `json:"path" jsonschema:"/memories, or a file or directory under it"`
		ViewRange []int  `json:"view_range,omitempty" jsonschema:"a file's first and last line to show, 1-based; -1 as the last means to the end"`
	}
	createIn struct {
		Path           string `json:"path" jsonschema:"the file to create under /memories, such as /memories/notes.md"`
		FileText       string `json:"file_text" jsonschema:"the file's content"`
		ExpectedSHA256 string `json:"expected_sha256,omitempty" jsonschema:"replace an existing file only if its content has this SHA-256 (hex)"`
	}
	strReplaceIn struct {
		Path           string `json:"path" jsonschema:"the file under /memories"`
		OldStr         string `json:"old_str" jsonschema:"text that occurs exactly once in the file"`
		NewStr         string `json:"new_str" jsonschema:"its replacement (empty removes it)"`
		ExpectedSHA256 string `json:"expected_sha256,omitempty" jsonschema:"change the file only if its content has this SHA-256 (hex)"`
	}
	insertIn struct {
		Path           string `json:"path" jsonschema:"the file under /memories"`
		InsertLine     int    `json:"insert_line" jsonschema:"insert after this line (0: at the top)"`
		InsertText     string `json:"insert_text" jsonschema:"the lines to insert"`
		ExpectedSHA256 string `json:"expected_sha256,omitempty" jsonschema:"change the file only if its content has this SHA-256 (hex)"`
	}
	deleteIn struct {
		Path           string `json:"path" jsonschema:"the file or directory under /memories to delete"`
		ExpectedSHA256 string `json:"expected_sha256,omitempty" jsonschema:"delete a file only if its content has this SHA-256 (hex)"`
	}
	renameIn struct {
		OldPath        string `json:"old_path" jsonschema:"the file or directory under /memories"`
		NewPath        string `json:"new_path" jsonschema:"its new path under /memories (must not exist)"`
		ExpectedSHA256 string `json:"expected_sha256,omitempty" jsonschema:"rename a file only if its content has this SHA-256 (hex)"`
	}
)

// memoryTool registers the memory tool's command name: in makes the
// handler's Input of the tool's.
func memoryTool[In any](s *Server, t *mcp.Tool, write bool, in func(In) memorytool.Input) {
	mcp.AddTool(s.mcp, t, func(ctx context.Context, req *mcp.CallToolRequest, args In) (*mcp.CallToolResult, memorytool.Result, error) {
		res, err := s.tool.RunAs(ctx, in(args), writer(req))
		if err != nil {
			return nil, memorytool.Result{}, err
		}
		if write {
			if err := s.flush(ctx); err != nil {
				return nil, memorytool.Result{}, err
			}
		}
		return text(res.Text), res, nil
	})
}

// flush makes a change durable in the store before the tool answers.
func (s *Server) flush(ctx context.Context) error {
	if err := s.st.flush(ctx); err != nil {
		s.log.Error("mcp: flush", "err", err)
		return fmt.Errorf("the change is in the server's memory and journal, but the store refused it (%v): the server retries at its next change and when it stops", err)
	}
	return nil
}

func (s *Server) addMemoryTools() {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	edit := &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	memoryTool(s, &mcp.Tool{Name: "view", Annotations: ro,
		Description: "Show a directory under /memories two levels deep with sizes, or a file with numbered lines (view_range for some)."},
		false, func(a viewIn) memorytool.Input {
			return memorytool.Input{Command: "view", Path: a.Path, ViewRange: a.ViewRange}
		})
	memoryTool(s, &mcp.Tool{Name: "create", Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		Description: "Create a file under /memories with file_text (its directories too). An existing file is refused unless expected_sha256 is its content's."},
		true, func(a createIn) memorytool.Input {
			return memorytool.Input{Command: "create", Path: a.Path, FileText: &a.FileText, ExpectedSHA256: a.ExpectedSHA256}
		})
	memoryTool(s, &mcp.Tool{Name: "str_replace", Annotations: edit,
		Description: "Replace old_str, which must occur exactly once in the file, with new_str."},
		true, func(a strReplaceIn) memorytool.Input {
			return memorytool.Input{Command: "str_replace", Path: a.Path, OldStr: &a.OldStr, NewStr: &a.NewStr, ExpectedSHA256: a.ExpectedSHA256}
		})
	memoryTool(s, &mcp.Tool{Name: "insert", Annotations: edit,
		Description: "Insert insert_text after line insert_line of the file (0: at the top)."},
		true, func(a insertIn) memorytool.Input {
			return memorytool.Input{Command: "insert", Path: a.Path, InsertLine: &a.InsertLine, InsertText: &a.InsertText, ExpectedSHA256: a.ExpectedSHA256}
		})
	memoryTool(s, &mcp.Tool{Name: "delete", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
		Description: "Delete a file or a directory (with everything under it) under /memories; its history keeps the past versions."},
		true, func(a deleteIn) memorytool.Input {
			return memorytool.Input{Command: "delete", Path: a.Path, ExpectedSHA256: a.ExpectedSHA256}
		})
	memoryTool(s, &mcp.Tool{Name: "rename", Annotations: edit,
		Description: "Rename or move a file or directory under /memories; new_path must not exist."},
		true, func(a renameIn) memorytool.Input {
			return memorytool.Input{Command: "rename", OldPath: a.OldPath, NewPath: a.NewPath, ExpectedSHA256: a.ExpectedSHA256}
		})
}

type (
	searchIn struct {
		Query  string   `json:"query" jsonschema:"what to look for"`
		Mode   string   `json:"mode,omitempty" jsonschema:"keyword, semantic or hybrid (the default with an embedder)"`
		TopK   int      `json:"top_k,omitempty" jsonschema:"how many results (default 10)"`
		Prefix string   `json:"prefix,omitempty" jsonschema:"only keys starting with this, such as memory/"`
		Tags   []string `json:"tags,omitempty" jsonschema:"only notes with all these tags"`
		memoryFilter
	}
	contextIn struct {
		Query    string `json:"query,omitempty" jsonschema:"rank the notes by relevance to this"`
		MaxChars int    `json:"max_chars,omitempty" jsonschema:"the budget in characters (default the pack's)"`
		Manifest bool   `json:"manifest,omitempty" jsonschema:"return the manifest (what the pack holds and why) as JSON instead of the text"`
		memoryFilter
	}
	// memoryFilter selects notes by memory type and session (search,
	// context_pack).
	memoryFilter struct {
		Type    string `json:"type,omitempty" jsonschema:"only notes of this memory type (user.memfs.type), such as fact, decision, convention, preference, procedure, summary or note"`
		Session string `json:"session,omitempty" jsonschema:"only notes of this agent session (user.memfs.session)"`
	}
	logIn struct {
		Prefix string   `json:"prefix,omitempty" jsonschema:"only events of keys starting with this"`
		Ops    []string `json:"ops,omitempty" jsonschema:"only these ops: write, delete, rename, attr, conflict"`
		Limit  int      `json:"limit,omitempty" jsonschema:"the most events, the latest (default 100)"`
		After  uint64   `json:"after,omitempty" jsonschema:"only events after this sequence number, oldest first"`
	}
	historyIn struct {
		Key string `json:"key" jsonschema:"the key, such as memory/notes.md (the file /memories/notes.md)"`
	}
	revertIn struct {
		Key string `json:"key" jsonschema:"the key, such as memory/notes.md"`
		To  string `json:"to,omitempty" jsonschema:"a seq (history lists them) or a snapshot's name; default: the version before the last"`
	}
	snapshotIn struct {
		Name string `json:"name" jsonschema:"the snapshot's name, or RUN/STEP for a run's checkpoint"`
	}
	summaryIn struct {
		Run  string `json:"run" jsonschema:"the run's id"`
		Step string `json:"step" jsonschema:"the step's id"`
		Text string `json:"text" jsonschema:"what the step did and learned, in a few lines"`
	}
	tagIn struct {
		Key  string   `json:"key" jsonschema:"the key, such as memory/notes.md"`
		Tags []string `json:"tags" jsonschema:"the file's tags (user.memfs.tags), replacing those it has; empty removes them"`
	}
)

func (s *Server) addStoreTools() {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "search", Annotations: ro,
		Description: "Search the memory: keyword, semantic or hybrid, with filters; one JSON object per hit (key, score, snippet)."}, s.search)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "context_pack", Annotations: ro,
		Description: "The context pack: the skills index, the latest step summaries and the always-loaded notes within a budget, ranked by query."}, s.contextPack)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "log", Annotations: ro,
		Description: "The change log: who changed which key when (write, delete, rename, attr, conflict), with filters."}, s.log_)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "history", Annotations: ro,
		Description: "A key's versions, oldest first: seq, time, op, size, sha256 and writer."}, s.history)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "revert", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		Description: "Write a key's content as of to (a seq, a snapshot; default: its version before the last) as a new version; a deleted key comes back."}, s.revert)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "snapshot", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		Description: "Name the memory as it is now (RUN/STEP: a run's checkpoint), to revert to later."}, s.snapshot)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "summary_add", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		Description: "Append a step summary, which the context pack shows among the latest."}, s.summaryAdd)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "tag", Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		Description: "Set a file's tags (user.memfs.tags), which search and ls filter on."}, s.tag)
}

func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, a searchIn) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(a.Query) == "" {
		return nil, nil, errors.New("search: give a query")
	}
	words := []string{a.Query, "format:json"}
	if a.TopK > 0 {
		words = append(words, "top:"+strconv.Itoa(a.TopK))
	}
	for _, w := range [][2]string{{"mode", a.Mode}, {"prefix", a.Prefix}} {
		if w[1] != "" {
			words = append(words, w[0]+":"+w[1])
		}
	}
	for _, t := range a.Tags {
		words = append(words, "tag:"+t)
	}
	if err := a.check(); err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	b, err := s.st.search(ctx, search.Name(append(words, a.words()...)...))
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w (memfs reindex rebuilds the index)", err)
	}
	return text(string(b)), nil, nil
}

func (s *Server) contextPack(ctx context.Context, _ *mcp.CallToolRequest, a contextIn) (*mcp.CallToolResult, any, error) {
	if a.MaxChars < 0 {
		return nil, nil, errors.New("context_pack: max_chars is a budget of at least 1")
	}
	if err := a.check(); err != nil {
		return nil, nil, fmt.Errorf("context_pack: %w", err)
	}
	b, err := s.st.contextPack(ctx, packName(a))
	if err != nil {
		return nil, nil, fmt.Errorf("context_pack: %w", err)
	}
	return text(string(b)), nil, nil
}

func (s *Server) log_(ctx context.Context, _ *mcp.CallToolRequest, a logIn) (*mcp.CallToolResult, any, error) {
	if a.Limit < 0 {
		return nil, nil, errors.New("log: limit is a number of events of at least 1")
	}
	page, err := s.st.query(ctx, eventlog.Query{KeyPrefix: a.Prefix, Ops: a.Ops, Limit: a.Limit, After: a.After})
	if err != nil {
		return nil, nil, fmt.Errorf("log: %w (memfs log --verify says what is damaged)", err)
	}
	if page.Events == nil {
		page.Events = []eventlog.Event{}
	}
	res, err := jsonText(page)
	return res, nil, err
}

func (s *Server) history(ctx context.Context, _ *mcp.CallToolRequest, a historyIn) (*mcp.CallToolResult, any, error) {
	if err := checkKey(a.Key); err != nil {
		return nil, nil, err
	}
	vs, err := s.st.versions(ctx, a.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("history %s: %w", a.Key, err)
	}
	res, err := jsonText(vs)
	return res, nil, err
}

func (s *Server) tag(ctx context.Context, req *mcp.CallToolRequest, a tagIn) (*mcp.CallToolResult, any, error) {
	if err := checkKey(a.Key); err != nil {
		return nil, nil, err
	}
	if files := s.st.files(); !files.Exists(a.Key) || files.IsDir(a.Key) {
		return nil, nil, fmt.Errorf("tag: %s is no file (view /memories lists them; memory/x.md is /memories/x.md)", a.Key)
	}
	v := strings.Join(a.Tags, ",")
	if err := meta.Validate(meta.Tags, []byte(v)); err != nil {
		return nil, nil, fmt.Errorf("tag: %w", err)
	}
	if err := s.st.setTags(ctx, a.Key, v, *memfs.SelfWriter(writer(req))); err != nil {
		return nil, nil, fmt.Errorf("tag %s: %w", a.Key, err)
	}
	if err := s.flush(ctx); err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("%s tagged %s", a.Key, v)), nil, nil
}

// checkKey refuses a key the store never holds, saying what a key is.
func checkKey(key string) error {
	if err := backend.ValidateKey(key); err != nil {
		return fmt.Errorf("%w: keys are relative slash-separated paths without . or .. segments or control characters, such as memory/notes.md", err)
	}
	if backend.IsReserved(key) {
		return fmt.Errorf("%s: a name reserved for memfs's own files", key)
	}
	return nil
}

// packName is the context file's name of a (contextpack.Name), which a
// mount answers and the engine parses.
func packName(a contextIn) string {
	words := append([]string{"max:" + strconv.Itoa(cmp.Or(a.MaxChars, contextpack.DefaultMaxChars))}, a.words()...)
	if a.Query != "" {
		words = append(words, a.Query)
	}
	name := contextpack.Name(words...)
	if a.Manifest {
		name += contextpack.ManifestSuffix
	}
	return name
}

// check checks the form of f's values (each one word), not a type
// against a mount's types: an unknown type finds nothing.
func (f memoryFilter) check() error {
	if f.Type != "" {
		if err := meta.ValidateTypeName(f.Type); err != nil {
			return err
		}
	}
	if f.Session != "" {
		return meta.ValidateSession(f.Session)
	}
	return nil
}

// words are f as the words of a search or pack name: type:T, session:S.
func (f memoryFilter) words() []string {
	var words []string
	if f.Type != "" {
		words = append(words, "type:"+f.Type)
	}
	if f.Session != "" {
		words = append(words, "session:"+f.Session)
	}
	return words
}

func (s *Server) revert(ctx context.Context, _ *mcp.CallToolRequest, a revertIn) (*mcp.CallToolResult, any, error) {
	if err := checkKey(a.Key); err != nil {
		return nil, nil, err
	}
	seq, err := s.st.revert(ctx, a.Key, a.To)
	if err != nil {
		return nil, nil, fmt.Errorf("revert %s: %w (history lists its versions)", a.Key, err)
	}
	if err := s.flush(ctx); err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("%s: the content of version %d, as a new version", a.Key, seq)), nil, nil
}

func (s *Server) snapshot(ctx context.Context, req *mcp.CallToolRequest, a snapshotIn) (*mcp.CallToolResult, any, error) {
	if err := history.ValidSnapshotName(a.Name); err != nil {
		return nil, nil, fmt.Errorf("snapshot: %w: a name, or RUN/STEP, of letters, digits, . _ -", err)
	}
	if err := s.st.snapshot(ctx, a.Name, writer(req)); err != nil {
		return nil, nil, fmt.Errorf("snapshot %s: %w", a.Name, err)
	}
	return text("snapshot " + a.Name + " taken"), nil, nil
}

func (s *Server) summaryAdd(ctx context.Context, _ *mcp.CallToolRequest, a summaryIn) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(a.Text) == "" || a.Run == "" || a.Step == "" {
		return nil, nil, errors.New("summary_add: give run, step and the summary's text")
	}
	sum := contextpack.Summary{Run: a.Run, Step: a.Step, Time: time.Now().UTC(), Text: a.Text}
	if err := s.st.addSummary(ctx, sum); err != nil {
		return nil, nil, fmt.Errorf("summary_add: %w", err)
	}
	if err := s.flush(ctx); err != nil {
		return nil, nil, err
	}
	return text("summary of " + a.Run + "/" + a.Step + " added"), nil, nil
}
