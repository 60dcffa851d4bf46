package repo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// Files is what Memory reads and writes: an open store
// (memorytool.Engine of a *memfs.FS) or a running mount
// (memorytool.Mount). Keys are the store's.
type Files interface {
	// ReadFile is key's value; an error satisfying
	// errors.Is(err, fs.ErrNotExist) when key is absent.
	ReadFile(ctx context.Context, key string) ([]byte, error)
	// WriteFile makes value the whole of key's value, as by, making
	// missing parent directories.
	WriteFile(ctx context.Context, key string, value []byte, by meta.WriterInfo) error
	// List is every node under prefix ("KEY/"), recursively, directories
	// included, each with its Info (Mode, MTime, XAttrs), in any order.
	List(prefix string) ([]backend.Entry, error)
	// SetAttr sets the extended attribute name of key.
	SetAttr(ctx context.Context, key, name string, value []byte, by meta.WriterInfo) error
	// MkdirAll makes the directory dir ("KEY", no trailing '/') and its
	// missing parents, with mode.
	MkdirAll(dir string, mode fs.FileMode) error
	// CreateFile makes key with value and mode, as O_CREAT|O_EXCL: an
	// error satisfying errors.Is(err, fs.ErrExist) when key exists. Its
	// directory exists.
	CreateFile(ctx context.Context, key string, value []byte, mode fs.FileMode, by meta.WriterInfo) error
}

// Appender is a Files that can append atomically (O_APPEND through a
// mount): AppendSummary uses it when Files has it, so that two writers'
// lines never overwrite each other.
type Appender interface {
	// AppendFile appends data to key's value, creating key when absent.
	AppendFile(ctx context.Context, key string, data []byte, by meta.WriterInfo) error
}

// Info is what the memory knows of a repository: its repo.json.
type Info struct {
	Hash   string `json:"hash"`
	Path   string `json:"path"`
	Remote string `json:"remote"`
	Branch string `json:"branch"`
	// Parent is the hash of the branch whose memory this one's started
	// from (copied at its first Init); "" for none.
	Parent string `json:"parent,omitempty"`
	// FirstSeen is the time of the repository's first Init.
	FirstSeen time.Time `json:"firstSeen"`
	// LastSeen is the time of its last Init.
	LastSeen time.Time `json:"lastSeen"`
	// State is the working tree's state at the last Init that gave one
	// (State): derived artifacts made from another are stale.
	State string `json:"state,omitempty"`
}

// Memory reads and writes repositories' memory in Files. Its zero By and
// Now are an unnamed writer and time.Now.
//
// Memory keeps no state: its methods may be called from any number of
// goroutines, but two Puts of one record at once are a race (each reads,
// then writes the whole record); the last write wins whole.
type Memory struct {
	Files Files
	// By names the writer of every change.
	By meta.WriterInfo
	// Now is the time; nil is time.Now.
	Now func() time.Time
}

// now is the time to the second, in UTC, as records keep it.
func (m Memory) now() time.Time {
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	return now().UTC().Truncate(time.Second)
}

// memoryDirs are the directories Init makes in a repository's memory.
var memoryDirs = []string{Convention.Dir(), Decision.Dir(), Note.Dir(), indexesDir}

