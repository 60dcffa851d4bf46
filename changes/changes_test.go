package changes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestAppendAndRead(t *testing.T) {
	l := New(0)
	l.Append(Record{Time: time.Unix(1, 0).UTC(), Op: "create", Key: "memory/a.md", Origin: "mount"})
	l.Append(Record{Time: time.Unix(2, 0).UTC(), Op: "rename", Key: "b", OldKey: "a", Origin: "external"})
	buf := make([]byte, l.Size())
	if n := l.ReadAt(buf, 0); int64(n) != l.Size() {
		t.Fatalf("read %d of %d", n, l.Size())
	}
	want := `{"time":"1970-01-01T00:00:01Z","op":"create","key":"memory/a.md","origin":"mount"}` + "\n" +
		`{"time":"1970-01-01T00:00:02Z","op":"rename","key":"b","old_key":"a","origin":"external"}` + "\n"
	if string(buf) != want {
		t.Fatalf("feed =\n%s\nwant\n%s", buf, want)
	}
	// Reading from the middle, as tail -f does after the first pass.
	off := int64(len(`{"time":"1970-01-01T00:00:01Z","op":"create","key":"memory/a.md","origin":"mount"}` + "\n"))
	part := make([]byte, 200)
	n := l.ReadAt(part, off)
	if !bytes.HasPrefix(part[:n], []byte(`{"time":"1970-01-01T00:00:02Z"`)) {
		t.Fatalf("read at %d = %q", off, part[:n])
	}
	if n := l.ReadAt(part, l.Size()); n != 0 {
		t.Fatalf("read at the end returned %d bytes", n)
	}
}

func TestWindowKeepsWholeLines(t *testing.T) {
	l := New(4096)
	for i := range 1000 {
		l.Append(Record{Op: "write", Key: fmt.Sprintf("k%04d", i), Origin: "mount"})
	}
	if l.Size() < 50_000 {
		t.Fatalf("size %d: offsets must stay absolute", l.Size())
	}
	buf := make([]byte, 8192)
	n := l.ReadAt(buf, 0) // before the window: from its start
	sc := bufio.NewScanner(bytes.NewReader(buf[:n]))
	lines := 0
	var last Record
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("line %d is not whole JSON: %q", lines, sc.Text())
		}
		lines++
	}
	if lines == 0 || last.Key != "k0999" {
		t.Fatalf("window holds %d lines ending at %q, want the latest ending at k0999", lines, last.Key)
	}
}

// privVisible shows every key but those under priv/.
func privVisible(keys ...string) []bool {
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = !strings.HasPrefix(k, "priv/")
	}
	return out
}

// hidden is line masked: the placeholder padded to its length.
func hidden(line []byte) []byte {
	p := []byte(`{"hidden":true}`)
	return append(append(p, bytes.Repeat([]byte(" "), len(line)-1-len(p))...), '\n')
}

// A reader behind the feed's window gets the window from its first line,
// masked, as ReadAt gives it to root; reads of any size that cut lines
// join into the same bytes; a rename is hidden when either name is.
func TestReadMaskedAt(t *testing.T) {
	feed := New(1000)
	for i := range 100 {
		key := fmt.Sprintf("pub/%03d.md", i)
		if i%2 == 1 {
			key = fmt.Sprintf("priv/%03d.md", i)
		}
		r := Record{Time: time.Unix(int64(i), 0).UTC(), Op: "write", Key: key, Origin: "mount"}
		if i%10 == 4 {
			r.Op, r.OldKey = "rename", "priv/old.md"
		}
		feed.Append(r)
	}
	// What the reader should read: the whole window, each line under
	// priv/ replaced by the placeholder, from the offset on.
	window := make([]byte, 2000)
	window = window[:feed.ReadAt(window, 0)]
	base := feed.Size() - int64(len(window))
	var want []byte
	shown := 0
	for line := range bytes.SplitAfterSeq(window, []byte("\n")) {
		if bytes.Contains(line, []byte("priv/")) {
			line = hidden(line)
		} else {
			shown++
		}
		want = append(want, line...)
	}
	if shown == 0 {
		t.Fatal("every line of the window is hidden: the test needs both kinds")
	}
	tests := []struct {
		name string
		off  int64
	}{
		{"from 0, long gone", 0},
		{"behind by a little", base - 10},
		{"at the window's start", base},
		{"in the middle of a line of the window", feed.Size() - 130},
		{"at the end", feed.Size()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]byte, 4096)
			k := feed.ReadMaskedAt(got, tt.off, privVisible)
			w := want[max(0, tt.off-base):]
			if !bytes.Equal(got[:k], w) {
				t.Errorf("ReadMaskedAt at %d (window at %d) = %q, want %q", tt.off, base, got[:k], w)
			}
		})
	}
	for _, size := range []int{1, 10, 77} {
		var got []byte
		buf := make([]byte, size)
		for off := base; ; {
			k := feed.ReadMaskedAt(buf, off, privVisible)
			if k == 0 {
				break
			}
			got, off = append(got, buf[:k]...), off+int64(k)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("read %d bytes at a time: %q, want %q", size, got, want)
		}
	}
}
