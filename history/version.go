package history

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// The operations a Version records: those of the event log.
const (
	OpWrite    = "write"    // the value was written (created or changed)
	OpDelete   = "delete"   // the key was removed
	OpRename   = "rename"   // OldKey was renamed to Key
	OpAttr     = "attr"     // attributes changed, value unchanged
	OpConflict = "conflict" // another writer's value, as the conflict policy kept it
)

const (
	versionPrefix = root + "v/"
	groupPrefix   = root + "s/"
	seqDigits     = 20
	keyHashHex    = 32
)

// Version is one change of a key that reached the store, as its record
// holds it (the JSON of this struct, but Prev and PrevKey).
type Version struct {
	Seq    uint64 `json:"seq"` // the event's seq
	Op     string `json:"op"`
	Key    string `json:"key"`               // the key changed (the new name for a rename)
	OldKey string `json:"old_key,omitempty"` // the old name, for a rename
	// Addr is the stored (redacted) value's address; zero for a delete
	// and for a node without a value (a directory, a fifo ...).
	Addr   Addr              `json:"addr,omitzero"`
	Size   int64             `json:"size"`
	Mode   fs.FileMode       `json:"mode"`
	UID    uint32            `json:"uid"`
	GID    uint32            `json:"gid"`
	Rdev   uint64            `json:"rdev,omitempty"`
	Link   string            `json:"link,omitempty"`
	MTime  int64             `json:"mtime"` // Unix nanoseconds
	ATime  int64             `json:"atime,omitempty"`
	CTime  int64             `json:"ctime,omitempty"`
	XAttrs map[string][]byte `json:"xattrs,omitempty"` // the user.memfs.* ones only
	Writer meta.WriterInfo   `json:"writer"`
	// Session is the mount session's id, as the event log has it.
	Session string `json:"session,omitempty"`

	// Prev and PrevKey name the version this one follows (the key's
	// version before it, or for a rename the old key's last one); 0 for
	// the first. Set by Versions, not stored: see the package doc.
	Prev    uint64 `json:"-"`
	PrevKey string `json:"-"`
}

// MarshalText is the hex form, for JSON.
func (a Addr) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses the hex form.
func (a *Addr) UnmarshalText(b []byte) error {
	p, err := ParseAddr(string(b))
	*a = p
	return err
}

// NewVersion is the version of the change op at seq that left e in the
// store, its value at addr (zero for none): the attributes are e's, of
// its extended attributes only the user.memfs.* ones (memfs checks those;
// the rest are the user's).
func NewVersion(seq uint64, op string, e *backend.Entry, addr Addr) Version {
	v := Version{Seq: seq, Op: op, Key: e.Key, Addr: addr, Size: e.Info.Size, Mode: e.Info.Mode,
		UID: e.Info.UID, GID: e.Info.GID, Rdev: e.Info.Rdev, Link: e.Info.Link,
		MTime: unixNano(e.Info.MTime), ATime: unixNano(e.Info.ATime), CTime: unixNano(e.Info.CTime)}
	if e.Value != nil {
		v.Size = int64(len(e.Value))
	}
	for k, x := range e.Info.XAttrs {
		if strings.HasPrefix(k, meta.Prefix) {
			if v.XAttrs == nil {
				v.XAttrs = map[string][]byte{}
			}
			v.XAttrs[k] = bytes.Clone(x)
		}
	}
	return v
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Info is the node the version describes.
func (v *Version) Info() backend.Info {
	return backend.Info{Size: v.Size, MTime: timeOf(v.MTime), ATime: timeOf(v.ATime), CTime: timeOf(v.CTime),
		Mode: v.Mode, UID: v.UID, GID: v.GID, Rdev: v.Rdev, Link: v.Link, XAttrs: maps.Clone(v.XAttrs)}
}

func validVersionOp(op string) bool {
	switch op {
	case OpWrite, OpDelete, OpRename, OpAttr, OpConflict:
		return true
	}
	return false
}

// keyHash names a key in record names: 128 bits of its SHA-256, so that
// every record name has one short length whatever the key (a key may be
// 4096 bytes, the longest a record name may be) and a key never names a
// directory of another's records on a directory store ("a/b" under "a").
func keyHash(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:keyHashHex/2])
}

