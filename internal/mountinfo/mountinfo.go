// Package mountinfo reads the kernel's mount table, /proc/self/mountinfo:
// the one parser of it in memfs.
//
// A line is "ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...]
// - FSTYPE SOURCE SUPEROPTIONS"; the kernel escapes space, tab, newline
// and backslash in paths as octal (\040), which Parse undoes. MountUsers
// names the processes that keep a mountpoint busy.
//
// # Concurrency
//
// Its functions hold no state and are safe for concurrent use.
package mountinfo

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Mount is one line of the mount table.
type Mount struct {
	Point, FSType, Source string
	Dev                   uint64 // MAJOR:MINOR, as stat's st_dev gives it
	UID                   uint32 // user_id= of a FUSE mount; ^0 when absent
	AllowOther            bool   // allow_other: the mount's owner lets other users in
	Whole                 bool   // the file system's root is mounted (not a bind mount of a subtree)
	ReadOnly              bool   // mounted ro
}

// Minor is the minor number of the mount's device: a FUSE mount's
// connection in /sys/fs/fuse/connections.
func (m Mount) Minor() uint32 { return unix.Minor(m.Dev) }

// Read reads the mount table of this process.
func Read() ([]Mount, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return Parse(string(data)), nil
}

// At returns the mount at point (the last one: the mount on top), from
// this process's table.
func At(point string) (Mount, bool) {
	table, err := Read()
	if err != nil {
		return Mount{}, false
	}
	return Find(table, point)
}

// Find returns the last mount of table at point: the one on top.
func Find(table []Mount, point string) (Mount, bool) {
	var m Mount
	found := false
	for _, e := range table {
		if e.Point == point {
			m, found = e, true
		}
	}
	return m, found
}

// Parse reads the lines of a mountinfo file; a malformed line is left out.
func Parse(mountinfo string) []Mount {
	var out []Mount
	for line := range strings.SplitSeq(mountinfo, "\n") {
		if m, ok := parseLine(line); ok {
			out = append(out, m)
		}
	}
	return out
}

func parseLine(line string) (Mount, bool) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+3 >= len(f) {
		return Mount{}, false
	}
	m := Mount{Point: Unescape(f[4]), FSType: f[sep+1], Source: Unescape(f[sep+2]), Whole: f[3] == "/", UID: ^uint32(0)}
	if maj, min, ok := strings.Cut(f[2], ":"); ok {
		a, aerr := strconv.ParseUint(maj, 10, 32)
		b, berr := strconv.ParseUint(min, 10, 32)
		if aerr == nil && berr == nil {
			m.Dev = unix.Mkdev(uint32(a), uint32(b))
		}
	}
	m.ReadOnly = slices.Contains(strings.Split(f[5], ","), "ro") || slices.Contains(strings.Split(f[sep+3], ","), "ro")
	for o := range strings.SplitSeq(f[sep+3], ",") {
		if o == "allow_other" {
			m.AllowOther = true
		}
		if v, ok := strings.CutPrefix(o, "user_id="); ok {
			if n, err := strconv.ParseUint(v, 10, 32); err == nil {
				m.UID = uint32(n)
			}
		}
	}
	return m, true
}

// Unescape undoes the octal escapes of mountinfo (\040 for a space); a
// backslash not followed by three octal digits stays as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
