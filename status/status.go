// Package status is the format of a memfs mount's .memfs/status: one
// "name: value" line each, which plain tools (cat, grep) read, and the
// same values as JSON in .memfs/status.json. It is the one owner of that
// text: the mount renders a Status with MarshalText, and every reader of
// a mount's status (memfs unmount, the commands that go through a mount)
// gets a Status back from Parse. QueryFile names the other file of
// .memfs/ that both sides spell: the one a long query is written into.
//
// A Status is made for one caller: the mount leaves out what that caller
// may not see (a flush error's text, damaged keys it may not read) before
// rendering it.
//
// # Concurrency
//
// A Status is a plain value; its methods do not modify it.
package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Status is what .memfs/status says. Its zero value renders the status of
// a session that holds nothing and never flushed.
type Status struct {
	KeysIndexed    int `json:"keys_indexed"`    // every key the mount knows
	KeysLoaded     int `json:"keys_loaded"`     // those whose values are in memory
	Dirty          int `json:"dirty"`           // unflushed writes
	PendingDeletes int `json:"pending_deletes"` // unflushed removals

	LastFlush       time.Time `json:"last_flush,omitzero"` // zero: never
	LastFlushResult string    `json:"last_flush_result"`   // "none", "ok", "error: TEXT" (root's) or "error (...)"
	Flushes         int       `json:"flushes"`

	Damaged       []string `json:"damaged,omitempty"`        // keys the store could not read, that the caller may see
	DamagedHidden int      `json:"damaged_hidden,omitempty"` // and how many others

	Store      string  `json:"store,omitempty"` // the store the mount serves
	Mountpoint string  `json:"mountpoint,omitempty"`
	PID        int     `json:"pid,omitempty"` // the memfs process serving the mount
	Memory     *Memory `json:"memory,omitempty"`
	Search     string  `json:"search,omitempty"` // "keyword only (no embedder)", or the embedder and its vectors
	Peers      *Peers  `json:"peers,omitempty"`  // the mounts of a shared store; nil for a store of one mount

	// StaleIndexes counts the derived artifacts of repositories
	// (repos/HASH/indexes/) the caller may read that were computed from
	// another state of their working tree than the one memfs last saw
	// (repo.json's state): memfs repo cache get NAME says which.
	StaleIndexes int `json:"stale_indexes,omitempty"`

	// Routes are the mount's routes but the default (memfs mount
	// --route), longest prefix first; Quotas its limits, with what the
	// caller may see of their largest files. Their text lines are for
	// people: Parse leaves them out (status.json has them).
	Routes []Route `json:"routes,omitempty"`
	Quotas []Quota `json:"quotas,omitempty"`

	Unlisted []string `json:"unlisted,omitempty"` // .memfs files that ls does not list
}

// Route is one route of a mount.
type Route struct {
	Prefix   string `json:"prefix"`
	Store    string `json:"store"`
	Tier     string `json:"tier"` // "persistent", "working", "indexed"
	ReadOnly bool   `json:"read_only,omitempty"`
	TTL      string `json:"ttl,omitempty"` // the default time to live of its files, "" for none
}

// Quota is one limit of a mount (memfs mount --quota) and what its
// prefix holds. A zero limit is none.
type Quota struct {
	Prefix      string `json:"prefix"`
	Bytes       int64  `json:"bytes"`
	MaxBytes    int64  `json:"max_bytes,omitempty"`
	Files       int64  `json:"files"`
	MaxFiles    int64  `json:"max_files,omitempty"`
	MaxFileSize int64  `json:"max_file_size,omitempty"`
	Largest     []File `json:"largest,omitempty"` // largest first
	// UsageHidden: the reader may not read every file under the
	// prefix: Bytes and Files are 0 (the sums would tell of them), and
	// Largest names only files it may read.
	UsageHidden bool `json:"usage_hidden,omitempty"`
}

// File is a file and its size.
type File struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
}

