package memfs

import (
	"context"

	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/repo"
	"github.com/memfs/memfs/session"
)

// staleIndexes counts the derived artifacts of repositories
// (repos/HASH/indexes/NAME) cr may read whose user.memfs.derived is not
// their repository's state as memfs last saw it (repo.json's state, kept
// by memfs repo init and the cache commands): .memfs/status's
// stale_indexes. A repository whose repo.json cr may not read, or that
// names no state, counts none.
func (f *FS) staleIndexes(cr session.Cred) int {
	src := readableSource{c: f.c, cr: cr}
	es := src.Entries(repo.Dir)
	var infos []string
	for _, e := range es {
		if _, ok := repo.ParseInfoKey(e.Key); ok {
			infos = append(infos, e.Key)
		}
	}
	if len(infos) == 0 {
		return 0
	}
	_ = src.Resolve(context.Background(), infos...) // what does not load counts none
	states := map[string]string{}
	for _, k := range infos {
		hash, _ := repo.ParseInfoKey(k)
		if v, ok := src.Get(k); ok {
			if in, err := repo.ParseInfo(hash, v); err == nil {
				states[hash] = in.State
			}
		}
	}
	n := 0
	for _, e := range es {
		hash, _, ok := repo.ParseIndexKey(e.Key)
		if st := states[hash]; ok && e.Info.Mode.IsRegular() && st != "" && string(e.Info.XAttrs[meta.Derived]) != st {
			n++
		}
	}
	return n
}
