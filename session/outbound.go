package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/redact"
)

// Every byte that leaves the session's memory leaves through this file.
//
// The session holds exactly the bytes that processes wrote. What it hands
// on — to the store (Flush), the journal (Commit, Set, Put, Delete,
// Rename), the recovery directory (Pending.Sealed) and, through the entries
// it passes on, the search index and the event log — is sealed first: the
// value and every extended attribute value redacted. A name that contains
// a secret never enters the session (checkName), so keys need no redaction.
// internal/lint checks that no other file of the package calls the store's
// Save or Delete or the journal's Append.

// ErrSecretName is returned when a name (a key or an extended attribute
// name) contains a secret: memfs refuses to create it (EACCES in a mount),
// since a name reaches every log, index and event.
var ErrSecretName = errors.New("name contains a secret")

// checkName refuses a key or attribute name that contains a secret. The
// error names the rule and the name as redacted, never the secret.
func (c *Context) checkName(op, name string) error {
	r := c.opts.Redactor
	if r == nil {
		return nil
	}
	red, findings := r.Redact(name, []byte(name))
	if len(findings) == 0 {
		return nil
	}
	c.log.Warn("name refused: it contains a secret", "op", op, "rule", findings[0].RuleID, "name", string(red))
	return pathErr(op, string(red), ErrSecretName)
}

// seal returns e as it may leave memory: its value and its attribute
// values redacted. e itself is not modified; an unchanged value is shared.
func (c *Context) seal(e backend.Entry) (backend.Entry, []redact.Finding) {
	var findings []redact.Finding
	e = c.sealEach(e, func(_ []byte, f redact.Finding) { findings = append(findings, f) })
	return e, findings
}

// sealEach is seal that hands each finding to found with the bytes it was
// found in (the value, or one attribute value).
func (c *Context) sealEach(e backend.Entry, found func(src []byte, f redact.Finding)) backend.Entry {
	r := c.opts.Redactor
	if r == nil {
		return e
	}
	v, findings := sealBytes(r, e.Key, e.Value, redact.IsBinary(e.Value))
	for _, f := range findings {
		found(e.Value, f)
	}
	if len(findings) > 0 {
		e.Value = v
		e.Info.Size = int64(len(v))
	}
	var x map[string][]byte
	for name, val := range e.Info.XAttrs {
		rv, fs := sealBytes(r, e.Key, val, redact.IsBinary(val))
		if len(fs) == 0 {
			continue
		}
		for _, f := range fs {
			found(val, f)
		}
		if x == nil {
			x = maps.Clone(e.Info.XAttrs)
		}
		x[name] = rv
	}
	if x != nil {
		e.Info.XAttrs = x
	}
	return e
}

// sealBytes redacts b for key: text with markers; a binary value (see
// redact.IsBinary: decided on the whole value, and passed so that pieces
// of one are treated alike) masked in place, at the same length, so that
// its format's offsets still hold.
func sealBytes(r *redact.Redactor, key string, b []byte, binary bool) ([]byte, []redact.Finding) {
	if binary {
		return r.Mask(key, b)
	}
	return r.Redact(key, b)
}

// sealEntries seals entries in place. With logFindings, each secret is
// logged once (key, rule and range: never the secret): a value flushed
// again after an append, a rename or an attribute change does not repeat
// the lines of the secrets it already had, and the journal and recovery
// copies of the same value log nothing.
func (c *Context) sealEntries(entries []backend.Entry, logFindings bool) {
	seal := func(i int) {
		key := entries[i].Key
		entries[i] = c.sealEach(entries[i], func(src []byte, f redact.Finding) {
			if !logFindings || !c.firstSighting(src, f) {
				return
			}
			c.log.Info("redacted a secret before it reached the store", "key", key, "rule", f.RuleID,
				"start", f.Start, "end", f.End, "line", f.Line, "column", f.Column)
		})
	}
	// A large flush is redacted on every CPU: the Redactor is safe for
	// concurrent use, and each entry is sealed on its own (the cost of
	// redaction in a flush, on every CPU and on one: see BENCHMARKS.md,
	// Redaction).
	workers := min(runtime.GOMAXPROCS(0), len(entries)/64)
	if workers < 2 {
		for i := range entries {
			seal(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(entries) {
					return
				}
				seal(i)
			}
		})
	}
	wg.Wait()
}

