package redact

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestIsBinary(t *testing.T) {
	for _, tt := range []struct {
		v    []byte
		want bool
	}{
		{nil, false},
		{[]byte("plain text\n"), false},
		{[]byte("a\x00b"), true},
		{append(bytes.Repeat([]byte("x"), 8<<10-1), 0), true},
		{append(bytes.Repeat([]byte("x"), 8<<10), 0), false}, // past the first 8 KiB
		{[]byte("caf\xc3\xa9 \xff\xfe"), false},
	} {
		if got := IsBinary(tt.v); got != tt.want {
			t.Errorf("IsBinary(%.20q... %d bytes) = %v, want %v", tt.v, len(tt.v), got, tt.want)
		}
	}
}

// sqlitePage returns a fake SQLite leaf page (4 KiB) whose one record has
// a TEXT cell holding text.
func sqlitePage(text string) []byte {
	page := make([]byte, 4096)
	page[0] = 0x0d                                     // a table leaf page
	binary.BigEndian.PutUint16(page[3:], 1)            // one cell
	cell := 4096 - 64 - len(text)                      // cells grow down from the end
	binary.BigEndian.PutUint16(page[5:], uint16(cell)) // content area start
	binary.BigEndian.PutUint16(page[8:], uint16(cell)) // the cell pointer
	rec := page[cell:]
	rec[0], rec[1] = byte(len(text)+3), 1    // payload size, rowid
	rec[2], rec[3] = 2, byte(13+2*len(text)) // header size, serial type of a TEXT of len(text)
	copy(rec[4:], text)
	return page
}

// A secret in a binary value is overwritten in place, at the same length;
// nothing else changes, and the input is left alone.
func TestMaskInBinary(t *testing.T) {
	r := newT(t, Config{})
	token := "ghp_Zq8mR2xL7bW4nT0vK5yJ1cH6dF3sP9gA2eU7"
	var pem string
	for _, c := range readCorpus(t, "secrets.txt") {
		if strings.HasPrefix(c.secret, "-----BEGIN RSA PRIVATE KEY-----") {
			pem = c.secret
			break
		}
	}
	for _, tt := range []struct {
		name   string
		value  []byte
		secret string
	}{
		{"token in a sqlite TEXT cell", sqlitePage("GITHUB_TOKEN=" + token), token},
		{"PEM key inside binary", append(append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dtEXt"), pem...), 0, 0, 0xae, 0x42), pem},
		{"stripe key between NULs", []byte("\x00\x01key\x00sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9\x00\x02"), "sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !IsBinary(tt.value) {
				t.Fatal("the value is not binary")
			}
			orig := bytes.Clone(tt.value)
			out, findings := r.Mask("assets/x.db", tt.value)
			if !bytes.Equal(tt.value, orig) {
				t.Fatal("Mask changed its input")
			}
			if len(out) != len(orig) {
				t.Fatalf("length %d, want %d", len(out), len(orig))
			}
			if piece := leaked(out, tt.secret); piece != "" {
				t.Fatalf("%q survives", piece)
			}
			i := bytes.Index(orig, []byte(tt.secret))
			if len(findings) == 0 || findings[0].Start > i || findings[len(findings)-1].End < i+len(tt.secret) {
				t.Fatalf("findings %v do not cover the secret at %d-%d", findings, i, i+len(tt.secret))
			}
			for j := range out {
				masked := false
				for _, f := range findings {
					masked = masked || f.Start <= j && j < f.End
				}
				if masked && out[j] != MaskByte || !masked && out[j] != orig[j] {
					t.Fatalf("byte %d: %q, was %q (findings %v)", j, out[j], orig[j], findings)
				}
			}
			again, more := r.Mask("assets/x.db", out)
			if !bytes.Equal(again, out) || len(more) != 0 {
				t.Errorf("masking is not idempotent: %v", more)
			}
		})
	}
	clean := []byte("\x00\x01\x02 nothing secret here \xff")
	if out, f := r.Mask("k", clean); len(f) != 0 || &out[0] != &clean[0] {
		t.Error("a clean value was copied or changed")
	}
}

// Mask finds what Redact finds.
func TestMaskFindsWhatRedactFinds(t *testing.T) {
	r := newT(t, Config{})
	note, _ := corpusNote(t)
	_, want := r.Redact("k", []byte(note))
	out, got := r.Mask("k", []byte(note))
	if len(got) != len(want) {
		t.Fatalf("%d findings, Redact has %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("finding %v, Redact has %v", got[i], want[i])
		}
	}
	if len(out) != len(note) {
		t.Errorf("length %d, want %d", len(out), len(note))
	}
	if again, more := r.Mask("k", out); !bytes.Equal(again, out) || len(more) != 0 {
		t.Errorf("masking the corpus is not idempotent: %v", more)
	}
}
