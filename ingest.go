package memfs

import (
	"context"

	"github.com/memfs/memfs/backend"
)

// ingestStore reads every value of the store and hands those that hold a
// secret no memfs redacted (another program wrote them while no memfs
// watched) to the session, whose Resolve seals them; a writable session
// then rewrites the store's copies redacted, by the flush it runs here
// (see session/ingestload.go). It returns how many it found. Values the
// session has loaded already were sealed when they were loaded.
func (f *FS) ingestStore(ctx context.Context) (int, error) {
	red := f.c.Redactor()
	if red == nil {
		return 0, nil
	}
	var keys []string
	err := backend.Walk(ctx, f.store, func(batch []backend.Entry) error {
		for _, e := range batch {
			if e.Info.Mode.IsRegular() && f.c.Has(e.Key) {
				keys = append(keys, e.Key)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var found []string
	const chunk = 512 // bound the memory of one Load call
	for i := 0; i < len(keys); i += chunk {
		got, err := f.store.Load(ctx, keys[i:min(i+chunk, len(keys))]...)
		if err != nil {
			return 0, err
		}
		for _, e := range got {
			if _, secrets := red.Redact(e.Key, e.Value); len(secrets) > 0 {
				found = append(found, e.Key)
			}
		}
	}
	if len(found) == 0 {
		return 0, nil
	}
	if err := f.c.Resolve(ctx, found...); err != nil {
		return 0, err
	}
	return len(found), f.c.Flush(ctx)
}
