package session

import (
	"errors"
	"fmt"

	"github.com/memfs/memfs/backend"
)

// ConflictPolicy says what a flush does when another writer changed a key
// of a shared store since the session read it (Options.OnConflict).
type ConflictPolicy uint8

const (
	// KeepBeside, the zero value, is the store's own rule: the session's
	// version takes the name and the other writer's is kept beside it
	// under ConflictKey, by the store, in the same step.
	KeepBeside ConflictPolicy = iota
	// KeepBoth keeps both, the other writer's under the name: the other
	// writer's version is loaded clean into the session under the key,
	// and the session's moves (with its open handles, as a rename moves
	// them) to backend.ConflictKeyBy(key, Options.Agent, now) and is
	// saved there. The default for shared stores.
	KeepBoth
	// Merge merges the two versions of a regular text file line by line
	// against the version both started from (internal/merge3); when they
	// overlap, or the file is binary or its base unknown, it keeps both
	// as KeepBoth does.
	Merge
	// LastWriterWins saves the session's version over the other writer's
	// (and deletes a key the session removed even when the other writer
	// saved it since). The conflict is still logged and reported.
	LastWriterWins
)

// String is the policy's name as ParseConflictPolicy takes it.
func (p ConflictPolicy) String() string {
	switch p {
	case KeepBeside:
		return "keep-beside"
	case KeepBoth:
		return "keep-both"
	case Merge:
		return "merge"
	case LastWriterWins:
		return "last-writer-wins"
	}
	return fmt.Sprintf("ConflictPolicy(%d)", uint8(p))
}

// ParseConflictPolicy returns the policy named s: "keep-both", "merge",
// "last-writer-wins" (or "keep-beside", the zero value).
func ParseConflictPolicy(s string) (ConflictPolicy, error) {
	for p := KeepBeside; p <= LastWriterWins; p++ {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("session: unknown conflict policy %q (want keep-both, merge or last-writer-wins)", s)
}

// PolicyFor is the policy of a store named store for a --on-conflict
// flag of value (given: the command line set it): on a shared store, the
// flag's (keep-both by default); on a local store, the store's own rule
// (another program's version is kept beside), and a given flag is
// refused.
func PolicyFor(local bool, store string, given bool, value string) (ConflictPolicy, error) {
	if local {
		if given {
			return 0, fmt.Errorf("--on-conflict is for a shared store (etcd://...): on %s another program's version is always kept beside memfs's", store)
		}
		return KeepBeside, nil
	}
	p, err := ParseConflictPolicy(value)
	if err != nil {
		return 0, fmt.Errorf("--on-conflict: %w", err)
	}
	return p, nil
}

// ErrPolicyUnsupported is returned by New (and by every Flush of a Context
// NewContext made) when Options.OnConflict is set and the store cannot
// check versions in a batch: it must be a backend.Batcher and a
// backend.Versioned.
var ErrPolicyUnsupported = errors.New("conflict policy needs a store that applies batches and checks versions (backend.Batcher and backend.Versioned)")

// checkPolicy reports whether store can carry out policy p.
func checkPolicy(store backend.Store, p ConflictPolicy) error {
	if p > LastWriterWins {
		return fmt.Errorf("session: %v: %w", p, ErrPolicyUnsupported)
	}
	if p == KeepBeside {
		return nil
	}
	_, batches := store.(backend.Batcher)
	_, versions := store.(backend.Versioned)
	if !batches || !versions {
		return fmt.Errorf("session: conflict policy %s on a %T: %w", p, store, ErrPolicyUnsupported)
	}
	return nil
}

// New returns an empty session over store, as NewContext does, after
// checking that the store can carry out opts.OnConflict: a policy other
// than KeepBeside on a store that is not a backend.Batcher and a
// backend.Versioned fails with an error wrapping ErrPolicyUnsupported.
func New(store backend.Store, opts Options) (*Context, error) {
	if err := checkPolicy(store, opts.OnConflict); err != nil {
		return nil, err
	}
	return NewContext(store, opts), nil
}
