package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16LE is s in UTF-16LE with a byte-order mark, as Windows tools write
// text.
func utf16LE(s string) []byte {
	out := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		out = binary.LittleEndian.AppendUint16(out, u)
	}
	return out
}

// A token in a UTF-16 text file written through the mount reaches the
// store masked in place: the file keeps its size and stays UTF-16 text.
func TestUTF16SecretIsMaskedThroughTheMount(t *testing.T) {
	t.Parallel()
	store, mnt := t.TempDir(), t.TempDir()
	startMount(t, "dir:"+store, mnt, nil)
	const token = "sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9"
	text := "stripe.api_key = \"" + token + "\"\r\n"
	in := utf16LE(text)
	p := filepath.Join(mnt, "memory", "keys-utf16.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil { // the flush
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(store, "memory", "keys-utf16.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := utf16LE(strings.Replace(text, token, strings.Repeat("*", len(token)), 1))
	if !bytes.Equal(got, want) {
		t.Errorf("the store's file:\n got %q\nwant %q (masked in place, UTF-16LE)", got, want)
	}
	if bytes.Contains(got, utf16LE(token)[2:]) {
		t.Error("the store's file holds the token")
	}
}