// maxLogged bounds the set of logged secrets; past it the set starts anew
// (a secret may then be logged a second time, never lost from the log).
const maxLogged = 1 << 16

// firstSighting reports whether the secret of f, found in src, has not
// been logged before, and records it. Only a hash of the rule and the
// secret's bytes is kept.
func (c *Context) firstSighting(src []byte, f redact.Finding) bool {
	h := fnv.New64a()
	h.Write([]byte(f.RuleID))
	h.Write([]byte{0})
	h.Write(src[f.Start:f.End])
	sum := h.Sum64()
	c.loggedMu.Lock()
	defer c.loggedMu.Unlock()
	if _, ok := c.logged[sum]; ok {
		return false
	}
	if c.logged == nil || len(c.logged) >= maxLogged {
		c.logged = make(map[uint64]struct{})
	}
	c.logged[sum] = struct{}{}
	return true
}

// saveRoot saves the root directory's attributes, root's Info (sealed
// with the other directories': its xattr values are redacted), as the
// store's backend.RootRecord. A store that keeps no system records keeps
// none of the root's attributes (every store memfs opens keeps them).
func (c *Context) saveRoot(ctx context.Context, root backend.Entry) error {
	sys, ok := c.store.(backend.SysStore)
	if !ok {
		return nil
	}
	if err := sys.SaveSys(ctx, backend.RootRecord, backend.EncodeRoot(root.Info)); err != nil {
		return fmt.Errorf("session: save the root's attributes: %w", err)
	}
	return nil
}

// saveAndDelete saves entries and deletes removed keys. It returns the keys
// the store refused, with its errors. dirs are the dirty directories'
// entries; touched the clean directories whose entries are saved again at
// the end only (their mtimes).
//
// A store that is a backend.Batcher gets the whole flush in one Apply: a
// rename (the new key saved, the old deleted) is never half done, and a
// flush on badger is one transaction. When the Apply fails (the store
// refuses an entry, or the batch is more than it can make atomic), nothing
// was written, and the flush goes the way of a store without batches,
// below, which finds the entries the store refuses and saves the others.
//
// Otherwise Save comes before Delete: a crash in between leaves a renamed
// file under both names rather than under none. When a batch fails, its
// entries are tried one by one, so that one entry the store refuses (a key
// under a symlinked directory, a value past a size limit) never keeps the
// others from the store. A key a refused entry was renamed from is not
// deleted: the store keeps its last copy.
//
// With delExpect non-nil (a conflict policy's round: see conflict.go) the
// Apply fails on a conflict (Batch.FailOnConflict), each delete expecting
// its version in delExpect, and saveAndDelete returns the
// *backend.ConflictError, having written nothing. A store that cannot be
// reached (backend.ErrUnavailable) fails every entry at once, without the
// one-by-one tries. The result's kept maps the keys whose other version
// the store kept beside (the keep-beside rule) to that copy's key; stayed
// are the removed keys the store did not delete, another writer's version
// being there (see delete).
func (c *Context) saveAndDelete(ctx context.Context, entries []backend.Entry, saved []snap, removed []string, delExpect map[string]backend.Version,
	dirs []backend.Entry, dexpect map[string]backend.Version, touched []backend.Entry) (flushResult, error) {
	r := flushResult{failed: make(map[string]error), dfailed: make(map[string]error), kept: make(map[string]string)}
	if b, ok := c.store.(backend.Batcher); ok {
		settled, err := c.saveBatched(ctx, b, entries, saved, removed, delExpect, dirs, dexpect, touched, &r)
		if err != nil {
			return flushResult{}, err
		}
		if settled {
			return r, nil
		}
	}
	r.stayed = c.saveUnbatched(ctx, entries, saved, removed, delExpect, dirs, touched, r.failed, r.dfailed, r.kept)
	return r, nil
}

