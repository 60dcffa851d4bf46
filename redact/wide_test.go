package redact

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// encode returns s in enc: "utf-16le", "utf-16be", "utf-32le" or
// "utf-32be", with a byte-order mark when bom is set.
func encode(t *testing.T, s, enc string, bom bool) []byte {
	t.Helper()
	var order interface {
		binary.ByteOrder
		binary.AppendByteOrder
	} = binary.LittleEndian
	if strings.HasSuffix(enc, "be") {
		order = binary.BigEndian
	}
	var out []byte
	if strings.HasPrefix(enc, "utf-16") {
		units := utf16.Encode([]rune(s))
		if bom {
			units = append([]uint16{0xfeff}, units...)
		}
		for _, u := range units {
			out = order.AppendUint16(out, u)
		}
		return out
	}
	rs := []rune(s)
	if bom {
		rs = append([]rune{0xfeff}, rs...)
	}
	for _, r := range rs {
		out = order.AppendUint32(out, uint32(r))
	}
	return out
}

// decode is encode's inverse (the byte-order mark dropped).
func decode(t *testing.T, b []byte, enc string) string {
	t.Helper()
	var order interface {
		binary.ByteOrder
		binary.AppendByteOrder
	} = binary.LittleEndian
	if strings.HasSuffix(enc, "be") {
		order = binary.BigEndian
	}
	var rs []rune
	if strings.HasPrefix(enc, "utf-16") {
		var units []uint16
		for i := 0; i+1 < len(b); i += 2 {
			units = append(units, order.Uint16(b[i:]))
		}
		rs = utf16.Decode(units)
	} else {
		for i := 0; i+3 < len(b); i += 4 {
			rs = append(rs, rune(order.Uint32(b[i:])))
		}
	}
	return strings.TrimPrefix(string(rs), "\ufeff")
}

var wideEncodings = []string{"utf-16le", "utf-16be", "utf-32le", "utf-32be"}

// Text in UTF-16 or UTF-32, with a byte-order mark or without (the NUL
// pattern of ASCII text), is scanned as the text it is: each secret is
// masked in place, code unit by code unit, at the same length, by Mask
// and by Redact alike (a marker would break the encoding); text around
// it, non-ASCII and surrogate pairs included, is left as it was.
func TestWideTextIsMaskedInPlace(t *testing.T) {
	r := newT(t, Config{})
	const secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9"
	text := "# Notes, caf\u00e9 \u6f22\u5b57 \U0001F600\nstripe.api_key = \"" + secret + "\"\nthe end\n"
	want := strings.Replace(text, secret, strings.Repeat("*", len(secret)), 1)
	for _, enc := range wideEncodings {
		for _, bom := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s bom %v", enc, bom), func(t *testing.T) {
				in := encode(t, text, enc, bom)
				orig := bytes.Clone(in)
				for name, fn := range map[string]func(string, []byte) ([]byte, []Finding){"Mask": r.Mask, "Redact": r.Redact} {
					out, findings := fn("memory/notes.txt", in)
					if !bytes.Equal(in, orig) {
						t.Fatalf("%s changed its input", name)
					}
					if len(out) != len(in) {
						t.Fatalf("%s: length %d, want %d", name, len(out), len(in))
					}
					if got := decode(t, out, enc); got != want {
						t.Errorf("%s: got %q, want %q", name, got, want)
					}
					if len(findings) != 1 || findings[0].RuleID != "stripe-secret-key" {
						t.Fatalf("%s: findings %v, want one stripe-secret-key", name, findings)
					}
					// The finding's bytes are the secret's code units.
					if got := decode(t, orig[findings[0].Start:findings[0].End], enc); got != secret {
						t.Errorf("%s: the finding's bytes %d-%d hold %q, want the secret", name, findings[0].Start, findings[0].End, got)
					}
					if again, more := r.Mask("memory/notes.txt", out); !bytes.Equal(again, out) || len(more) != 0 {
						t.Errorf("%s: masking again changes it: %v", name, more)
					}
				}
			})
		}
	}
}

// Binary values that only look a little like wide text, and wide text
// without secrets, are left as they are.
func TestWideTextLookAlikes(t *testing.T) {
	r := newT(t, Config{})
	const secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9"
	for _, tt := range []struct {
		name string
		in   []byte
	}{
		{"clean utf-16le", encode(t, "nothing secret here\n", "utf-16le", true)},
		{"clean utf-32be", encode(t, "nothing secret here\n", "utf-32be", false)},
		{"the secret's bytes spread over a binary record", func() []byte {
			var b []byte
			for i := range len(secret) {
				b = append(b, secret[i], 0, 0xff, 0x13) // no encoding's units
			}
			return b
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, findings := r.Mask("k", tt.in)
			if len(findings) != 0 || !bytes.Equal(out, tt.in) {
				t.Errorf("findings %v; changed %v", findings, !bytes.Equal(out, tt.in))
			}
		})
	}
}

// The golden note, in UTF-16LE with a byte-order mark: masked in place,
// shown decoded.
func TestGoldenUTF16(t *testing.T) {
	r := newT(t, Config{})
	in, err := os.ReadFile(filepath.Join("testdata", "note.md"))
	if err != nil {
		t.Fatal(err)
	}
	wide := encode(t, string(in), "utf-16le", true)
	out, findings := r.Mask("memory/note.md", wide)
	if len(out) != len(wide) {
		t.Fatalf("length %d, want %d", len(out), len(wide))
	}
	var got bytes.Buffer
	got.WriteString(decode(t, out, "utf-16le"))
	got.WriteString("\n--- findings ---\n")
	for _, f := range findings {
		fmt.Fprintln(&got, f)
	}
	golden := filepath.Join("testdata", "note.utf16le.golden")
	if *update {
		os.WriteFile(golden, got.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("masked note differs from %s (run with -update after checking):\n%s", golden, got.String())
	}
}
