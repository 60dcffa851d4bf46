// Package listing writes the entries of a store as memfs ls shows them:
// the keys that hold a node, or (long) a line per entry as ls -l writes
// it, with the node type and mode, owner, size, modification time,
// symlink target, tags, importance, type and session; and it says which
// entries "ls PREFIX" lists (Under).
//
// # Concurrency
//
// The functions are stateless and safe for concurrent use.
package listing

import (
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/names"
	"github.com/memfs/memfs/meta"
)

// Under returns which keys "ls PREFIX" lists, given the entries it may
// list: when PREFIX names a key (a file, a directory) or keys under
// PREFIX/ exist, that key and what is under it, as ls(1) lists a
// directory ("memory/project" is not "memory/project.md"); else every
// key that starts with PREFIX ("memory/pro").
func Under[E any](prefix string, entries []E, key func(E) string) func(key string) bool {
	p := strings.TrimSuffix(prefix, "/")
	named := func(k string) bool { return k == p || strings.HasPrefix(k, p+"/") }
	for _, e := range entries {
		if p != "" && named(key(e)) {
			return named
		}
	}
	return func(k string) bool { return strings.HasPrefix(k, prefix) }
}

// Ls writes the entries memfs ls lists: those under f.Prefix (Under) that
// f matches, as Write writes them.
func Ls(w io.Writer, entries []backend.Entry, f meta.Filter, long bool) error {
	under := Under(f.Prefix, entries, func(e backend.Entry) string { return e.Key })
	return Write(w, entries, func(e backend.Entry) bool {
		return under(e.Key) && f.Match(e.Key, e.Info.MTime, e.Info.XAttrs)
	}, long)
}

// Write writes the entries match accepts to w: the short form lists the
// keys that hold a node; long shows directories too, as d, a line each.
func Write(w io.Writer, entries []backend.Entry, match func(backend.Entry) bool, long bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', tabwriter.AlignRight)
	for _, e := range entries {
		if !match(e) {
			continue
		}
		if long {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t %s%s\n", Mode(e.Info.Mode), e.Info.UID, e.Info.GID, size(e.Info),
				e.Info.MTime.Format(time.DateTime), name(e), tags(e.Info.XAttrs))
		} else if !e.Info.Mode.IsDir() {
			fmt.Fprintln(tw, names.Show(e.Key))
		}
	}
	return tw.Flush()
}

// Mode is m as ls -l shows it: the node type (d, l, p, s, c, b, -),
// then the permissions with setuid, setgid and sticky as s/S and t/T.
// fs.FileMode.String writes the special bits as prefixed letters
// ("urwxr-xr-x"), which no one reads as ls does.
func Mode(m fs.FileMode) string {
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

// size is the size column: the device number for a device, as ls shows
// it.
func size(info backend.Info) string {
	if info.Mode&fs.ModeDevice != 0 {
		return fmt.Sprintf("%d, %d", unix.Major(info.Rdev), unix.Minor(info.Rdev))
	}
	return fmt.Sprint(info.Size)
}

// name is the name column: a symlink's target after it, as ls shows it.
func name(e backend.Entry) string {
	if e.Info.Mode.Type() == fs.ModeSymlink {
		return names.Show(e.Key) + " -> " + names.Show(string(e.Value))
	}
	return names.Show(e.Key)
}

// tags shows an entry's tags, importance, memory type and session.
func tags(x map[string][]byte) string {
	a := meta.Parse(x)
	var s string
	if len(a.Tags) > 0 {
		s += "  tags=" + strings.Join(a.Tags, ",")
	}
	if a.HasImp {
		s += fmt.Sprintf("  importance=%g", a.Importance)
	}
	if a.Type != "" {
		s += "  type=" + a.Type
	}
	if a.Session != "" {
		s += "  session=" + a.Session
	}
	return s
}