// saveBatched is saveAndDelete's way with a store that is a
// backend.Batcher, and reports whether it settled the flush: the store
// took the Apply, or could not be reached (every entry failed), or took
// it in parts (a policy's round, past the store's batch size). A conflict
// is returned as the error; anything else is left to saveUnbatched.
func (c *Context) saveBatched(ctx context.Context, b backend.Batcher, entries []backend.Entry, saved []snap, removed []string,
	delExpect map[string]backend.Version, dirs []backend.Entry, dexpect map[string]backend.Version, touched []backend.Entry, r *flushResult) (bool, error) {
	done, err := c.applyBatch(ctx, b, entries, saved, removed, delExpect, dirs, dexpect, touched, r.kept)
	switch {
	case errors.Is(err, backend.ErrConflict):
		return true, err
	case errors.Is(err, backend.ErrUnavailable):
		for _, e := range entries {
			r.failed[e.Key] = err
		}
		for _, k := range removed {
			r.failed[k] = err
		}
		for _, e := range dirs {
			r.dfailed[e.Key] = err
		}
		return true, nil
	case done:
		return true, nil
	case errors.Is(err, backend.ErrBatchTooLarge) && delExpect != nil:
		c.applyParts(ctx, b, entries, saved, removed, delExpect, dirs, r)
		return true, nil
	}
	return false, nil
}

// saveUnbatched is saveAndDelete's way with a store without batches (or
// one that refused the batch): saves, then deletes, entry by entry where
// a batch fails. It returns the removed keys another writer's version
// stayed in.
func (c *Context) saveUnbatched(ctx context.Context, entries []backend.Entry, saved []snap, removed []string,
	delExpect map[string]backend.Version, dirs, touched []backend.Entry, failed, dfailed map[string]error, kept map[string]string) (stayed []string) {
	// Directories first, parents before children, so that the files and
	// directories under them have a place; a directory whose place a
	// file still holds (removed below) fails here and is saved again at
	// the end.
	// A key removed and made again as a directory is saved in place when
	// the store takes the directory over what it holds (a directory
	// already there); else what holds the key is deleted below first.
	saved1 := make(map[string]bool, len(dirs))
	if len(dirs) > 0 {
		p1 := make(map[string]error)
		c.saveEach(ctx, dirs, p1)
		for _, e := range dirs {
			if _, bad := p1[e.Key]; !bad {
				saved1[e.Key] = true
			}
		}
	}
	later := c.saveUnits(ctx, entries, saved, failed, kept)
	del, stayed := c.deleteRemoved(ctx, removed, delExpect, saved1, entries, saved, failed)
	if len(later) > 0 && len(del) > 0 {
		for _, u := range later {
			if err := c.save(ctx, entries[u[0]:u[1]], saved[u[0]:u[1]], kept); err == nil {
				for i := u[0]; i < u[1]; i++ {
					delete(failed, entries[i].Key)
				}
			}
		}
	}
	// Directories again: a store that keeps real directories moved
	// their mtimes while it wrote the files in them.
	if len(dirs) > 0 {
		c.saveEach(ctx, dirs, dfailed)
		c.keepBesideTypes(ctx, dirs, entries, saved, failed, dfailed, kept)
	}
	if len(touched) > 0 {
		if err := c.store.Save(ctx, touched...); err != nil {
			// Only their mtimes: nothing the session holds is lost.
			c.log.Debug("flush: directories' times not saved again", "err", err)
		}
	}
	return stayed
}

// keepBesideTypes applies the keep-beside rule for a change of type on a
// store that other programs write (backend.BesideKeeper): a directory the
// store refused because another program's file or symlink holds its name
// keeps the name, that node is kept beside under its conflict key (in
// kept: logged, an event, brought into the session at settle), and the
// directory and the files refused under it are saved again. Else such a
// directory would be refused at every flush.
func (c *Context) keepBesideTypes(ctx context.Context, dirs, entries []backend.Entry, saved []snap, failed, dfailed map[string]error,
	kept map[string]string) {
	bk, ok := c.store.(backend.BesideKeeper)
	if !ok {
		return
	}
	var again []backend.Entry
	for _, e := range dirs {
		if err, bad := dfailed[e.Key]; !bad || !errors.Is(err, fs.ErrExist) {
			continue
		}
		ck, err := bk.KeepBeside(ctx, e.Key)
		if err != nil || ck == "" {
			c.log.Warn("flush: another program's node holds a directory's name and cannot be kept beside", "key", e.Key, "err", err)
			continue
		}
		c.log.Warn("flush: another program put a node where the session has a directory: the directory keeps the name, theirs is kept beside",
			"key", e.Key, "copy", ck)
		kept[e.Key] = ck
		delete(dfailed, e.Key)
		again = append(again, e)
	}
	if len(again) == 0 {
		return
	}
	c.saveEach(ctx, again, dfailed)
	// The files refused under them, whole units (a node's names follow
	// each other).
	var es []backend.Entry
	var ss []snap
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && saved[j].alias && saved[j].f == saved[i].f {
			j++
		}
		retry := false
		for k := i; k < j; k++ {
			_, bad := failed[entries[k].Key]
			retry = retry || (bad && slices.ContainsFunc(again, func(d backend.Entry) bool { return strings.HasPrefix(entries[k].Key, d.Key+"/") }))
		}
		if retry {
			for k := i; k < j; k++ {
				delete(failed, entries[k].Key)
			}
			es, ss = append(es, entries[i:j]...), append(ss, saved[i:j]...)
		}
		i = j
	}
	c.saveUnits(ctx, es, ss, failed, kept)
}

