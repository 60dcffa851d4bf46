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
	"io"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
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
// holds it (but Prev and PrevKey): binary (versionbin.go), or the JSON of
// this struct in a record an older memfs wrote and in an index.
type Version struct {
	Seq    uint64 `json:"seq"` // the event's seq
	Op     string `json:"op"`
	Key    string `json:"key"`               // the key changed (the new name for a rename)
	OldKey string `json:"old_key,omitempty"` // the old name, for a rename
	// Addr is the stored (redacted) value's address (a symlink's value
	// is its target); zero for a delete and for a node without a value
	// (HasValue).
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
	// Redacted is set by Redact: the version's bytes were removed (Addr
	// is zero), the rest of its record kept.
	Redacted bool `json:"redacted,omitempty"`

	// Prev and PrevKey name the version this one follows (the key's
	// version before it, or for a rename the old key's last one); 0 for
	// the first. Set by Versions, not stored: see the package doc.
	Prev    uint64 `json:"-"`
	PrevKey string `json:"-"`
}

// HasValue reports whether a node of mode m has a value history keeps:
// a regular file's bytes, a symlink's target. Other nodes (a directory,
// a fifo ...) have their attributes only.
func HasValue(m fs.FileMode) bool { return m.IsRegular() || m.Type() == fs.ModeSymlink }

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
// tens of KiB, longer than a record name may be) and a key never names a
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
		recs = append(recs, Record{Name: versionName(v.Key, v.Seq), Data: encodeVersion(v)})
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

// keyVersions returns the versions stored under key, oldest first: one
// scan of its records (backend.ScanSys), not a listing and a load each.
func (s *Store) keyVersions(ctx context.Context, key string) ([]Version, error) {
	dir := versionDir(key)
	ents, err := backend.ScanSys(ctx, s.sys, dir)
	if err != nil {
		return nil, fmt.Errorf("history: versions of %s: %w", key, err)
	}
	out := make([]Version, 0, len(ents))
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Key, dir); !ok || len(rest) != seqDigits {
			continue
		}
		var v Version
		if err := decodeVersion(e.Key, e.Value, &v); err != nil {
			return nil, err
		}
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
	if err := each(len(names), func(i int) error { return s.loadVersion(ctx, names[i], &out[i]) }); err != nil {
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
	return decodeVersion(name, b, v)
}

// decodeVersion decodes the record name, b, into v and checks it names
// itself.
func decodeVersion(name string, b []byte, v *Version) error {
	corrupt := func(why string) error {
		return &fs.PathError{Op: "load", Path: name, Err: fmt.Errorf("%w: %s", backend.ErrCorrupt, why)}
	}
	if err := unmarshalVersion(b, v); err != nil {
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
		out = append(out, v) // after all of out: own is in seq order, old ones end before v
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
	group    uint64 // the first seq of its group
	seq      uint64
	op       string
	key, old string // key hashes
}

// At returns the namespace as of seq: the version of every key that
// existed when the event log's head was seq, sorted by key. It starts from
// the latest index at or before seq (none: the empty namespace) and
// folds the groups after it.
//
// A conflict's version is no node of it. It records that another writer
// changed the key and how the conflict policy resolved it; its size is
// that writer's value, which history never held (it names no bytes).
// What history holds of the key is its versions around it: the other
// writer's own version when that writer recorded one (another mount of
// a shared store), the value a merge or last-writer-wins flush wrote
// right after it, or the value before when the policy left the value
// alone (merged metadata). So At takes the key as its versions before
// the conflict left it (absent if it had none): a past namespace holds
// only values a reader can read back.
func (s *Store) At(ctx context.Context, seq uint64) ([]Version, error) {
	ns, from, err := s.index(ctx, seq)
	if err != nil {
		return nil, err
	}
	lines, err := s.groupLines(ctx, from, seq)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(lines, func(a, b groupLine) int { return cmp.Compare(a.seq, b.seq) })
	// A group is one flush, which the store applied as one step: two
	// names swapped in one flush are two renames, each to the other's
	// old name, and the second's old name is the first's new one, which
	// the store holds after the flush. A rename takes its old key out
	// unless an earlier rename of its group went to it.
	type groupKey struct {
		group uint64
		key   string
	}
	renamedTo := map[groupKey]bool{}
	changed := map[string]uint64{} // key hash -> seq of its version; 0: gone
	for _, l := range lines {
		if l.old != "" && !renamedTo[groupKey{l.group, l.old}] {
			changed[l.old] = 0
		}
		if l.op == OpRename {
			renamedTo[groupKey{l.group, l.key}] = true
		}
		if l.op == OpConflict {
			continue // no node (see above): the key stays as it was
		}
		if l.op == OpDelete {
			changed[l.key] = 0
		} else {
			changed[l.key] = l.seq
		}
	}
	var names []string
	for kh, sq := range changed {
		delete(ns, kh)
		if sq != 0 {
			names = append(names, versionPrefix+kh+"/"+seqName(sq))
		}
	}
	vs, err := s.loadVersions(ctx, names)
	if err != nil {
		return nil, err
	}
	for _, v := range ns {
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b Version) int { return strings.Compare(a.Key, b.Key) })
	return vs, nil
}

