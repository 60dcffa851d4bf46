package dirstore

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"time"

	"github.com/memfs/memfs/backend"
)

var _ backend.AsideMover = (*Store)(nil)

// MoveAside renames key's file, as it is, to .memfs-damaged/STAMP/KEY in
// the root (a reserved name List never shows); its attributes go with it.
func (s *Store) MoveAside(ctx context.Context, key string) (string, error) {
	if err := checkKey("move aside", key); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	to := backend.AsideName(key, time.Now())
	if _, err := s.root.Lstat(key); err != nil {
		return "", loadErr(key, err)
	}
	if err := s.root.MkdirAll(path.Dir(to), 0o700); err != nil {
		return "", fmt.Errorf("dirstore: move aside %s: %w", key, err)
	}
	if err := s.root.Rename(key, to); err != nil {
		return "", fmt.Errorf("dirstore: move aside %s: %w", key, err)
	}
	// Both directories, so that the move survives a power loss.
	for _, d := range []string{path.Dir(key), path.Dir(to)} {
		if f, err := s.root.Open(d); err == nil {
			f.Sync()
			f.Close()
		}
	}
	return filepath.Join(s.dir, filepath.FromSlash(to)), nil
}
