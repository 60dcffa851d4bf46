package eventlog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// Sys is the part of backend.SysStore the log uses. Every backend.SysStore is a
// Sys. If the Sys also has a DeleteSys method (as a backend.SysStore does), the
// log uses it to remove chunks that a failed Append left behind.
type Sys interface {
	SaveSys(ctx context.Context, name string, data []byte) error
	LoadSys(ctx context.Context, name string) ([]byte, error)
	ListSys(ctx context.Context, prefix string) ([]backend.Entry, error)
}

// deleter is the optional part of Sys.
type deleter interface {
	DeleteSys(ctx context.Context, names ...string) error
}

// The operations an Event records.
const (
	OpWrite  = "write"  // a value was written (created or changed)
	OpDelete = "delete" // a key was removed
	OpRename = "rename" // OldKey was renamed to Key
	OpAttr   = "attr"   // attributes (mode, owner, xattrs) changed, value unchanged
	// OpConflict: another writer changed Key since the session read it,
	// and the session's conflict policy resolved it (Conflict says how;
	// Size and SHA256 are of the other writer's value).
	OpConflict = "conflict"
	// OpRedact: the bytes of Key's version at Redacted (a seq) were
	// removed from history (a secret the rules missed); its record stays.
	OpRedact = "redact"
	// OpBreak records damage that Open found in the log's own records
	// (see Break). Only the log writes it: Append refuses it from callers.
	OpBreak = "break"
)

// Event is one change that reached the store. One line of the log holds the
// JSON of one Event, its fields in this order.
type Event struct {
	Seq     uint64          `json:"seq"`               // 1, 2, 3 ... no gaps
	Time    time.Time       `json:"time"`              // UTC; non-decreasing in seq order
	Op      string          `json:"op"`                // OpWrite, OpDelete, OpRename, OpAttr or OpConflict
	Key     string          `json:"key"`               // the key changed (the new name for a rename)
	OldKey  string          `json:"old_key,omitempty"` // the old name, for a rename
	Size    int64           `json:"size"`              // the value's size after the change
	SHA256  string          `json:"sha256,omitempty"`  // hex SHA-256 of the value (not for delete)
	Writer  meta.WriterInfo `json:"writer"`            // who made the change
	Session string          `json:"session"`           // the mount session's id
	Break   *Break          `json:"break,omitempty"`   // for OpBreak: the damage; nil for every other op
	// Conflict is, for OpConflict, how the conflict was resolved; nil for
	// every other op.
	Conflict *Conflict `json:"conflict,omitempty"`
	// Redacted is, for OpRedact, the seq of the version redacted.
	Redacted uint64 `json:"redacted,omitempty"`
	// Reason says why memfs made the change of its own accord: "expire"
	// for an OpDelete of a file whose time to live ran out (package
	// expire). "" for a change a writer made.
	Reason string `json:"reason,omitempty"`
	// Route is the route of Key in a mount of several stores (memfs
	// mount --route): its prefix, or "default". "" for a mount of one.
	Route string `json:"route,omitempty"`
	Prev  string `json:"prev"` // hex SHA-256 of the previous event's line; "" for seq 1
}

// Break is what an OpBreak event records: a record of the log that Open
// found damaged, which bytes, and where they are kept. The event itself
// says where the log resumed: it chains to the last intact event (its Prev)
// and takes the next seq. Its Key is Record, its Size the record's size as
// found and its SHA256 the hash of the record as found (of the copy in
// SavedTo, when there is one); it has no writer and no session.
type Break struct {
	Record string `json:"record"` // the damaged record: a chunk (events/...) or events.head
	Reason string `json:"reason"` // what is wrong with it
	// Off and Len are the damaged bytes: Record[Off:Off+Len] as found.
	Off int64 `json:"off"`
	Len int64 `json:"len"`
	// Moved says the damaged bytes left the log: cut from the end of the
	// last chunk, a whole chunk taken out of events/, or a head record
	// replaced by the next one. Otherwise they are still in place, in a
	// chunk that is never written again.
	Moved bool `json:"moved,omitempty"`
	// SavedTo is the record under events.damaged/ that holds the whole
	// record as Open found it; "" when the bytes did not move.
	SavedTo string `json:"saved_to,omitempty"`
	// First and Last are the events the damage puts in doubt (lost,
	// unreadable, or not vouched for); Last is 0 when it is not known how
	// far they went, First 0 when no event is known to be concerned.
	First uint64 `json:"first,omitempty"`
	Last  uint64 `json:"last,omitempty"`
}

// ChunkEvents is the most events one chunk holds.
const ChunkEvents = 1024

// The system records: chunks are chunkPrefix + 12-digit first seq + "-" +
// first time in nameLayout; the head is headName; copies of damaged records
// are damagedPrefix + the record's name + "." + 16 hex digits of its hash.
const (
	chunkPrefix   = "events/"
	headName      = "events.head"
	damagedPrefix = "events.damaged/"
	seqDigits     = 12
	nameLayout    = "20060102T150405.000000000Z"
)

// HeadRecord is the name of the log's head record: every append changes
// it (history's collection guards its deletes on it).
const HeadRecord = headName

func validOp(op string) bool {
	switch op {
	case OpWrite, OpDelete, OpRename, OpAttr, OpConflict, OpRedact:
		return true
	}
	return false
}

// encodeLine returns the line of ev without its newline, and the line's hash
// in hex.
func encodeLine(ev *Event) ([]byte, string, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, "", err
	}
	return b, lineHash(b), nil
}

// lineHash is the hash of a line without its newline, as the next event's
// Prev records it.
func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

func decodeLine(line []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(line, &ev); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// damagedName names the copy of a damaged record whose bytes were data.
// Equal bytes get the same name, so saving a copy twice is harmless, and a
// record damaged twice in different ways gets two copies.
func damagedName(record string, data []byte) string {
	sum := sha256.Sum256(data)
	return damagedPrefix + record + "." + hex.EncodeToString(sum[:8])
}

// chunkName names the chunk whose first event has seq and t.
func chunkName(seq uint64, t time.Time) string {
	return fmt.Sprintf("%s%0*d-%s", chunkPrefix, seqDigits, seq, t.UTC().Format(nameLayout))
}

// parseChunkName is the inverse of chunkName.
func parseChunkName(name string) (uint64, time.Time, bool) {
	rest, ok := strings.CutPrefix(name, chunkPrefix)
	if !ok || len(rest) != seqDigits+1+len(nameLayout) || rest[seqDigits] != '-' {
		return 0, time.Time{}, false
	}
	seq, err := strconv.ParseUint(rest[:seqDigits], 10, 64)
	if err != nil || seq == 0 {
		return 0, time.Time{}, false
	}
	t, err := time.Parse(nameLayout, rest[seqDigits+1:])
	if err != nil {
		return 0, time.Time{}, false
	}
	return seq, t, true
}

// head is the record events.head: the seq and line hash of the last event.
type head struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// splitLines cuts data into whole lines (without their newlines). torn is
// the length of a last line that has no newline, 0 when data ends in one.
func splitLines(data []byte) (lines [][]byte, torn int) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return lines, len(data)
		}
		lines = append(lines, data[:i])
		data = data[i+1:]
	}
	return lines, 0
}

// Conflict is what an OpConflict event records.
type Conflict struct {
	Policy  string `json:"policy"`         // keep-both, merge, last-writer-wins
	Outcome string `json:"outcome"`        // kept-both, merged, overwritten, restored, deleted, kept-beside
	Copy    string `json:"copy,omitempty"` // the key of the conflict copy, if any
}