// Init prepares the memory of the repository id for use and returns its
// Info: it makes its directories and writes repo.json, keeping the
// FirstSeen (and Parent) of an existing one, with LastSeen now and State
// state (the one kept when state is "").
//
// On the repository's first Init (no repo.json yet), when its memory holds
// no record and no summary, and parent has some, the parent's records and summaries are copied as they are, with
// their modes, into directories of the parent's modes (a private memory
// stays private), and Info.Parent names it: a branch's memory starts from
// the one of the branch it was made from, once, and is its own from then
// on. Whoever creates repo.json (O_EXCL) is first: a concurrent Init finds
// it made and copies nothing, and the copy never replaces a file that is
// there (a summary another process appended meanwhile is kept). A record
// of the parent that breaks its schema is not copied. The copy is not
// atomic: Init interrupted while copying leaves part of it, and is not
// copied again.
func (m Memory) Init(ctx context.Context, id Identity, parent *Identity, state string) (Info, error) {
	if err := ValidateHash(id.Hash); err != nil {
		return Info{}, err
	}
	if state != "" {
		if err := meta.ValidateDerived(state); err != nil {
			return Info{}, fmt.Errorf("repo: init %s: state: %w", id.Hash, err)
		}
	}
	now := m.now()
	info := Info{Hash: id.Hash, Path: id.Path, Remote: id.Remote, Branch: id.Branch, FirstSeen: now, LastSeen: now, State: state}
	old, err := m.Info(ctx, id.Hash)
	switch {
	case errors.Is(err, ErrWriting):
		return Info{Hash: id.Hash}, nil // another Init writes it now
	case errors.Is(err, fs.ErrNotExist):
		return m.first(ctx, id, parent, info)
	case err != nil:
		return Info{}, err
	}
	info.FirstSeen, info.Parent = old.FirstSeen, old.Parent
	if state == "" {
		info.State = old.State
	}
	for _, d := range memoryDirs {
		if err := m.Files.MkdirAll(Prefix(id.Hash)+d, 0o755); err != nil {
			return Info{}, fmt.Errorf("repo: init %s: %w", id.Hash, err)
		}
	}
	b, _ := json.MarshalIndent(info, "", "  ") // cannot fail: plain fields
	if err := m.Files.WriteFile(ctx, InfoKey(id.Hash), append(b, '\n'), m.By); err != nil {
		return Info{}, fmt.Errorf("repo: init %s: %w", id.Hash, err)
	}
	return info, nil
}

// first is Init of a repository without repo.json: its directories (of
// the parent's modes), its repo.json made exclusively, then the parent's
// memory copied.
func (m Memory) first(ctx context.Context, id Identity, parent *Identity, info Info) (Info, error) {
	var from []backend.Entry // the parent's memory, directories and files
	if parent != nil && parent.Hash != id.Hash {
		own, err := m.memoryKeys(id.Hash)
		if err != nil {
			return Info{}, err
		}
		keys, err := m.memoryKeys(parent.Hash)
		if err != nil {
			return Info{}, err
		}
		if len(own) == 0 && len(keys) > 0 { // records made without repo.json: no new branch
			if from, err = m.Files.List(Dir); err != nil {
				return Info{}, fmt.Errorf("repo: list %s: %w", Dir, err)
			}
			info.Parent = parent.Hash
		}
	}
	mode := func(key string, def fs.FileMode) fs.FileMode { // the parent's mode of what key is
		if info.Parent == "" {
			return def
		}
		theirs := Prefix(info.Parent) + strings.TrimPrefix(key, Prefix(id.Hash))
		theirs = cmp.Or(strings.TrimSuffix(theirs, "/"), theirs)
		if i := slices.IndexFunc(from, func(e backend.Entry) bool { return e.Key == theirs }); i >= 0 {
			return from[i].Info.Mode.Perm()
		}
		return def
	}
	if err := m.Files.MkdirAll(strings.TrimSuffix(Prefix(id.Hash), "/"), mode(Prefix(id.Hash), 0o755)); err != nil {
		return Info{}, fmt.Errorf("repo: init %s: %w", id.Hash, err)
	}
	for _, d := range memoryDirs {
		if err := m.Files.MkdirAll(Prefix(id.Hash)+d, mode(Prefix(id.Hash)+d, 0o755)); err != nil {
			return Info{}, fmt.Errorf("repo: init %s: %w", id.Hash, err)
		}
	}
	b, _ := json.MarshalIndent(info, "", "  ") // cannot fail: plain fields
	err := m.Files.CreateFile(ctx, InfoKey(id.Hash), append(b, '\n'), mode(InfoKey(id.Hash), 0o644), m.By)
	switch {
	case errors.Is(err, fs.ErrExist):
		return m.Init(ctx, id, nil, info.State) // another Init was first
	case err != nil:
		return Info{}, fmt.Errorf("repo: init %s: %w", id.Hash, err)
	}
	if info.Parent != "" {
		if err := m.inherit(ctx, id.Hash, info.Parent, mode); err != nil {
			return Info{}, err
		}
	}
	return info, nil
}

