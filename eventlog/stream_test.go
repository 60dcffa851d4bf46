package eventlog

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// readAll reads the whole stream with buffers of size buf.
func readAll(t *testing.T, l *Log, buf int) []byte {
	t.Helper()
	var out []byte
	p := make([]byte, buf)
	for off := int64(0); ; {
		n, err := l.ReadAt(t.Context(), p, off)
		out = append(out, p[:n]...)
		off += int64(n)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("ReadAt(%d): %v", off, err)
		}
		if n != len(p) {
			t.Fatalf("ReadAt(%d): got %d bytes and no error, want %d", off, n, len(p))
		}
	}
}

func TestReadAt(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	ctx := t.Context()
	if l.Size() != 0 {
		t.Fatalf("empty log: Size %d", l.Size())
	}
	if n, err := l.ReadAt(ctx, make([]byte, 10), 0); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("empty log: ReadAt got %d, %v; want 0, EOF", n, err)
	}
	mustAppend(t, l, evsAt(0, 2*ChunkEvents+17, nil))

	for _, reopen := range []bool{false, true} {
		if reopen {
			l = openLog(t, sys)
		}
		want, _ := stored(t, sys)
		if l.Size() != int64(len(want)) {
			t.Fatalf("Size: got %d, want %d", l.Size(), len(want))
		}
		for _, buf := range []int{1 << 20, 4096, 1000, 7} {
			if got := readAll(t, l, buf); !bytes.Equal(got, want) {
				t.Fatalf("reopen %v, buffer %d: the stream differs from the chunks (got %d bytes, want %d)", reopen, buf, len(got), len(want))
			}
		}
		// Around every chunk boundary, and at the ends.
		var bounds []int64
		var off int64
		for _, name := range sys.chunkNames(t) {
			bounds = append(bounds, off)
			off += int64(len(sys.get(t, name)))
		}
		bounds = append(bounds, off)
		for _, b := range bounds {
			for _, start := range []int64{b - 3, b - 1, b, b + 1} {
				if start < 0 {
					continue
				}
				for _, size := range []int{1, 2, 5, 300} {
					p := make([]byte, size)
					n, err := l.ReadAt(ctx, p, start)
					lo := min(start, int64(len(want)))
					wantN := min(int64(size), int64(len(want))-lo)
					if int64(n) != wantN || !bytes.Equal(p[:n], want[lo:lo+wantN]) {
						t.Fatalf("ReadAt(%d bytes at %d): got %q, want %q", size, start, p[:n], want[lo:lo+wantN])
					}
					if (int64(n) < int64(size)) != errors.Is(err, io.EOF) || (err != nil && !errors.Is(err, io.EOF)) {
						t.Fatalf("ReadAt(%d bytes at %d): got %d bytes and error %v", size, start, n, err)
					}
				}
			}
		}
	}
	if _, err := l.ReadAt(ctx, make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at -1: got nil error")
	}

	// The stream grows with Append; what was read stays the same.
	before := readAll(t, l, 4096)
	mustAppend(t, l, evsAt(2*ChunkEvents+17, 2000, nil))
	after := readAll(t, l, 4096)
	if want, _ := stored(t, sys); !bytes.Equal(after, want) || l.Size() != int64(len(want)) {
		t.Fatalf("after Append: the stream differs from the chunks (got %d bytes, Size %d, want %d)", len(after), l.Size(), len(want))
	}
	if !bytes.HasPrefix(after, before) || len(after) <= len(before) {
		t.Fatal("after Append: the stream does not extend the old one")
	}
	// A reader at the old end (tail -f) gets exactly the new lines.
	p := make([]byte, len(after))
	n, err := l.ReadAt(ctx, p, int64(len(before)))
	if !errors.Is(err, io.EOF) || !bytes.Equal(p[:n], after[len(before):]) {
		t.Fatalf("ReadAt at the old end: got %d bytes, %v; want the %d new bytes", n, err, len(after)-len(before))
	}
}

// Reading the end of the stream, as tail -f does, touches the store
// only for the chunks before the tail.
func TestReadAtTailFromMemory(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	mustAppend(t, l, evsAt(0, 3*ChunkEvents+100, nil))
	l = openLog(t, sys)
	loads := l.Loads()
	p := make([]byte, 4096)
	for range 10 {
		mustAppend(t, l, evsAt(0, 3, nil))
		if _, err := l.ReadAt(t.Context(), p, l.Size()-int64(len(p))); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.Loads() - loads; got != 0 {
		t.Errorf("got %d loads reading the tail, want 0", got)
	}
	// A whole read loads each earlier chunk once.
	readAll(t, l, 4096)
	if got := l.Loads() - loads; got != 3 {
		t.Errorf("got %d loads reading the stream of 4 chunks, want 3", got)
	}
}
