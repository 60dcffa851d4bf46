package fsnode

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
)

// debugWriter takes go-fuse's request log (MountOptions.Debug) and passes
// each line on to the slog logger at debug level without a byte of any
// value or attribute: go-fuse quotes the first 8 bytes of every WRITE,
// SETXATTR, READ and GETXATTR payload ("AKIATAHI"...), which would put a
// secret's prefix in the log. Payloads become their size; file names stay,
// redacted (a name with a secret is refused, but a lookup of one still
// shows it).
type debugWriter struct {
	log *slog.Logger
	red func(name string) string // redacts a name
}

func (w debugWriter) Write(p []byte) (int, error) {
	for line := range bytes.SplitSeq(bytes.TrimRight(p, "\n"), []byte("\n")) {
		w.log.Debug("fuse", "req", sanitizeDebug(string(line), w.red))
	}
	return len(p), nil
}

// sanitizeDebug rewrites one line of go-fuse's request log: every quoted
// string followed by "..." or a byte count, or preceded by "data ", is a
// payload and is dropped; every other quoted string is a name and is
// redacted.
func sanitizeDebug(line string, red func(string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(line, '"')
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		q, err := strconv.QuotedPrefix(line[i:])
		if err != nil {
			// Not a Go-quoted string: drop the rest rather than risk it.
			b.WriteString(line[:i])
			b.WriteString("<unparsed>")
			return b.String()
		}
		before, after := line[:i], line[i+len(q):]
		b.WriteString(before)
		if isPayload(before, after) {
			b.WriteString("<data>")
			after = strings.TrimPrefix(after, "...")
		} else {
			name, _ := strconv.Unquote(q)
			b.WriteString(strconv.Quote(red(name)))
		}
		line = after
	}
}

// isPayload tells a quoted payload from a quoted name by what go-fuse
// prints around it: `"abcdefgh"... 123b`, `"abc" 3b`, `123b data "abc"`.
func isPayload(before, after string) bool {
	if strings.HasSuffix(before, "data ") || strings.HasPrefix(after, "...") {
		return true
	}
	rest := strings.TrimPrefix(after, " ")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return n > 0 && n < len(rest) && rest[n] == 'b' && (n+1 == len(rest) || rest[n+1] == ' ' || rest[n+1] == ',')
}
