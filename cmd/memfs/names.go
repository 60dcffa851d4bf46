package main

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memfs/memfs/redact"
)

// showName is how every name memfs prints on its output (ls, log, search,
// import and export reports) appears: as it is when it reads as one plain
// name, quoted by quoteName otherwise. A name is quoted when it is not
// valid UTF-8, holds a character strconv.IsPrint refuses (a control
// character, which could drive the terminal or split a line; a format
// character such as a bidi override; a space other than U+0020), starts
// with a double quote (it would read as a quoted name), or starts or ends
// with a space, or is empty. Keys can hold none of the control characters
// (backend.ValidateKey); names from elsewhere can: a directory being
// imported, a symlink's target, an event logged by an older memfs, the
// name of a writing process.
func showName(name string) string {
	if plainName(name) {
		return name
	}
	return quoteName(name, nil)
}

func plainName(name string) bool {
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

// redactName is name with a secret in it redacted, by red or, for a
// command without a redactor of its own, by the default rules.
func redactName(name string, red *redact.Redactor) string {
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
