package session

import (
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// A value read from the store may hold a secret that no memfs redacted:
// another program wrote it into a directory store while no memfs watched
// (a watched change is ingested by extwatch). Resolve seals each value it
// loads, as Ingest does, so the session never holds nor shows it; a
// writable session also marks the file dirty, written by IngestAgent, so
// that the next flush rewrites the store's copy redacted: a save that
// expects the version read (another writer's newer one is kept, by the
// conflict policy) and an event that records it.

// sealLoaded seals the regular values of got in place and returns the
// indexes of those that held a secret, logging each finding (the key, the
// rule and where: never the secret).
func (c *Context) sealLoaded(got []backend.Entry) []int {
	if c.opts.Redactor == nil {
		return nil
	}
	var found []int
	for i, e := range got {
		if !e.Info.Mode.IsRegular() {
			continue
		}
		sealed, findings := c.seal(backend.Entry{Key: e.Key, Value: e.Value})
		if len(findings) == 0 {
			continue
		}
		for _, f := range findings {
			c.log.Warn("redacted a secret another program wrote into the store", "key", e.Key, "rule", f.RuleID,
				"line", f.Line, "column", f.Column)
		}
		got[i].Value = sealed.Value
		found = append(found, i)
	}
	return found
}

// ingestWriter is the writer of memfs's rewrite of another program's
// value: memfs itself, agent IngestAgent.
func (c *Context) ingestWriter() meta.WriterInfo {
	var w meta.WriterInfo
	if c.opts.Self != nil {
		w = *c.opts.Self
	}
	w.Agent = IngestAgent
	return w
}

// Ingested is how many values Resolve found a secret in since NewContext
// (see sealLoaded); a writable session holds them dirty, redacted.
func (s *Stats) Ingested() int64 { return s.c.ingested.Load() }