// See records that memfs saw the repository id with its working tree in
// state ("" when it has none): the first sight is Init, with the first of
// the identities parents returns (Parents; parents may be nil: none) that
// has memory, so that a branch's memory starts from its parent's
// whichever command meets it first; a
// later sight writes repo.json again only when state is new, so that
// artifacts made from another state count as stale (Stale).
func (m Memory) See(ctx context.Context, id Identity, parents func() ([]Identity, error), state string) (Info, error) {
	info, err := m.Info(ctx, id.Hash)
	switch {
	case err == nil && (state == "" || state == info.State):
		return info, nil
	case err == nil:
		return m.Init(ctx, id, nil, state)
	case errors.Is(err, ErrWriting):
		return Info{Hash: id.Hash}, nil // another process's first sight, now
	case !errors.Is(err, fs.ErrNotExist):
		return Info{}, err
	}
	var p *Identity
	if parents != nil {
		ps, err := parents()
		if err != nil {
			return Info{}, err
		}
		for i := range ps {
			keys, err := m.memoryKeys(ps[i].Hash)
			if err != nil {
				return Info{}, err
			}
			if len(keys) > 0 {
				p = &ps[i]
				break
			}
		}
	}
	return m.Init(ctx, id, p, state)
}

// inherit copies the parent's records and summaries into the memory of
// hash, each with the parent's mode (mode), never over a file that is
// there; a record that breaks its schema is not copied.
func (m Memory) inherit(ctx context.Context, hash, parent string, mode func(key string, def fs.FileMode) fs.FileMode) error {
	theirs, err := m.memoryKeys(parent)
	if err != nil {
		return err
	}
	for _, key := range theirs {
		v, err := m.Files.ReadFile(ctx, key)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return fmt.Errorf("repo: copy the memory of %s: %w", parent, err)
		}
		to := Prefix(hash) + strings.TrimPrefix(key, Prefix(parent))
		if CheckKey(to, v) != nil {
			continue // broken: it stays the parent's, for repo check to name
		}
		if err := m.Files.CreateFile(ctx, to, v, mode(to, 0o644), m.By); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("repo: copy the memory of %s: %w", parent, err)
		}
	}
	return nil
}

