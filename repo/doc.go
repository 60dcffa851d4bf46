// Package repo keeps an agent's memory per repository: it names the
// repository an agent works in, so that what it learns there
// (conventions, decisions, notes) is kept for that repository and no other
// (issue 33), and it owns the layout and the formats of that memory.
//
// # Identity
//
// A repository's identity (Identify) is the hash of the canonical path of
// its working tree, the URL of its remote and its current branch; without
// a remote it is the hash of the path alone. The path is the working
// tree's top level, symlinks resolved and cleaned, so that its
// subdirectories, a path given with a trailing slash or through a symlink
// name the same repository. Git is asked through the real git program,
// with the repository's own configuration and none of the caller's GIT_*;
// a directory outside any working tree (or where git is not installed) is
// identified by its path.
//
// # Layout
//
// A repository's memory is the directory repos/HASH/ of the store (Prefix),
// HASH its identity's 16 hex digits (ValidateHash):
//
//	repos/HASH/repo.json          Info: path, remote, branch, parent, first and last seen, state
//	repos/HASH/conventions/ID.md  a record of each kind, one file each (RecordKey, ParseKey)
//	repos/HASH/decisions/ID.md
//	repos/HASH/notes/ID.md
//	repos/HASH/summaries.jsonl    step summaries, one JSON object a line (AppendSummary)
//	repos/HASH/indexes/NAME       derived artifacts: the map, symbols (CachePut, CacheGet)
//
// An ID is 1 to 64 bytes of lowercase ASCII letters, digits, '.', '_' and
// '-', starting with a letter or digit (ValidateID; NewID makes one from a
// text and a time). Only exactly repos/HASH/KIND/ID.md is a record: a
// deeper path, a name starting with '.' or not ending in .md (an editor's
// temporary file) is not. A context pack always includes the conventions
// and decisions (RulePrefixes); the notes are searched.
//
// # Records
//
// A record is a Markdown file: a YAML front matter between a first line
// "---" and a later line "---", then a body of free Markdown:
//
//	---
//	id: wrap-errors
//	title: Wrap errors with %w
//	tags: [go, errors]
//	createdAt: 2026-12-06T19:15:00Z
//	updatedAt: 2026-12-07T08:00:00Z
//	---
//	Wrap with fmt.Errorf("...: %w", err); never match error text.
//
// The fields of each kind, times in RFC 3339:
//
//	convention  id, title (one line, at most 200 bytes), tags (optional
//	            list, each as meta.ParseTags has them), createdAt,
//	            updatedAt (not before createdAt)
//	decision    id, summary (one line, at most 200 bytes), rationale (one
//	            or more lines), impactedPaths (optional list of paths
//	            relative to the repository's top, with '/', no '..'),
//	            createdAt
//	note        id, source (manual, agent or tool), createdAt
//
// Every field is required but the optional lists; a field of another kind,
// or an unknown one, is an error. The id is the file's name without .md.
// A record is at most 1 MiB (MaxRecordSize). Record.Markdown writes the
// fields in this order, times in UTC to the second, lists in flow style,
// every string double-quoted (a multi-line one as a literal block), so
// that the redaction of a secret in a value ([REDACTED:rule]) leaves the
// front matter YAML; Parse reads it back as it was.
//
// # Writing records
//
// Memory.Put upserts a record by id: a new record is created now (unless
// its caller gives CreatedAt); an existing one keeps its createdAt
// whatever the caller gives, and a convention's updatedAt becomes now. Put
// checks the record before it writes, and never overwrites a file that is
// no valid record: it fails with that file's problems, to fix or remove.
// Memory.Records reads every record; one bad file never hides the others
// (it comes back as Invalid).
//
// # Branches
//
// A branch's memory starts from the one of the branch it was made from,
// once, and is its own from then on: Memory.Init, on a repository's first
// use (no repo.json yet), when its memory holds no record and no summary,
// copies the records and summaries of the parent (Parent: the branch
// checked out before, else the remote's default branch) and records the
// parent's hash in repo.json. Later changes on either side stay on that
// side. A repository without a remote has one memory for all its branches.
//
// # Derived artifacts
//
// What is computed from the working tree (its map, its symbols) is kept
// under indexes/ with the attribute user.memfs.derived (meta.Derived)
// saying what it was computed from, usually a State: "git:" and the tree
// of HEAD, with "+dirty:" and a hash of the changes when the working tree
// differs from it. Memory.CacheGet gives an artifact and whether it is
// fresh: made from the state its caller has now. Memory.Init records the
// working tree's state in repo.json, and Memory.Stale names the artifacts
// made from another. Outside git there is no State (ErrNoState), and the
// caller needs a key of its own. Map makes the repository's map: its
// files, each with its top-level symbols (Universal Ctags, else go/parser
// for Go files).
//
// # Errors
//
// A record's problems are RecordErrors, which wrap ErrRecord: each names
// the key, the field, what is wrong and what is wanted, in words an agent
// can act on, such as
//
//	repos/0123456789abcdef/conventions/errors.md: front matter: createdAt: "yesterday" is not a time: want RFC 3339, such as 2026-12-06T19:15:00Z
//
// A file's problems (the first 20, then how many more) are joined in one
// error, a line each. No error quotes more than 80 bytes of a value, which
// may hold a secret. An absent file is an error satisfying
// errors.Is(err, fs.ErrNotExist).
//
// # Concurrency
//
// The package keeps no state: its functions and Memory's methods may be
// called from any number of goroutines at once. A Memory's writes are not
// transactions: two Puts of one record at once leave one of them whole;
// AppendSummary is atomic only over Files with an Appender.
//
// # Example
//
//	id, _ := repo.Identify(ctx, dir)
//	state, _ := repo.State(ctx, id.Path)
//	m := repo.Memory{Files: memorytool.Engine(f)}
//	m.See(ctx, id, func() ([]repo.Identity, error) { return repo.Parents(ctx, id) }, state)
//	m.Put(ctx, id.Hash, repo.Record{Kind: repo.Convention, ID: "wrap-errors", Title: "Wrap errors with %w"})
package repo