// Memory is the session's use of memory for file contents.
type Memory struct {
	Held    int64 `json:"held"`    // bytes of file contents held
	Dirty   int64 `json:"dirty"`   // of which unflushed
	Budget  int64 `json:"budget"`  // 0: none
	Dropped int64 `json:"dropped"` // values dropped under the budget
}

// Peers are the live mounts of a shared store.
type Peers struct {
	Unknown bool   `json:"unknown,omitempty"` // the store did not answer
	List    []Peer `json:"list,omitempty"`
}

// Peer is one live mount of a shared store.
type Peer struct {
	Agent string    `json:"agent"` // "" for none
	Host  string    `json:"host"`
	PID   int       `json:"pid"`
	Mount string    `json:"mount"`
	Since time.Time `json:"since"`
}

// KeywordOnly is Status.Search of a mount without an embedder.
const KeywordOnly = "keyword only (no embedder)"

// The flush results of a Status besides "error: TEXT".
const (
	ResultNone   = "none"
	ResultOK     = "ok"
	ResultHidden = "error (its text may name a file: shown to root, and in memfs's log)"
)

// MarshalText renders s as .memfs/status shows it.
func (s Status) MarshalText() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "keys_indexed: %d\nkeys_loaded: %d\ndirty: %d\npending_deletes: %d\n", s.KeysIndexed, s.KeysLoaded, s.Dirty, s.PendingDeletes)
	if s.LastFlush.IsZero() {
		b.WriteString("last_flush: never\nlast_flush_result: none\n")
	} else {
		fmt.Fprintf(&b, "last_flush: %s\nlast_flush_result: %s\nflushes: %d\n", s.LastFlush.Format(time.RFC3339Nano), s.LastFlushResult, s.Flushes)
	}
	for _, k := range s.Damaged {
		fmt.Fprintf(&b, "damaged: %s\n", k)
	}
	if s.DamagedHidden > 0 {
		fmt.Fprintf(&b, "damaged_hidden: %d (keys you may not see; memfs fsck on the store lists them)\n", s.DamagedHidden)
	}
	if s.Store != "" || s.Mountpoint != "" || s.PID != 0 {
		fmt.Fprintf(&b, "store: %s\nmountpoint: %s\npid: %d\n", s.Store, s.Mountpoint, s.PID)
	}
	if m := s.Memory; m != nil {
		budget := "none"
		if m.Budget > 0 {
			budget = fmt.Sprintf("%d MiB", m.Budget>>20)
		}
		fmt.Fprintf(&b, "memory: %d MiB of file contents held (%d MiB unflushed), budget %s; %d values dropped under it (each read again at its next open)\n",
			m.Held>>20, m.Dirty>>20, budget, m.Dropped)
	}
	if s.Search != "" {
		fmt.Fprintf(&b, "search: %s\n", s.Search)
	}
	s.Peers.marshal(&b)
	if s.StaleIndexes > 0 {
		fmt.Fprintf(&b, "stale_indexes: %d\n", s.StaleIndexes)
	}
	for _, r := range s.Routes {
		fmt.Fprintf(&b, "route: %s %s", strconv.Quote(r.Prefix), r.Tier)
		if r.ReadOnly {
			b.WriteString(" read-only")
		}
		if r.TTL != "" {
			fmt.Fprintf(&b, " ttl %s", r.TTL)
		}
		fmt.Fprintf(&b, " %s\n", r.Store)
	}
	for _, q := range s.Quotas {
		q.marshal(&b)
	}
	if len(s.Unlisted) > 0 {
		fmt.Fprintf(&b, "unlisted: %s\n", strings.Join(s.Unlisted, " "))
	}
	return b.Bytes(), nil
}

// MarshalJSON renders s as .memfs/status.json shows it: its fields, not
// its text.
func (s Status) MarshalJSON() ([]byte, error) {
	type fields Status // without the methods
	return json.Marshal(fields(s))
}

