package backend_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/memfs/memfs/backend"
)

func TestUnixModeRoundTrip(t *testing.T) {
	for _, u := range []uint32{
		0o100644, 0o100000, 0o107777, 0o041777, 0o040700, 0o120777, 0o010600, 0o140755, 0o060660, 0o020620, 0o102755,
	} {
		m := backend.FileMode(u)
		if got := backend.UnixMode(m); got != u {
			t.Errorf("UnixMode(FileMode(%#o)) = %#o (via %v)", u, got, m)
		}
	}
	if m := backend.FileMode(0o104755); m != fs.ModeSetuid|0o755 {
		t.Errorf("FileMode(04755) = %v", m)
	}
	if m := backend.FileMode(0o021777 &^ 0o1000); m&fs.ModeCharDevice == 0 {
		t.Errorf("FileMode(char device) = %v", m)
	}
	if got := backend.PermBits(fs.ModeDir | fs.ModeSticky | 0o777); got != fs.ModeSticky|0o777 {
		t.Errorf("PermBits = %v", got)
	}
}

func TestValidateEntry(t *testing.T) {
	ok := []backend.Entry{
		{Key: "a", Value: []byte("x"), Info: backend.Info{Mode: fs.ModeSetuid | 0o755}},
		{Key: ".git", Info: backend.Info{Mode: fs.ModeDir | fs.ModeSetgid | 0o2775&0o777}},
		{Key: "l", Value: []byte("../x"), Info: backend.Info{Mode: fs.ModeSymlink | 0o777}},
		{Key: "f", Info: backend.Info{Mode: fs.ModeNamedPipe | 0o600}},
		{Key: "s", Info: backend.Info{Mode: fs.ModeSocket | 0o755}},
		{Key: "d", Info: backend.Info{Mode: fs.ModeDevice | fs.ModeCharDevice | 0o600, Rdev: 0x0103}},
		{Key: "h", Value: []byte("x"), Info: backend.Info{Mode: 0o644, Link: "g1"}},
	}
	for i := range ok {
		if err := backend.ValidateEntry(&ok[i]); err != nil {
			t.Errorf("ValidateEntry(%q) = %v", ok[i].Key, err)
		}
	}
	bad := []backend.Entry{
		{Key: "l", Info: backend.Info{Mode: fs.ModeSymlink | 0o777}},
		{Key: "f", Value: []byte("x"), Info: backend.Info{Mode: fs.ModeNamedPipe | 0o600}},
		{Key: "d", Info: backend.Info{Mode: fs.ModeDir | 0o755, Link: "g"}},
		{Key: "r", Info: backend.Info{Mode: 0o644, Rdev: 1}},
		{Key: "i", Info: backend.Info{Mode: fs.ModeIrregular | 0o644}},
		{Key: "t", Info: backend.Info{Mode: fs.ModeTemporary | 0o644}},
	}
	for i := range bad {
		if err := backend.ValidateEntry(&bad[i]); !errors.Is(err, backend.ErrInvalidEntry) {
			t.Errorf("ValidateEntry(%q, %v) = %v, want ErrInvalidEntry", bad[i].Key, bad[i].Info.Mode, err)
		}
	}
	res := backend.Entry{Key: ".memfs/x", Value: []byte("x")}
	if err := backend.ValidateEntry(&res); !errors.Is(err, backend.ErrReserved) {
		t.Errorf("ValidateEntry(reserved) = %v", err)
	}
}