// saveUnits saves entries in one Save, and when that fails, unit by unit:
// an entry, or the names of a node with hard links (they follow each
// other), which a store must save together. It returns the units refused
// (a removed directory may have held their place).
func (c *Context) saveUnits(ctx context.Context, entries []backend.Entry, saved []snap, failed map[string]error,
	kept map[string]string) (later [][2]int) {
	if len(entries) == 0 {
		return nil
	}
	err := c.save(ctx, entries, saved, kept)
	if err == nil {
		return nil
	}
	var units [][2]int
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && saved[j].alias && saved[j].f == saved[i].f {
			j++
		}
		units = append(units, [2]int{i, j})
		i = j
	}
	for _, u := range units {
		err := err
		if len(units) > 1 {
			err = c.save(ctx, entries[u[0]:u[1]], saved[u[0]:u[1]], kept)
		}
		if err != nil {
			for i := u[0]; i < u[1]; i++ {
				failed[entries[i].Key] = err
			}
			later = append(later, u)
		}
	}
	return later
}

// deleteRemoved deletes the removed keys, but those saved again as
// directories (saved1) and those a refused entry was renamed from, in one
// Delete, and key by key when that fails. It returns the keys it tried,
// and those of them another writer's version stayed in.
func (c *Context) deleteRemoved(ctx context.Context, removed []string, delExpect map[string]backend.Version, saved1 map[string]bool,
	entries []backend.Entry, saved []snap, failed map[string]error) (del, stayed []string) {
	for _, k := range removed {
		if saved1[k] {
			continue
		}
		if keepsCopyOf(k, entries, saved, failed) {
			failed[k] = fmt.Errorf("kept: the entry renamed from it was not saved")
			continue
		}
		del = append(del, k)
	}
	if len(del) == 0 {
		return nil, nil
	}
	// Children before their directory: a store may remove only an empty
	// directory.
	slices.SortFunc(del, func(a, b string) int { return strings.Compare(b, a) })
	stayed, err := c.delete(ctx, del, delExpect)
	if err != nil {
		if len(del) == 1 {
			failed[del[0]] = err
		} else {
			stayed = nil
			for _, k := range del {
				kept, err := c.delete(ctx, []string{k}, delExpect)
				if err != nil {
					failed[k] = err
				}
				stayed = append(stayed, kept...)
			}
		}
	}
	return del, stayed
}