func seqName(seq uint64) string { return fmt.Sprintf("%0*d", seqDigits, seq) }

func versionDir(key string) string { return versionPrefix + keyHash(key) + "/" }

func versionName(key string, seq uint64) string { return versionDir(key) + seqName(seq) }

// PlanVersions returns the records of vs: one per version, and one group
// record that lists them for At. It does no I/O. The versions must be of
// one append to the event log (their seqs increasing, each its event's).
func (s *Store) PlanVersions(vs []Version) ([]Record, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	recs := make([]Record, 0, len(vs)+1)
	var group bytes.Buffer
	for i := range vs {
		v := &vs[i]
		if err := checkVersion(v); err != nil {
			return nil, err
		}
		if i > 0 && v.Seq <= vs[i-1].Seq {
			return nil, fmt.Errorf("history: version of %s: seq %d after %d", v.Key, v.Seq, vs[i-1].Seq)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("history: version of %s: %w", v.Key, err)
		}
		recs = append(recs, Record{Name: versionName(v.Key, v.Seq), Data: b})
		fmt.Fprintf(&group, "%d %s %s", v.Seq, v.Op, keyHash(v.Key))
		if v.Op == OpRename {
			fmt.Fprintf(&group, " %s", keyHash(v.OldKey))
		}
		group.WriteByte('\n')
	}
	return append(recs, Record{Name: groupPrefix + seqName(vs[0].Seq), Data: group.Bytes()}), nil
}

func checkVersion(v *Version) error {
	if v.Seq == 0 {
		return fmt.Errorf("history: version of %s: seq 0", v.Key)
	}
	if !validVersionOp(v.Op) {
		return fmt.Errorf("history: version of %s: unknown op %q", v.Key, v.Op)
	}
	if err := backend.ValidateKey(v.Key); err != nil {
		return fmt.Errorf("history: version: %w", err)
	}
	if v.Op == OpRename {
		if err := backend.ValidateKey(v.OldKey); err != nil {
			return fmt.Errorf("history: version of %s: old key: %w", v.Key, err)
		}
	}
	return nil
}

// keyVersions returns the versions stored under key, oldest first.
func (s *Store) keyVersions(ctx context.Context, key string) ([]Version, error) {
	dir := versionDir(key)
	ents, err := s.sys.ListSys(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("history: versions of %s: %w", key, err)
	}
	var names []string
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Key, dir); ok && len(rest) == seqDigits {
			names = append(names, e.Key)
		}
	}
	vs, err := s.loadVersions(ctx, names)
	if err != nil {
		return nil, err
	}
	out := vs[:0]
	for _, v := range vs {
		if v.Key == key { // another key with the same 128-bit hash: never seen, but never mixed in
			out = append(out, v)
		}
	}
	return out, nil
}

// loadConcurrency bounds the loads of version records in flight: a
// shared store answers each after a round trip.
const loadConcurrency = 16