// marshal writes q's line: use against each limit, what is over and by
// how much, and the largest files.
func (q Quota) marshal(b *bytes.Buffer) {
	if q.UsageHidden {
		fmt.Fprintf(b, "quota: %s usage hidden (files you may not read are under it), at most %d bytes, %d files", strconv.Quote(q.Prefix), q.MaxBytes, q.MaxFiles)
	} else {
		fmt.Fprintf(b, "quota: %s %d bytes", strconv.Quote(q.Prefix), q.Bytes)
		if q.MaxBytes > 0 {
			fmt.Fprintf(b, " of %d", q.MaxBytes)
		}
		fmt.Fprintf(b, ", %d files", q.Files)
		if q.MaxFiles > 0 {
			fmt.Fprintf(b, " of %d", q.MaxFiles)
		}
	}
	if q.MaxFileSize > 0 {
		fmt.Fprintf(b, ", files up to %d bytes", q.MaxFileSize)
	}
	if q.MaxBytes > 0 && q.Bytes > q.MaxBytes {
		fmt.Fprintf(b, "; OVER by %d bytes", q.Bytes-q.MaxBytes)
	}
	if q.MaxFiles > 0 && q.Files > q.MaxFiles {
		fmt.Fprintf(b, "; OVER by %d files", q.Files-q.MaxFiles)
	}
	if len(q.Largest) > 0 {
		b.WriteString("; largest:")
		for _, f := range q.Largest {
			fmt.Fprintf(b, " %s %d", strconv.Quote(f.Key), f.Size)
		}
	}
	if q.UsageHidden {
		b.WriteString(" (and files you may not read)")
	}
	b.WriteString("\n")
}

func (p *Peers) marshal(b *bytes.Buffer) {
	switch {
	case p == nil:
		return
	case p.Unknown:
		b.WriteString("peers: unknown (the store did not answer)\n")
		return
	}
	fmt.Fprintf(b, "peers: %d\n", len(p.List))
	for _, p := range p.List {
		agent := p.Agent
		if agent == "" {
			agent = "-"
		}
		fmt.Fprintf(b, "peer: %s@%s pid %d %s since %s\n", plain(agent), plain(p.Host), p.PID, plain(p.Mount),
			p.Since.UTC().Format(time.RFC3339))
	}
}