// applyBatch sends the whole flush to b in one Apply (see saveAndDelete) and
// reports whether the store took it. The directories go in as saves once
// (a batch has no order, so they need not come before and after the files
// as with Save), each save states the version it replaces when the store
// is Versioned, and a removed key saved again (a directory made where a
// node was removed) is saved in place rather than deleted.
//
// It returns an error when the flush must not go on one entry at a time
// as a store without batches does: a conflict under FailOnConflict
// (delExpect non-nil), a store that cannot be reached, or a batch larger
// than the store takes (which a policy's flush applies in parts:
// applyParts).
func (c *Context) applyBatch(ctx context.Context, b backend.Batcher, entries []backend.Entry, saved []snap, removed []string,
	delExpect map[string]backend.Version, dirs []backend.Entry, dexpect map[string]backend.Version, touched []backend.Entry, kept map[string]string) (bool, error) {
	if len(entries)+len(removed)+len(dirs) == 0 {
		return true, nil
	}
	saves := make([]backend.Entry, 0, len(dirs)+len(entries)+len(touched))
	saves = append(append(append(saves, dirs...), entries...), touched...)
	var batch backend.Batch
	batch.Saves = saves
	if _, ok := c.store.(backend.Versioned); ok {
		batch.Expect = make(map[string]backend.Version, len(entries))
		for i, s := range saved {
			batch.Expect[entries[i].Key] = s.expect
		}
		for _, d := range dirs {
			if v, ok := dexpect[d.Key]; ok {
				batch.Expect[d.Key] = v
			}
		}
	}
	inSaves := make(map[string]bool, len(saves))
	for _, e := range saves {
		inSaves[e.Key] = true
	}
	for _, k := range removed {
		if !inSaves[k] {
			batch.Deletes = append(batch.Deletes, k)
			if v, ok := delExpect[k]; ok {
				if batch.ExpectDeleted == nil {
					batch.ExpectDeleted = make(map[string]backend.Version)
				}
				batch.ExpectDeleted[k] = v
			}
		}
	}
	batch.FailOnConflict = delExpect != nil
	conflicts, err := b.Apply(ctx, batch)
	if errors.Is(err, backend.ErrConflict) && batch.FailOnConflict {
		return false, err
	}
	if errors.Is(err, backend.ErrUnavailable) {
		c.log.Warn("flush: the store cannot be reached; everything stays dirty", "err", err)
		return false, err
	}
	if errors.Is(err, backend.ErrBatchTooLarge) {
		c.log.Info("flush: more than the store takes in one atomic batch; saved in parts (a crash in between can leave a renamed file under both names)",
			"saves", len(saves), "deletes", len(batch.Deletes), "err", err)
		return false, err
	}
	if err != nil {
		c.log.Warn("flush: the store refused the flush as one batch; trying its entries one by one to find what it refuses",
			"saves", len(saves), "deletes", len(batch.Deletes), "err", err)
		return false, nil
	}
	// The revisions the store wrote into its copy of the batch.
	for i := range dirs {
		dirs[i].Info.Rev = saves[i].Info.Rev
	}
	for i := range entries {
		entries[i].Info.Rev = saves[len(dirs)+i].Info.Rev
	}
	for i := range touched {
		touched[i].Info.Rev = saves[len(dirs)+len(entries)+i].Info.Rev
	}
	logConflicts(c.log, conflicts)
	maps.Copy(kept, conflicts)
	return true, nil
}

// logConflicts logs the conflicts of a conditional save: another writer's
// version kept beside the key memfs saved.
func logConflicts(log *slog.Logger, conflicts map[string]string) {
	for key, copyKey := range conflicts {
		log.Warn("another program changed the store's copy of a file memfs was saving: memfs's version takes the name, the other is kept beside it",
			"key", key, "other_version", copyKey)
	}
}

// saveEach saves entries in one call, or one by one when that fails,
// recording in failed what the store refused.
func (c *Context) saveEach(ctx context.Context, entries []backend.Entry, failed map[string]error) {
	if err := c.store.Save(ctx, entries...); err == nil {
		return
	}
	for i := range entries {
		if err := c.store.Save(ctx, entries[i]); err != nil {
			failed[entries[i].Key] = err
		}
	}
}

// save saves entries, stating the versions they replace when the store
// can check them: another writer's version found in their place is kept
// beside it (backend.Versioned), logged, never overwritten unseen.
func (c *Context) save(ctx context.Context, entries []backend.Entry, saved []snap, kept map[string]string) error {
	cs, ok := c.store.(backend.Versioned)
	if !ok {
		return c.store.Save(ctx, entries...)
	}
	expect := make([]backend.Version, len(saved))
	for i, s := range saved {
		expect[i] = s.expect
	}
	conflicts, err := cs.SaveIf(ctx, entries, expect)
	logConflicts(c.log, conflicts)
	maps.Copy(kept, conflicts)
	return err
}

// conditionalDeletes reports whether the flush's deletes state the
// version they remove outside a conflict policy's round: on a store
// without batches that checks them (backend.ConditionalDeleter: a
// directory store, which other programs write).
func (c *Context) conditionalDeletes() bool {
	_, batches := c.store.(backend.Batcher)
	_, cond := c.store.(backend.ConditionalDeleter)
	return cond && !batches
}

