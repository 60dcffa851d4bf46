package memfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MakeMountpoint makes the mountpoint mnt when nothing is there, and
// reports whether it did. Only the last component is made: a user who
// names ~/memory expects it made, while a typo in a parent (~/memroy/x)
// should fail rather than leave a tree of directories behind.
func MakeMountpoint(mnt string) (bool, error) {
	if _, err := os.Lstat(mnt); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // there, or unreadable: CheckMountpoint says what is wrong
	}
	if err := os.Mkdir(mnt, 0o755); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("mountpoint %s: its parent %s does not exist\n  create it first: mkdir -p %s", mnt, filepath.Dir(mnt), mnt)
		}
		return false, fmt.Errorf("mountpoint %s: %w\n  create it first: mkdir -p %s", mnt, err, mnt)
	}
	return true, nil
}

// CheckMountpoint refuses what would fail late or deadlock: a missing or
// non-empty mountpoint, no /dev/fuse, a mountpoint inside the store
// directory storeDir or the store inside the mountpoint (CheckOverlap;
// storeDir "" for a store that is no local directory).
func CheckMountpoint(mnt, storeDir string) error {
	fi, err := os.Stat(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w\n  create it first: mkdir -p %s", mnt, err, mnt)
	}
	if !fi.IsDir() {
		return fmt.Errorf("mountpoint %s is not a directory", mnt)
	}
	ents, err := os.ReadDir(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w", mnt, err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("mountpoint %s is not empty (%d entries); mount on an empty directory", mnt, len(ents))
	}
	if storeDir != "" {
		if err := CheckOverlap(mnt, storeDir); err != nil {
			return err
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("no /dev/fuse (%v): load the fuse module (modprobe fuse) or install fuse3", err)
	}
	return nil
}

// PrepareMountpoint readies mnt for a mount of the store whose directory
// is storeDir ("" for a store that is no local directory): an overlap is
// refused first (a mountpoint made inside the store would be a key), mnt
// is made when nothing is there (MakeMountpoint), then checked
// (CheckMountpoint; what it made is removed when that fails). made
// reports that it made mnt: the caller removes it when the mount fails.
func PrepareMountpoint(mnt, storeDir string) (made bool, err error) {
	if storeDir != "" {
		if err := CheckOverlap(mnt, storeDir); err != nil {
			return false, err
		}
	}
	if made, err = MakeMountpoint(mnt); err != nil {
		return false, err
	}
	if err := CheckMountpoint(mnt, storeDir); err != nil {
		if made {
			os.Remove(mnt)
		}
		return false, err
	}
	return made, nil
}