// loadVersions loads the version records names, in order.
func (s *Store) loadVersions(ctx context.Context, names []string) ([]Version, error) {
	out := make([]Version, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, loadConcurrency)
	var wg sync.WaitGroup
	for i, n := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = s.loadVersion(ctx, n, &out[i])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// loadVersion loads the record name into v and checks it names itself.
func (s *Store) loadVersion(ctx context.Context, name string, v *Version) error {
	b, err := s.sys.LoadSys(ctx, name)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	corrupt := func(why string) error {
		return &fs.PathError{Op: "load", Path: name, Err: fmt.Errorf("%w: %s", backend.ErrCorrupt, why)}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return corrupt(err.Error())
	}
	if checkVersion(v) != nil || versionName(v.Key, v.Seq) != name {
		return corrupt(fmt.Sprintf("it holds the version of %q at %d", v.Key, v.Seq))
	}
	return nil
}

// Versions returns the history of key, oldest first: every version
// recorded under the name (those before a delete too) and, for each
// rename to it, the versions of the old name before the rename (and so on
// back through their renames). Each has Prev and PrevKey set.
func (s *Store) Versions(ctx context.Context, key string) ([]Version, error) {
	if err := backend.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return s.chain(ctx, key, ^uint64(0), map[string][]Version{})
}

// chain is Versions of key up to seq before (inclusive); listed caches
// the versions of each key listed so far.
func (s *Store) chain(ctx context.Context, key string, before uint64, listed map[string][]Version) ([]Version, error) {
	own, ok := listed[key]
	if !ok {
		var err error
		if own, err = s.keyVersions(ctx, key); err != nil {
			return nil, err
		}
		listed[key] = own
	}
	var out []Version
	var prevSeq uint64
	var prevKey string
	for _, v := range own {
		if v.Seq > before {
			break
		}
		if v.Op == OpRename {
			// The old name's versions up to the rename precede it:
			// the bound only goes down, so this ends.
			old, err := s.chain(ctx, v.OldKey, v.Seq-1, listed)
			if err != nil {
				return nil, err
			}
			out = mergeSeq(out, old)
			prevSeq, prevKey = 0, ""
			if n := len(old); n > 0 {
				prevSeq, prevKey = old[n-1].Seq, old[n-1].Key
			}
		}
		v.Prev, v.PrevKey = prevSeq, prevKey
		out = mergeSeq(out, []Version{v})
		prevSeq, prevKey = v.Seq, v.Key
	}
	return out, nil
}

// mergeSeq merges two lists sorted by seq.
func mergeSeq(a, b []Version) []Version {
	out := append(a, b...)
	slices.SortStableFunc(out, func(x, y Version) int { return cmp.Compare(x.Seq, y.Seq) })
	return out
}

// groupLine is one line of a group record.
type groupLine struct {
	seq      uint64
	op       string
	key, old string // key hashes
}

// At returns the namespace as of seq: the version of every key that
// existed when the event log's head was seq, sorted by key.
func (s *Store) At(ctx context.Context, seq uint64) ([]Version, error) {
	lines, err := s.groupLines(ctx, seq)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(lines, func(a, b groupLine) int { return cmp.Compare(a.seq, b.seq) })
	live := map[string]uint64{} // key hash -> seq of its version
	for _, l := range lines {
		if l.old != "" {
			delete(live, l.old)
		}
		if l.op == OpDelete {
			delete(live, l.key)
		} else {
			live[l.key] = l.seq
		}
	}
	names := make([]string, 0, len(live))
	for kh, sq := range live {
		names = append(names, versionPrefix+kh+"/"+seqName(sq))
	}
	vs, err := s.loadVersions(ctx, names)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(vs, func(a, b Version) int { return strings.Compare(a.Key, b.Key) })
	return vs, nil
}

// groupLines reads every line of the group records with a seq up to seq.
func (s *Store) groupLines(ctx context.Context, seq uint64) ([]groupLine, error) {
	ents, err := s.sys.ListSys(ctx, groupPrefix)
	if err != nil {
		return nil, fmt.Errorf("history: at %d: %w", seq, err)
	}
	var lines []groupLine
	for _, e := range ents {
		first, err := strconv.ParseUint(strings.TrimPrefix(e.Key, groupPrefix), 10, 64)
		if err != nil || first > seq {
			continue
		}
		b, err := s.sys.LoadSys(ctx, e.Key)
		if err != nil {
			return nil, fmt.Errorf("history: at %d: %w", seq, err)
		}
		ls, err := parseGroup(b)
		if err != nil {
			return nil, &fs.PathError{Op: "at", Path: e.Key, Err: fmt.Errorf("%w: %v", backend.ErrCorrupt, err)}
		}
		for _, l := range ls {
			if l.seq <= seq {
				lines = append(lines, l)
			}
		}
	}
	return lines, nil
}

func parseGroup(b []byte) ([]groupLine, error) {
	var out []groupLine
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 3 || len(f) > 4 || !strings.HasSuffix(line, "\n") {
			return nil, fmt.Errorf("line %q", strings.TrimSpace(line))
		}
		sq, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || !validVersionOp(f[1]) || len(f[2]) != keyHashHex || (len(f) == 4) != (f[1] == OpRename) {
			return nil, fmt.Errorf("line %q", strings.TrimSpace(line))
		}
		l := groupLine{seq: sq, op: f[1], key: f[2]}
		if len(f) == 4 {
			l.old = f[3]
		}
		out = append(out, l)
	}
	return out, nil
}