// delete deletes keys, each expecting its version in delExpect (a
// policy's round, or conditionalDeletes): a key another writer changed
// since stays as they left it, logged (the store's change feed brings
// their version in), never destroyed. It returns those keys. A key
// without a version in delExpect (a directory, removed only when empty)
// is deleted whatever it holds.
func (c *Context) delete(ctx context.Context, keys []string, delExpect map[string]backend.Version) (kept []string, err error) {
	var cond, plain []string
	var expect []backend.Version
	for _, k := range keys {
		if v, ok := delExpect[k]; ok {
			cond, expect = append(cond, k), append(expect, v)
		} else {
			plain = append(plain, k)
		}
	}
	if len(cond) > 0 {
		kept, err = c.deleteIf(ctx, cond, expect)
	}
	c.mu.Lock()
	for _, k := range kept {
		// Not memfs's version any more, whatever it looks like: the
		// store's report of it is brought in, never taken for an echo.
		c.mu.echo.forgetLocked(k)
	}
	c.mu.Unlock()
	for _, k := range kept {
		c.log.Warn("another writer changed a key this flush deletes: their version stays", "key", k)
	}
	if len(plain) > 0 {
		err = errors.Join(err, c.store.Delete(ctx, plain...))
	}
	return kept, err
}

// deleteIf deletes keys, each only while it holds expect[i], and returns
// those another writer changed since, which stay: by DeleteIf on a store
// without batches (backend.ConditionalDeleter), by Apply with
// Batch.ExpectDeleted on a Batcher (the flush's way when its batch failed:
// the deletes alone, the keys of a conflict left out, again until the
// store takes the rest).
func (c *Context) deleteIf(ctx context.Context, keys []string, expect []backend.Version) (kept []string, err error) {
	switch s := c.store.(type) {
	case backend.ConditionalDeleter:
		return s.DeleteIf(ctx, keys, expect)
	case backend.Batcher:
		want := make(map[string]backend.Version, len(keys))
		for i, k := range keys {
			want[k] = expect[i]
		}
		for len(keys) > 0 {
			_, err := s.Apply(ctx, backend.Batch{Deletes: keys, ExpectDeleted: want, FailOnConflict: true})
			var ce *backend.ConflictError
			if !errors.As(err, &ce) {
				return kept, err
			}
			n := len(kept)
			for _, cf := range ce.Conflicts {
				if _, ok := want[cf.Key]; ok {
					delete(want, cf.Key)
					kept = append(kept, cf.Key)
				}
			}
			if len(kept) == n {
				return kept, err // a conflict on none of them: no way on
			}
			keys = slices.DeleteFunc(keys, func(k string) bool { _, ok := want[k]; return !ok })
		}
		return kept, nil
	}
	return nil, c.store.Delete(ctx, keys...)
}

// keepsCopyOf reports whether k is the key the store holds a refused
// entry under (the entry was renamed from k).
func keepsCopyOf(k string, entries []backend.Entry, saved []snap, failed map[string]error) bool {
	if len(failed) == 0 {
		return false
	}
	for i, s := range saved {
		if s.from == k && entries[i].Key != k {
			if _, bad := failed[entries[i].Key]; bad {
				return true
			}
		}
	}
	return false
}

// Sealed returns every dirty, non-hidden entry with its value,
// sealed: what a recovery directory must receive when the store refuses
// the final flush. A value is shared, as Entries' are: it never changes,
// and the caller must not modify it (an append copies).
func (p *Pending) Sealed() []backend.Entry {
	c := p.c
	c.mu.RLock() // see Entry
	var out []backend.Entry
	for f := range c.mu.pending.dirty {
		value := f.shareRLocked()
		for _, k := range f.names() { // every name of a node with hard links
			if !c.unjournaled(k) { // working memory goes to no recovery directory either
				out = append(out, backend.Entry{Key: k, Info: f.infoLocked(), Value: value})
			}
		}
	}
	c.mu.RUnlock()
	c.sealEntries(out, false)
	return out
}

// journal records a completed change when the session has a journal: the
// entries' whole values, sealed, and the removed keys.
func (c *Context) journal(gen uint64, entries []backend.Entry, removed []string) error {
	return c.journalRecord(journal.Record{Gen: gen, Entries: entries, Removed: removed})
}

