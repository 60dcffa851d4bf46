// Package names prints names found in a store (keys, paths, symlink
// targets, process names) so that a terminal shows them as they are and
// nothing else: a plain name as it is, any other one quoted, a secret in
// it redacted. The command line and the search answers print through it.
//
// # Concurrency
//
// The functions are stateless and safe for concurrent use.
package names

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memfs/memfs/redact"
)

// Show is how every name memfs prints on its output (ls, log, search,
// import and export reports) appears: as it is when it reads as one plain
// name, quoted by Quote otherwise. A name is quoted when it is not
// valid UTF-8, holds a character strconv.IsPrint refuses (a control
// character, which could drive the terminal or split a line; a format
// character such as a bidi override; a space other than U+0020), starts
// with a double quote (it would read as a quoted name), or starts or ends
// with a space, or is empty. Keys can hold none of the control characters
// (backend.ValidateKey); names from elsewhere can: a directory being
// imported, a symlink's target, an event logged by an older memfs, the
// name of a writing process.
func Show(name string) string {
	if plain(name) {
		return name
	}
	return Quote(name, nil)
}

func plain(name string) bool {
	if name == "" || name[0] == '"' || strings.HasPrefix(name, " ") || strings.HasSuffix(name, " ") || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// Quote quotes a name found in a store for printing: invalid bytes and
// control characters escaped, a secret in it redacted (Redact). Printed
// output goes through Show; a log line takes Redact, which the log
// handler quotes.
func Quote(name string, red *redact.Redactor) string {
	return strconv.Quote(Redact(name, red))
}

// Redact is name with a secret in it redacted, by red or, for a caller
// without a redactor of its own, by the default rules.
func Redact(name string, red *redact.Redactor) string {
	if red == nil {
		red, _ = redact.New(redact.Config{})
	}
	if red != nil {
		if r, f := red.Redact(name, []byte(name)); len(f) > 0 {
			return string(r)
		}
	}
	return name
}
