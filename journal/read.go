package journal

import (
	"errors"
	"io/fs"
	"os"
)

// Read returns the records of the journal at path, and its damaged
// ranges, for a reader that changes nothing: unlike Open it creates no
// file (a missing journal holds no record), moves no damage aside (each
// Damage has no SavedTo and no Err: the bytes stay where they are) and
// rewrites nothing. The next Open does what Read leaves.
func Read(path string) ([]Record, []Damage, error) {
	f, err := openNoFollow(path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	j := &Journal{path: path, f: f}
	recs, _, err := j.readAll(false)
	if err != nil {
		return nil, nil, err
	}
	return recs, j.damaged, nil
}