// journalRenamed is journal of a rename: renamed maps each moved file's
// new key to its old one, so that a replay tells of the rename.
func (c *Context) journalRenamed(gen uint64, entries []backend.Entry, removed []string, renamed map[string]string) error {
	return c.journalRecord(journal.Record{Gen: gen, Entries: entries, Removed: removed, Renamed: renamed})
}

// journalRecord is journal of r: its entries (sealed here), removed keys
// and renamed files, those of local keys left out.
func (c *Context) journalRecord(r journal.Record) error {
	j := c.opts.Journal
	if j == nil || r.Gen == 0 {
		// Generation 0 is a clean file: the store already has it.
		return nil
	}
	var keep []backend.Entry
	for _, e := range r.Entries {
		if !c.unjournaled(e.Key) {
			keep = append(keep, e)
		}
	}
	var rm []string
	for _, k := range r.Removed {
		if !c.unjournaled(k) {
			rm = append(rm, k)
		}
	}
	if len(keep) == 0 && len(rm) == 0 {
		return nil
	}
	var renamed map[string]string
	for k, old := range r.Renamed {
		if !c.unjournaled(k) && !c.unjournaled(old) {
			if renamed == nil {
				renamed = make(map[string]string, len(r.Renamed))
			}
			renamed[k] = old
		}
	}
	c.sealEntries(keep, false)
	return c.appendRecord(journal.Record{Gen: r.Gen, Entries: keep, Removed: rm, Renamed: renamed})
}

// journalDropping records e, sealed, as journal does, with the record
// dropping the earlier records of key dropped (journal.Record.Dropped).
func (c *Context) journalDropping(gen uint64, e backend.Entry, dropped string) error {
	if c.opts.Journal == nil || gen == 0 {
		return nil
	}
	entries := []backend.Entry{e}
	c.sealEntries(entries, false)
	return c.appendRecord(journal.Record{Gen: gen, Entries: entries, Dropped: []string{dropped}})
}

func (c *Context) appendRecord(r journal.Record) error {
	if c.opts.OnConflict != KeepBeside {
		r.Bases = c.recordBases(r)
	}
	if err := c.opts.Journal.Append(r); err != nil {
		c.log.Error("journal append failed", "err", err)
		return wrapf("journal: %w", err)
	}
	return nil
}

// journalAppend records the bytes of e.Value from base on, appended since
// the journal last recorded the value, when the journal can hold them as
// an append without holding anything a redaction of the whole value would
// change. The redaction context (redact.ContextStart: the line, or the
// open PEM block, the append lands in) goes through the redactor with
// them: if the redacted context alone is a prefix of the redacted context
// with the append, the rest is the record, and replayed after what the
// journal or the store holds it gives exactly the redacted whole value.
// Otherwise — the append completed a secret begun earlier — it reports
// ok false and the caller records the whole sealed value, which scrubs the
// earlier records of the key from the journal.
func (c *Context) journalAppend(gen uint64, e backend.Entry, base int) (ok bool, err error) {
	data := e.Value
	e.Value = data[base:]
	if r := c.opts.Redactor; r != nil {
		binary := redact.IsBinary(data)
		if binary != redact.IsBinary(data[:base]) {
			// The append made the value binary (a NUL in its first 8
			// KiB): the journal's text-redacted base is no base for a
			// masked append.
			return false, nil
		}
		s := r.ContextStart(data, base)
		before, _ := sealBytes(r, e.Key, data[s:base], binary)
		after, _ := sealBytes(r, e.Key, data[s:], binary)
		if !bytes.HasPrefix(after, before) {
			return false, nil
		}
		sealed, _ := c.seal(backend.Entry{Key: e.Key, Info: e.Info}) // the attributes
		e.Info, e.Value = sealed.Info, after[len(before):]
	}
	return true, c.appendRecord(journal.Record{Gen: gen, Entries: []backend.Entry{e}, Append: true})
}

// recordBases is what a journal record of r's keys carries under a
// conflict policy: the store's version each change was made on, which a
// flush after a crash must still expect (see Replay), so that another
// writer's change made meanwhile is a conflict, not overwritten.
func (c *Context) recordBases(r journal.Record) map[string]backend.Version {
	c.mu.RLock()
	defer c.mu.RUnlock()
	bases := make(map[string]backend.Version, len(r.Entries)+len(r.Removed))
	for _, e := range r.Entries {
		if f, ok := c.mu.tree.files[e.Key]; ok {
			bases[e.Key] = c.expectLocked(f, nil)
		}
	}
	for _, k := range r.Removed {
		if v, ok := c.mu.conflict.bases[k]; ok {
			bases[k] = v
		}
	}
	return bases
}

