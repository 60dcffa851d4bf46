package main

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// lsMode is m as ls -l shows it: the node type (d, l, p, s, c, b, -),
// then the permissions with setuid, setgid and sticky as s/S and t/T.
// fs.FileMode.String writes the special bits as prefixed letters
// ("urwxr-xr-x"), which no one reads as ls does.
func lsMode(m fs.FileMode) string {
	b := []byte("-rwxrwxrwx")
	switch t := m.Type(); {
	case t == fs.ModeDir:
		b[0] = 'd'
	case t == fs.ModeSymlink:
		b[0] = 'l'
	case t == fs.ModeNamedPipe:
		b[0] = 'p'
	case t == fs.ModeSocket:
		b[0] = 's'
	case t == fs.ModeDevice|fs.ModeCharDevice:
		b[0] = 'c'
	case t == fs.ModeDevice:
		b[0] = 'b'
	}
	for i := range 9 {
		if m&(1<<(8-i)) == 0 {
			b[1+i] = '-'
		}
	}
	special := func(bit fs.FileMode, at int, set, unset byte) {
		if m&bit == 0 {
			return
		}
		if b[at] == 'x' {
			b[at] = set
		} else {
			b[at] = unset
		}
	}
	special(fs.ModeSetuid, 3, 's', 'S')
	special(fs.ModeSetgid, 6, 's', 'S')
	special(fs.ModeSticky, 9, 't', 'T')
	return string(b)
}

// lsSize is the size column: the device number for a device, as ls
// shows it.
func lsSize(info backend.Info) string {
	if info.Mode&fs.ModeDevice != 0 {
		return fmt.Sprintf("%d, %d", unix.Major(info.Rdev), unix.Minor(info.Rdev))
	}
	return fmt.Sprint(info.Size)
}

// lsName is the name column: a symlink's target after it, as ls shows it.
func lsName(e backend.Entry) string {
	if e.Info.Mode.Type() == fs.ModeSymlink {
		return showName(e.Key) + " -> " + showName(string(e.Value))
	}
	return showName(e.Key)
}
