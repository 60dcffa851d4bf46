package changes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
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
