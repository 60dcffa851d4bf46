package searchtest

import (
	"embed"
	"io/fs"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// indexV3 is what memfs at commit 9bfa440 (search format version 3, the
// last before stemming) saved as the index of IndexV3Docs: the records
// search/shard-33, -59 and -61 (a new index saves only the shards that
// hold documents), their terms the words as written ("payments",
// "refunded", "restoring").
//
//go:embed testdata/index-v3
var indexV3 embed.FS

// IndexV3Docs returns the notes of IndexV3, by key. Each was indexed with
// its length as size and 2026-12-01T00:00:00Z as mtime (IndexV3Entries).
func IndexV3Docs() map[string]string {
	return map[string]string{
		"memory/billing.md": "Both payments were charged twice; the invoices were refunded.",
		"memory/backups.md": "Restoring the nightly backups takes forty minutes.",
		"memory/deploy.md":  "The deploy plans for Friday were approved.",
	}
}

// IndexV3Entries returns the notes of IndexV3 as a store holds them, mode
// 0644, with the stamps IndexV3 has for them: an index that stamps do not
// make stale, only its format.
func IndexV3Entries() []backend.Entry {
	var out []backend.Entry
	for k, v := range IndexV3Docs() {
		out = append(out, backend.Entry{Key: k, Value: []byte(v),
			Info: backend.Info{Mode: 0o644, Size: int64(len(v)), MTime: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}})
	}
	return out
}

// IndexV3 returns the records of an index saved at format version 3, by
// system record name (search/shard-NN): an index of the previous format,
// which the current one must rebuild, not read.
func IndexV3(tb testing.TB) map[string][]byte {
	tb.Helper()
	out := make(map[string][]byte)
	err := fs.WalkDir(indexV3, "testdata/index-v3", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := indexV3.ReadFile(p)
		out["search/"+d.Name()] = data
		return err
	})
	if err != nil || len(out) != 3 {
		tb.Fatalf("the version 3 index: %d records, %v", len(out), err)
	}
	return out
}
