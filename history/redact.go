package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
)

// Redacted is what Redact did.
type Redacted struct {
	Version Version // the record as it is now: Redacted set, Addr zero
	// Removed is how many objects and manifests of its value were
	// removed: those no other version names.
	Removed int
	// Sharing names the other versions ("KEY@SEQ") that hold the same
	// value or some of its chunks: those bytes stay for them. To remove
	// a secret from history, redact them too.
	Sharing []string
}

// Report says what Redact did, as memfs history redact does: "KEY@SEQ
// redacted (N objects removed)", then a line for each version that holds
// the same bytes, to redact too.
func (r Redacted) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%d redacted (%d objects removed)\n", r.Version.Key, r.Version.Seq, r.Removed)
	for _, o := range r.Sharing {
		fmt.Fprintf(&b, "  %s holds the same bytes: redact it too\n", o)
	}
	return b.String()
}

// ErrRedacted is wrapped by the error of reading a version whose bytes
// Redact removed: never an empty value in their place.
var ErrRedacted = errors.New("redacted")

// Redact blanks the bytes of the version of key at seq (a secret the
// redaction rules missed) and keeps its record, marked Redacted, with its
// address cleared (a SHA-256 of a short secret would confirm a guess).
//
// Shared bytes: a value is deduplicated, and a chunked one shares chunks
// with the versions before and after it (an append-only file's later
// versions hold every earlier chunk). Redact removes what only this
// version names, and names in Sharing the versions that hold the rest,
// since removing bytes they name would damage them silently; the caller
// redacts those too. An index (history/i/) that holds the version is
// removed (indexes are derived: At gives the same without it).
//
// Order: the bytes first, then the record; a crash between leaves a
// record whose value reads as damaged, and Redact again finishes it. Redact
// again of a redacted version changes nothing. The store's own past (etcd
// revisions before a compaction, badger's value log before its
// collection) may keep the bytes until the store compacts.
func (s *Store) Redact(ctx context.Context, key string, seq uint64) (Redacted, error) {
	name := versionName(key, seq)
	var out Redacted
	if err := s.loadVersion(ctx, name, &out.Version); err != nil {
		return out, err
	}
	v := &out.Version
	if v.Redacted || v.Addr.IsZero() {
		if !v.Redacted {
			v.Redacted = true
			return out, s.saveVersion(ctx, name, v)
		}
		return out, nil
	}
	mans, err := s.manifests(ctx)
	if err != nil {
		return out, err
	}
	own, _ := valueNames(mans, v.Addr) // a damaged manifest: itself and its object
	others, sharing, err := s.othersNaming(ctx, name, mans, own)
	if err != nil {
		return out, err
	}
	out.Sharing = sharing
	if err := s.dropIndexesOf(ctx, v.Addr); err != nil {
		return out, err
	}
	var del []string
	for _, n := range own {
		if !others[n] {
			del = append(del, n)
		}
	}
	if err := s.sys.DeleteSys(ctx, del...); err != nil {
		return out, fmt.Errorf("history: redact %s at %d: %w", key, seq, err)
	}
	out.Removed = len(del)
	v.Addr, v.Redacted = Addr{}, true
	return out, s.saveVersion(ctx, name, v)
}

func (s *Store) saveVersion(ctx context.Context, name string, v *Version) error {
	if err := s.sys.SaveSys(ctx, name, encodeVersion(v)); err != nil {
		return fmt.Errorf("history: redact %s at %d: %w", v.Key, v.Seq, err)
	}
	return nil
}

// othersNaming returns which of own the versions other than the record
// name reference, and those versions that do, as "KEY@SEQ".
func (s *Store) othersNaming(ctx context.Context, name string, mans map[string][]byte, own []string) (map[string]bool, []string, error) {
	byKey, err := s.allVersions(ctx)
	if err != nil {
		return nil, nil, err
	}
	ownSet := map[string]bool{}
	for _, n := range own {
		ownSet[n] = true
	}
	refs := map[string]bool{}
	var sharing []string
	for _, vs := range byKey {
		for _, o := range vs {
			if o.Addr.IsZero() || versionName(o.Key, o.Seq) == name {
				continue
			}
			names, _ := valueNames(mans, o.Addr) // a damaged manifest: what it can tell
			shares := false
			for _, n := range names {
				if ownSet[n] {
					refs[n], shares = true, true
				}
			}
			if shares {
				sharing = append(sharing, fmt.Sprintf("%s@%d", o.Key, o.Seq))
			}
		}
	}
	slices.Sort(sharing)
	return refs, sharing, nil
}

// dropIndexesOf removes the index records whose namespace names a.
func (s *Store) dropIndexesOf(ctx context.Context, a Addr) error {
	ents, err := backend.ScanSys(ctx, s.sys, indexPrefix)
	if err != nil {
		return fmt.Errorf("history: redact: %w", err)
	}
	needle := []byte(`"` + a.String() + `"`)
	for _, e := range ents {
		ia, err := ParseAddr(string(e.Value))
		if err != nil {
			continue // damaged: left as found
		}
		data, err := s.Get(ctx, ia)
		if err != nil || !bytes.Contains(data, needle) {
			continue
		}
		if err := s.sys.DeleteSys(ctx, e.Key); err != nil {
			return fmt.Errorf("history: redact: %w", err)
		}
	}
	return nil
}