// memoryKeys are the files of the memory of hash that a branch inherits:
// its records and its summaries, sorted.
func (m Memory) memoryKeys(hash string) ([]string, error) {
	ents, err := m.Files.List(Prefix(hash))
	if err != nil {
		return nil, fmt.Errorf("repo: list %s: %w", Prefix(hash), err)
	}
	var keys []string
	for _, e := range ents {
		if !e.Info.Mode.IsRegular() {
			continue
		}
		if h, _, _, ok := ParseKey(e.Key); (ok && h == hash) || e.Key == SummariesKey(hash) {
			keys = append(keys, e.Key)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Info is the repository hash's repo.json; an error satisfying
// errors.Is(err, fs.ErrNotExist) when it has none.
func (m Memory) Info(ctx context.Context, hash string) (Info, error) {
	if err := ValidateHash(hash); err != nil {
		return Info{}, err
	}
	v, err := m.Files.ReadFile(ctx, InfoKey(hash))
	if err != nil {
		return Info{}, fmt.Errorf("repo: %s: %w", InfoKey(hash), err)
	}
	return ParseInfo(hash, v)
}

// ErrWriting is the error of an empty repo.json: another process's Init
// is writing it.
var ErrWriting = errors.New("repo.json is being written")

// ParseInfo reads v, the repo.json of the repository hash (ErrWriting
// when it is empty).
func ParseInfo(hash string, v []byte) (Info, error) {
	if len(v) == 0 {
		return Info{}, fmt.Errorf("repo: %s: %w", InfoKey(hash), ErrWriting)
	}
	var info Info
	if err := json.Unmarshal(v, &info); err != nil {
		return Info{}, fmt.Errorf("repo: %s: not the JSON of a repository (remove it: the next init writes it again): %w", InfoKey(hash), err)
	}
	if info.Hash != hash {
		return Info{}, fmt.Errorf("repo: %s: its hash is %s, not its directory's (remove it: the next init writes it again)", InfoKey(hash), quote(info.Hash))
	}
	return info, nil
}

// List is the Info of every repository with a repo.json in files, by
// hash. A repo.json that does not read is left out and named in the
// error, which comes with the others' Info.
func List(ctx context.Context, files Files) ([]Info, error) {
	ents, err := files.List(Dir)
	if err != nil {
		return nil, fmt.Errorf("repo: list %s: %w", Dir, err)
	}
	var hashes []string
	for _, e := range ents {
		rest, _ := strings.CutPrefix(e.Key, Dir)
		if h, name, _ := strings.Cut(rest, "/"); name == "repo.json" && ValidateHash(h) == nil && e.Info.Mode.IsRegular() {
			hashes = append(hashes, h)
		}
	}
	slices.Sort(hashes)
	m := Memory{Files: files}
	var infos []Info
	var errs []error
	for _, h := range hashes {
		info, err := m.Info(ctx, h)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		default:
			infos = append(infos, info)
		}
	}
	return infos, errors.Join(errs...)
}

// Put writes r into the memory of hash, by id: a new record gets
// CreatedAt now unless r has one; an existing one keeps its CreatedAt
// (r's is ignored). A convention's UpdatedAt is now. Put checks the
// record (Validate) before writing it, and returns what it wrote. An
// existing file that is no valid record is not overwritten: Put fails
// with its problems, to fix or remove it first.
func (m Memory) Put(ctx context.Context, hash string, r Record) (Record, error) {
	if err := ValidateHash(hash); err != nil {
		return Record{}, err
	}
	if r.Kind.Dir() == "" || ValidateID(r.ID) != nil {
		return Record{}, r.problems(nil).err("") // kind or id: no key to name
	}
	key := RecordKey(hash, r.Kind, r.ID)
	now := m.now()
	old, err := m.Files.ReadFile(ctx, key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
		}
	case err != nil:
		return Record{}, fmt.Errorf("repo: put %s: %w", key, err)
	default:
		if err := CheckKey(key, old); err != nil {
			return Record{}, fmt.Errorf("repo: put %s: the file there is no valid record; fix or remove it first: %w", key, err)
		}
		prev, _ := Parse(r.Kind, old)
		r.CreatedAt = prev.CreatedAt
	}
	r.CreatedAt = r.CreatedAt.UTC().Truncate(time.Second)
	if r.Kind == Convention {
		// Not before its creation, whatever this machine's clock says.
		r.UpdatedAt = now
		if r.UpdatedAt.Before(r.CreatedAt) {
			r.UpdatedAt = r.CreatedAt
		}
	}
	if err := r.problems(nil).err(key); err != nil { // Validate, naming the key
		return Record{}, err
	}
	v := r.Markdown()
	if len(v) > MaxRecordSize {
		return Record{}, &RecordError{Key: key, Problem: fmt.Sprintf("the record is %d bytes: a record is at most 1 MiB (keep the details elsewhere and point to them)", len(v))}
	}
	if err := m.Files.WriteFile(ctx, key, v, m.By); err != nil {
		return Record{}, fmt.Errorf("repo: put %s: %w", key, err)
	}
	return r, nil
}

// Invalid is a record's file that is not a valid record, and why.
type Invalid struct {
	Key string
	Err error
}

// Records is every record of the repository hash, parsed, in kind order
// (conventions, decisions, notes), then by id; and, by key, the records'
// files that are no valid record (CheckKey), each with its problems: one
// bad file never hides the others. A file of .md in a kind's directory
// whose name is no id (Flaky Test.md) is listed as Invalid too, so that a
// record its writer meant is not ignored without a word.
func (m Memory) Records(ctx context.Context, hash string) (recs []Record, invalid []Invalid, err error) {
	if err := ValidateHash(hash); err != nil {
		return nil, nil, err
	}
	ents, err := m.Files.List(Prefix(hash))
	if err != nil {
		return nil, nil, fmt.Errorf("repo: list %s: %w", Prefix(hash), err)
	}
	slices.SortFunc(ents, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	for _, e := range ents {
		if e.Info.Mode.IsDir() || !recordFile(e.Key) {
			continue
		}
		v, err := m.Files.ReadFile(ctx, e.Key)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile
		case ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case err != nil:
			invalid = append(invalid, Invalid{Key: e.Key, Err: err})
			continue
		}
		if err := checkFile(e.Key, v); err != nil {
			invalid = append(invalid, Invalid{Key: e.Key, Err: err})
			continue
		}
		_, k, _, _ := ParseKey(e.Key)
		r, _ := Parse(k, v)
		recs = append(recs, r)
	}
	slices.SortStableFunc(recs, func(a, b Record) int {
		if c := slices.Index(Kinds, a.Kind) - slices.Index(Kinds, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return recs, invalid, nil
}

// AppendSummary appends line, one JSON object and '\n', to the
// repository's summaries.jsonl: atomically through an Appender; else by
// reading and writing it whole (adding the '\n' a last line lacks).
func (m Memory) AppendSummary(ctx context.Context, hash string, line []byte) error {
	if err := ValidateHash(hash); err != nil {
		return err
	}
	key := SummariesKey(hash)
	body, ok := bytes.CutSuffix(line, []byte("\n"))
	if !ok || bytes.ContainsAny(body, "\n\r") || !json.Valid(body) {
		return fmt.Errorf("repo: append to %s: want one line of JSON ending in a newline (%d bytes given)", key, len(line))
	}
	if a, ok := m.Files.(Appender); ok {
		if err := m.Files.MkdirAll(strings.TrimSuffix(Prefix(hash), "/"), 0o755); err != nil {
			return fmt.Errorf("repo: append to %s: %w", key, err)
		}
		if err := a.AppendFile(ctx, key, line, m.By); err != nil {
			return fmt.Errorf("repo: append to %s: %w", key, err)
		}
		return nil
	}
	old, err := m.Files.ReadFile(ctx, key)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("repo: append to %s: %w", key, err)
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	if err := m.Files.WriteFile(ctx, key, append(old, line...), m.By); err != nil {
		return fmt.Errorf("repo: append to %s: %w", key, err)
	}
	return nil
}

// writing is the derived attribute of an artifact while CachePut writes
// it: no state, so that a reader between the write of the value and the
// attribute does not take the new value for the old one's source.
const writing = "memfs:writing"

// CachePut writes value as the repository's derived artifact name
// (IndexKey), then records that it was made from from (meta.Derived).
func (m Memory) CachePut(ctx context.Context, hash, name string, value []byte, from string) error {
	key, err := IndexKey(hash, name)
	if err != nil {
		return err
	}
	if err := meta.ValidateDerived(from); err != nil || from == writing {
		return fmt.Errorf("repo: cache %s: from: want 1 to %d bytes of printable text, such as a State", key, meta.MaxDerivedLen)
	}
	_, found, err := m.derived(key)
	if err != nil {
		return err
	}
	if found {
		if err := m.Files.SetAttr(ctx, key, meta.Derived, []byte(writing), m.By); err != nil {
			return fmt.Errorf("repo: cache %s: %w", key, err)
		}
	}
	if err := m.Files.WriteFile(ctx, key, value, m.By); err != nil {
		return fmt.Errorf("repo: cache %s: %w", key, err)
	}
	if err := m.Files.SetAttr(ctx, key, meta.Derived, []byte(from), m.By); err != nil {
		return fmt.Errorf("repo: cache %s: %w", key, err)
	}
	return nil
}

// CacheGet reads the repository's derived artifact name: fresh when it
// was made from from. An absent one is an error satisfying
// errors.Is(err, fs.ErrNotExist); a stale one is returned all the same.
func (m Memory) CacheGet(ctx context.Context, hash, name, from string) (value []byte, fresh bool, err error) {
	key, err := IndexKey(hash, name)
	if err != nil {
		return nil, false, err
	}
	// The attribute before and after the value: CachePut changes it
	// before it writes the value and after, so that a value read between
	// two equal attributes is the one they name.
	before, _, err := m.derived(key)
	if err != nil {
		return nil, false, err
	}
	value, err = m.Files.ReadFile(ctx, key)
	if err != nil {
		return nil, false, fmt.Errorf("repo: cache %s: %w", key, err)
	}
	after, _, err := m.derived(key)
	if err != nil {
		return nil, false, err
	}
	return value, before == from && after == from, nil
}

// derived is the derived attribute of the index key ("" for none) and
// whether key exists.
func (m Memory) derived(key string) (string, bool, error) {
	dir := key[:strings.LastIndexByte(key, '/')+1]
	ents, err := m.Files.List(dir)
	if err != nil {
		return "", false, fmt.Errorf("repo: list %s: %w", dir, err)
	}
	for _, e := range ents {
		if e.Key == key {
			return string(e.Info.XAttrs[meta.Derived]), true, nil
		}
	}
	return "", false, nil
}

// Stale is the names of the repository's derived artifacts that were not
// made from its State (its repo.json's), sorted; none when it has no
// State, or no repo.json.
func (m Memory) Stale(ctx context.Context, hash string) ([]string, error) {
	info, err := m.Info(ctx, hash)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil || info.State == "" {
		return nil, err
	}
	dir := Prefix(hash) + indexesDir + "/"
	ents, err := m.Files.List(dir)
	if err != nil {
		return nil, fmt.Errorf("repo: list %s: %w", dir, err)
	}
	var stale []string
	for _, e := range ents {
		h, name, ok := ParseIndexKey(e.Key)
		if !ok || h != hash || !e.Info.Mode.IsRegular() {
			continue
		}
		if string(e.Info.XAttrs[meta.Derived]) != info.State {
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	return stale, nil
}

// CachedMap is the repository map of id's working tree (MapName): the one
// in the cache while it was made from from, else a new one (o.Map),
// which it puts in the cache.
func (m Memory) CachedMap(ctx context.Context, id Identity, from string, o MapOptions) ([]byte, error) {
	v, fresh, err := m.CacheGet(ctx, id.Hash, MapName, from)
	switch {
	case err == nil && fresh:
		return v, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if v, err = o.Map(ctx, id.Path); err != nil {
		return nil, err
	}
	return v, m.CachePut(ctx, id.Hash, MapName, v, from)
}

// Line is in as memfs repo ls lists it: ID BRANCH PATH LAST-SEEN ("-" for
// no branch).
func (in Info) Line() string {
	return fmt.Sprintf("%s %s %s %s\n", in.Hash, cmp.Or(in.Branch, "-"), in.Path, in.LastSeen.UTC().Format(time.RFC3339))
}

// Check writes each problem of the repository's records to w, a line
// each, and fails, saying how many of how many records fail their schema,
// when one does (memfs repo check).
func (m Memory) Check(ctx context.Context, hash string, w io.Writer) error {
	recs, invalid, err := m.Records(ctx, hash)
	if err != nil {
		return err
	}
	for _, bad := range invalid {
		fmt.Fprintln(w, bad.Err)
	}
	if len(invalid) > 0 {
		return fmt.Errorf("repo check: %d of %d records fail their schema", len(invalid), len(invalid)+len(recs))
	}
	return nil
}