// groupLines reads the lines of the group records with a seq in (from,
// to]. A group holds the seqs of one append, consecutive, so only the
// last group that starts at or before from can hold seqs after it.
func (s *Store) groupLines(ctx context.Context, from, to uint64) ([]groupLine, error) {
	ents, err := s.sys.ListSys(ctx, groupPrefix)
	if err != nil {
		return nil, fmt.Errorf("history: at %d: %w", to, err)
	}
	type group struct {
		first uint64
		name  string
	}
	var groups []group
	for _, e := range ents {
		first, err := strconv.ParseUint(strings.TrimPrefix(e.Key, groupPrefix), 10, 64)
		if err == nil && first <= to {
			groups = append(groups, group{first, e.Key})
		}
	}
	slices.SortFunc(groups, func(a, b group) int { return cmp.Compare(a.first, b.first) })
	if i := slices.IndexFunc(groups, func(g group) bool { return g.first > from }); i > 0 {
		groups = groups[i-1:]
	} else if i < 0 && len(groups) > 0 {
		groups = groups[len(groups)-1:]
	}
	var lines []groupLine
	for _, g := range groups {
		b, err := s.sys.LoadSys(ctx, g.name)
		if err != nil {
			return nil, fmt.Errorf("history: at %d: %w", to, err)
		}
		ls, err := parseGroup(b)
		if err != nil {
			return nil, &fs.PathError{Op: "at", Path: g.name, Err: fmt.Errorf("%w: %v", backend.ErrCorrupt, err)}
		}
		for _, l := range ls {
			if l.seq > from && l.seq <= to {
				l.group = g.first
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

// indexPrefix names the namespace indexes. (Not "checkpoint": that is
// the user's name for a snapshot named RUN/STEP, issue 29.)
const indexPrefix = root + "i/"

// Index stores the namespace as of seq (At) as a value, one JSON
// line per live key's Version, sorted by key, and names it by
// history/i/<seq>; At of seq or later then starts from it. An index
// is derived data (At gives the same without it), so a crash before or
// during one costs nothing but its time. Chunked like any large value, an
// index after a few changes adds the chunks around them, not the
// whole namespace. It returns the index's value address.
func (s *Store) Index(ctx context.Context, seq uint64) (Addr, error) {
	vs, err := s.At(ctx, seq)
	if err != nil {
		return Addr{}, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i := range vs {
		if err := enc.Encode(&vs[i]); err != nil {
			return Addr{}, fmt.Errorf("history: index %d: %w", seq, err)
		}
	}
	a, _, err := s.Put(ctx, b.Bytes())
	if err != nil {
		return a, err
	}
	return a, s.Write(ctx, []Record{{Name: indexPrefix + seqName(seq), Data: []byte(a.String())}})
}

// index returns the namespace of the latest index at or before
// seq, by key hash, and its seq; none gives an empty one at 0.
func (s *Store) index(ctx context.Context, seq uint64) (map[string]Version, uint64, error) {
	ents, err := s.sys.ListSys(ctx, indexPrefix)
	if err != nil {
		return nil, 0, fmt.Errorf("history: indexes: %w", err)
	}
	var at uint64
	var name string
	for _, e := range ents {
		t, err := strconv.ParseUint(strings.TrimPrefix(e.Key, indexPrefix), 10, 64)
		if err == nil && t <= seq && t >= at {
			at, name = t, e.Key
		}
	}
	ns := map[string]Version{}
	if name == "" {
		return ns, 0, nil
	}
	corrupt := func(why string) error {
		return &fs.PathError{Op: "at", Path: name, Err: fmt.Errorf("%w: %s", backend.ErrCorrupt, why)}
	}
	ref, err := s.sys.LoadSys(ctx, name)
	if err != nil {
		return nil, 0, fmt.Errorf("history: %w", err)
	}
	a, err := ParseAddr(string(ref))
	if err != nil {
		return nil, 0, corrupt(err.Error())
	}
	data, err := s.Get(ctx, a) // checked against its address
	if err != nil {
		return nil, 0, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var v Version
		if err := dec.Decode(&v); err != nil {
			return nil, 0, corrupt(err.Error())
		}
		if checkVersion(&v) != nil || v.Seq > at || v.Op == OpDelete {
			return nil, 0, corrupt(fmt.Sprintf("it holds the version of %q at %d", v.Key, v.Seq))
		}
		if v.Op == OpConflict && at > 0 {
			// Written before At passed over conflicts (see At); an
			// index is derived data: the one before it, or the groups,
			// give the namespace without it.
			return s.index(ctx, at-1)
		}
		ns[keyHash(v.Key)] = v
	}
	return ns, at, nil
}

// startName is the record of the seq history starts after: the event
// log's head when a store first recorded history. Events up to it (a
// store older than its history) have no version and are never taken for
// versions lost in a crash.
const startName = root + "start"

// Start returns the seq history starts after and whether it is
// recorded. Begin records it.
func (s *Store) Start(ctx context.Context) (uint64, bool, error) {
	b, err := s.sys.LoadSys(ctx, startName)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("history: %w", err)
	}
	seq, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, false, &fs.PathError{Op: "load", Path: startName, Err: fmt.Errorf("%w: %q", backend.ErrCorrupt, b)}
	}
	return seq, true, nil
}

// Begin records that history starts after seq (the event log's head),
// unless a start is recorded already: the first one stays.
func (s *Store) Begin(ctx context.Context, seq uint64) error {
	if _, ok, err := s.Start(ctx); err != nil || ok {
		return err
	}
	if err := s.sys.SaveSys(ctx, startName, []byte(strconv.FormatUint(seq, 10)+"\n")); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// Covered returns the highest seq a group names (0 for none): the
// events after it that history records have their versions still to
// write, as after a crash between an append and its versions.
func (s *Store) Covered(ctx context.Context) (uint64, error) {
	ents, err := s.sys.ListSys(ctx, groupPrefix)
	if err != nil {
		return 0, fmt.Errorf("history: groups: %w", err)
	}
	var last uint64
	var name string
	for _, e := range ents {
		first, err := strconv.ParseUint(strings.TrimPrefix(e.Key, groupPrefix), 10, 64)
		if err == nil && first >= last {
			last, name = first, e.Key
		}
	}
	if name == "" {
		return 0, nil
	}
	lines, err := s.groupLines(ctx, last-1, ^uint64(0))
	if err != nil {
		return 0, err
	}
	for _, l := range lines {
		last = max(last, l.seq)
	}
	return last, nil
}

// Recorded reports whether the version of key at seq is recorded.
func (s *Store) Recorded(ctx context.Context, key string, seq uint64) (bool, error) {
	_, err := s.sys.LoadSys(ctx, versionName(key, seq))
	switch {
	case errors.Is(err, backend.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("history: %w", err)
	}
	return true, nil
}

// LogLine is v as one line of a key's log (.memfs/history/KEY/log, memfs
// history): "SEQ TIME OP SIZE WRITER [OLDKEY] [(redacted)]", SEQ in 8 digits, TIME the
// change time in RFC 3339 (UTC), WRITER "agent/pid" (the process name
// without an agent, "-" for none), OLDKEY quoted.
func (v *Version) LogLine() string {
	t := v.CTime
	if t == 0 {
		t = v.MTime
	}
	line := fmt.Sprintf("%08d %s %s %d %s", v.Seq, time.Unix(0, t).UTC().Format(time.RFC3339Nano), v.Op, v.Size, WriterName(v.Writer))
	if v.OldKey != "" {
		line += " " + strconv.Quote(v.OldKey)
	}
	if v.Redacted {
		line += " (redacted)"
	}
	return line + "\n"
}

// WriteLog writes vs on w, a LogLine each: a key's log, as memfs history
// prints it.
func WriteLog(w io.Writer, vs []Version) error {
	for i := range vs {
		if _, err := io.WriteString(w, vs[i].LogLine()); err != nil {
			return err
		}
	}
	return nil
}

// WriterName is w as a log line and a snapshot name it: "agent/pid" (the
// process name when there is no agent label, "-" for neither).
func WriterName(w meta.WriterInfo) string {
	return cmp.Or(w.Agent, w.Comm, "-") + "/" + strconv.FormatUint(uint64(w.PID), 10)
}
