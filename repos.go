package memfs

import (
	"context"
	"strings"

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
		if hash, rest, ok := splitRepoKey(e.Key); ok && e.Key == repo.InfoKey(hash) && rest == "repo.json" {
			infos = append(infos, e.Key)
		}
	}
	if len(infos) == 0 {
		return 0
	}
	_ = src.Resolve(context.Background(), infos...) // what does not load counts none
	states := map[string]string{}
	for _, k := range infos {
		hash, _, _ := splitRepoKey(k)
		if v, ok := src.Get(k); ok {
			if in, err := repo.ParseInfo(hash, v); err == nil {
				states[hash] = in.State
			}
		}
	}
	n := 0
	for _, e := range es {
		hash, rest, ok := splitRepoKey(e.Key)
		name, isIndex := strings.CutPrefix(rest, "indexes/")
		if !ok || !isIndex || repo.ValidateIndexName(name) != nil || !e.Info.Mode.IsRegular() {
			continue
		}
		if st := states[hash]; st != "" && string(e.Info.XAttrs[meta.Derived]) != st {
			n++
		}
	}
	return n
}

// splitRepoKey splits repos/HASH/REST into HASH and REST.
func splitRepoKey(key string) (hash, rest string, ok bool) {
	in, ok := strings.CutPrefix(key, repo.Dir)
	if !ok {
		return "", "", false
	}
	hash, rest, ok = strings.Cut(in, "/")
	return hash, rest, ok && repo.ValidateHash(hash) == nil
}