// plain is s as it is when it holds only printable, space-free
// characters (and no @, which ends a peer's agent), else quoted.
func plain(s string) string {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '"' || r == '\\' || r == '@' || !(r < 0x80 || r >= 0xa0) {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// Parse reads a .memfs/status text. Lines it does not know are skipped (a
// newer mount may say more); a known line with a malformed value is an
// error.
func Parse(text []byte) (Status, error) {
	var s Status
	for line := range strings.SplitSeq(string(text), "\n") {
		name, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if err := s.parseLine(name, v); err != nil {
			return Status{}, fmt.Errorf("status: %s: %w", name, err)
		}
	}
	return s, nil
}

func (s *Status) parseLine(name, v string) error {
	var err error
	switch name {
	case "keys_indexed":
		s.KeysIndexed, err = strconv.Atoi(v)
	case "keys_loaded":
		s.KeysLoaded, err = strconv.Atoi(v)
	case "dirty":
		s.Dirty, err = strconv.Atoi(v)
	case "pending_deletes":
		s.PendingDeletes, err = strconv.Atoi(v)
	case "last_flush":
		if v != "never" {
			s.LastFlush, err = time.Parse(time.RFC3339Nano, v)
		}
	case "last_flush_result":
		s.LastFlushResult = v
	case "flushes":
		s.Flushes, err = strconv.Atoi(v)
	case "damaged":
		s.Damaged = append(s.Damaged, v)
	case "stale_indexes":
		s.StaleIndexes, err = strconv.Atoi(v)
	case "damaged_hidden":
		_, err = fmt.Sscanf(v, "%d", &s.DamagedHidden)
	case "store":
		s.Store = v
	case "mountpoint":
		s.Mountpoint = v
	case "pid":
		s.PID, err = strconv.Atoi(v)
	case "memory":
		s.Memory, err = parseMemory(v)
	case "search":
		s.Search = v
	case "peers":
		s.Peers = &Peers{Unknown: strings.HasPrefix(v, "unknown")}
		if !s.Peers.Unknown {
			_, err = strconv.Atoi(v)
		}
	case "peer":
		err = s.parsePeer(v)
	case "unlisted":
		s.Unlisted = strings.Fields(v)
	}
	return err
}

func parseMemory(v string) (*Memory, error) {
	var m Memory
	var budget string
	n, err := fmt.Sscanf(v, "%d MiB of file contents held (%d MiB unflushed), budget %s", &m.Held, &m.Dirty, &budget)
	if err != nil || n != 3 {
		return nil, fmt.Errorf("%q: %v", v, err)
	}
	if budget = strings.TrimSuffix(budget, ";"); budget != "none" {
		if m.Budget, err = strconv.ParseInt(budget, 10, 64); err != nil {
			return nil, fmt.Errorf("%q: %v", v, err)
		}
		m.Budget <<= 20
	}
	m.Held <<= 20
	m.Dirty <<= 20
	if _, after, ok := strings.Cut(v, "; "); ok {
		fmt.Sscanf(after, "%d values dropped", &m.Dropped)
	}
	return &m, nil
}

// parsePeer reads "AGENT@HOST pid N MOUNT since TIME", each word plain or
// quoted.
func (s *Status) parsePeer(v string) error {
	var p Peer
	var err error
	if p.Agent, v, err = word(v, '@'); err != nil {
		return err
	}
	if p.Agent == "-" {
		p.Agent = ""
	}
	if p.Host, v, err = word(v, ' '); err != nil {
		return err
	}
	rest, ok := strings.CutPrefix(v, "pid ")
	if !ok {
		return fmt.Errorf("peer %q: no pid", v)
	}
	pid, rest, _ := strings.Cut(rest, " ")
	if p.PID, err = strconv.Atoi(pid); err != nil {
		return err
	}
	if p.Mount, rest, err = word(rest, ' '); err != nil {
		return err
	}
	since, ok := strings.CutPrefix(rest, "since ")
	if !ok {
		return fmt.Errorf("peer %q: no since", v)
	}
	if p.Since, err = time.Parse(time.RFC3339, since); err != nil {
		return err
	}
	if s.Peers == nil {
		s.Peers = &Peers{}
	}
	s.Peers.List = append(s.Peers.List, p)
	return nil
}

// word reads a plain or quoted word from the start of v, which must end
// at sep (consumed) or at the end of v.
func word(v string, sep byte) (string, string, error) {
	if strings.HasPrefix(v, `"`) {
		q, err := strconv.QuotedPrefix(v)
		if err != nil {
			return "", "", err
		}
		w, _ := strconv.Unquote(q)
		rest := v[len(q):]
		if rest != "" && rest[0] != sep {
			return "", "", fmt.Errorf("%q: want %q after a quoted word", v, sep)
		}
		if rest != "" {
			rest = rest[1:]
		}
		return w, rest, nil
	}
	w, rest, _ := strings.Cut(v, string(sep))
	return w, rest, nil
}

// QueryFile is the name, in .memfs/search/ and .memfs/context/, of the
// file that takes a query of any length: a file name holds at most 255
// bytes on many kernels' FUSE (4 KiB on Linux 6.x), and a query written
// as one is percent-encoded. Opened read-write, the file takes the query
// name (the same text as a file name there: percent-encoded words) by
// write(2), and then reads back, from offset 0, the answer that name
// would give, computed at the first read for the credential of the
// process that opened it (as an answer file is for its opener). Each open
// is its own exchange: nobody else sees the query or the answer. The
// query ".query" itself is asked as %2Equery.
const QueryFile = ".query"
