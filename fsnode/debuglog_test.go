package fsnode

import (
	"strings"
	"testing"

	"github.com/memfs/memfs/redact"
)

func TestSanitizeDebug(t *testing.T) {
	red, err := redact.New(redact.Config{Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	tok := "ghp_" + "R8dM2qLx7VbN4tKc9WzP3sHy6FjA1uEo5GiD"
	for _, tc := range []struct{ in, want string }{
		{`rx 12: WRITE n5 {Fh 1 off 0 sz 8 L 0 RDWR}  "AKIATAHI"... 20b p42`,
			`rx 12: WRITE n5 {Fh 1 off 0 sz 8 L 0 RDWR}  <data> 20b p42`},
		{`rx 13: SETXATTR n5 {sz 5 f0} "user.note" "hello" 5b p42`,
			`rx 13: SETXATTR n5 {sz 5 f0} "user.note" <data> 5b p42`},
		{`tx 14:     OK, 1024b data "AKIATAHI"...`, `tx 14:     OK, 1024b data <data>`},
		{`rx 15: LOOKUP n1  "` + tok + `.md"  p42`, `rx 15: LOOKUP n1  "[REDACTED:github-token].md"  p42`},
		{`rx 16: RENAME n1 {n1} "a.md" "b.md" p42`, `rx 16: RENAME n1 {n1} "a.md" "b.md" p42`},
		{`rx 17: LOOKUP n1 "plain.md" p42`, `rx 17: LOOKUP n1 "plain.md" p42`},
	} {
		got := sanitizeDebug(tc.in, func(name string) string {
			if out, f := red.Redact("", []byte(name)); len(f) > 0 {
				return string(out)
			}
			return name
		})
		if strings.Contains(got, "AKIATAHI") || strings.Contains(got, "hello") || strings.Contains(got, tok[:12]) {
			t.Errorf("sanitizeDebug(%q) = %q: a value or secret survived", tc.in, got)
		}
		if got != tc.want {
			t.Errorf("sanitizeDebug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