// partUnit is what applyParts keeps together in one part.
type partUnit struct {
	ents []int // indices into entries (and saved)
	dels []string
	dir  int // index into dirs, or -1
}

// partUnits cuts a flush into applyParts' units: each entry with the
// other names of its node and the delete of the key it was renamed from,
// each other delete, each directory.
func partUnits(entries []backend.Entry, saved []snap, removed []string, dirs []backend.Entry) []partUnit {
	toDelete := make(map[string]bool, len(removed))
	for _, k := range removed {
		toDelete[k] = true
	}
	var units []partUnit
	for i := 0; i < len(entries); {
		u := partUnit{dir: -1}
		j := i + 1
		for j < len(entries) && saved[j].alias && saved[j].f == saved[i].f {
			j++
		}
		for x := i; x < j; x++ {
			u.ents = append(u.ents, x)
		}
		if from := saved[i].from; from != "" && toDelete[from] {
			u.dels = append(u.dels, from)
			delete(toDelete, from)
		}
		units = append(units, u)
		i = j
	}
	for _, k := range removed {
		if toDelete[k] {
			units = append(units, partUnit{dels: []string{k}, dir: -1})
		}
	}
	for i := range dirs {
		units = append(units, partUnit{dir: i})
	}
	return units
}

// applyParts is a conflict policy's flush of a batch larger than the
// store applies at once: it is cut in halves, again and again, until each
// part is taken, each part applied with FailOnConflict. A part that meets
// a conflict writes nothing, and its keys are failed with the
// *backend.ConflictError, so that they stay dirty while the parts the
// store took are committed; the policy resolves the conflict and the next
// round sends the rest. A part of one entry the store still refuses goes
// the way of a store without batches (SaveIf: theirs kept beside). Each
// unit keeps together the names of a node with hard links, and a
// renamed file's save with the delete of its old key.
func (c *Context) applyParts(ctx context.Context, b backend.Batcher, entries []backend.Entry, saved []snap, removed []string,
	delExpect map[string]backend.Version, dirs []backend.Entry, r *flushResult) {
	units := partUnits(entries, saved, removed, dirs)
	var apply func(us []partUnit)
	apply = func(us []partUnit) {
		var es []backend.Entry
		var ss []snap
		var idx []int
		var dels []string
		var ds []backend.Entry
		for _, u := range us {
			for _, i := range u.ents {
				es = append(es, entries[i])
				ss = append(ss, saved[i])
				idx = append(idx, i)
			}
			dels = append(dels, u.dels...)
			if u.dir >= 0 {
				ds = append(ds, dirs[u.dir])
			}
		}
		done, err := c.applyBatch(ctx, b, es, ss, dels, delExpect, ds, nil, nil, r.kept)
		if done {
			for j, i := range idx {
				entries[i].Info.Rev = es[j].Info.Rev
			}
			return
		}
		if errors.Is(err, backend.ErrBatchTooLarge) && len(us) > 1 {
			apply(us[:len(us)/2])
			apply(us[len(us)/2:])
			return
		}
		if err == nil || errors.Is(err, backend.ErrBatchTooLarge) {
			// One unit the store refuses in a batch: saved as a store
			// without batches saves it, its deletes as conditional.
			err = nil
			if len(es) > 0 {
				if err = c.save(ctx, es, ss, r.kept); err == nil {
					for j, i := range idx {
						entries[i].Info.Rev = es[j].Info.Rev
					}
				}
			}
			if err == nil && len(dels) > 0 {
				var stayed []string
				stayed, err = c.delete(ctx, dels, delExpect)
				r.stayed = append(r.stayed, stayed...)
			}
			if err == nil && len(ds) > 0 {
				err = c.store.Save(ctx, ds...)
			}
			if err == nil {
				return
			}
		}
		for _, e := range es {
			r.failed[e.Key] = err
		}
		for _, k := range dels {
			r.failed[k] = err
		}
		for _, e := range ds {
			r.dfailed[e.Key] = err
		}
	}
	apply(units)
}
