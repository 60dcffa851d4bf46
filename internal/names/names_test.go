package names

import "testing"

func TestShow(t *testing.T) {
	for name, want := range map[string]string{
		"memory/a.md":          "memory/a.md",
		"meeting notes.md":     "meeting notes.md",
		"日本/メモ.md":             "日本/メモ.md",
		"new\nline":            `"new\nline"`,
		"esc\x1b[2J":           `"esc\x1b[2J"`,
		"bel\a":                `"bel\a"`,
		"del\x7f":              `"del\x7f"`,
		"c1\u009b31m":          `"c1\u009b31m"`,
		"bidi\u202eevil":       `"bidi\u202eevil"`,
		"nbsp\u00a0x":          `"nbsp\u00a0x"`,
		"bad\xffutf8":          `"bad\xffutf8"`,
		`"quoted"`:             `"\"quoted\""`,
		" lead":                `" lead"`,
		"trail ":               `"trail "`,
		"":                     `""`,
		"a -> b is a filename": "a -> b is a filename",
	} {
		if got := Show(name); got != want {
			t.Errorf("Show(%q) = %s, want %s", name, got, want)
		}
	}
}
