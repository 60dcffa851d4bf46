package progress

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/syncbuf"
)

// TestCounterPlainLines checks the lines where no terminal is: none for
// work quicker than Every, else one per period and a last one.
func TestCounterPlainLines(t *testing.T) {
	var quick bytes.Buffer
	p := New(&quick, "import", 3, Options{Every: time.Hour})
	p.Add(3)
	p.Done()
	if quick.Len() != 0 {
		t.Errorf("quick work printed %q; want nothing", quick.String())
	}

	var slow bytes.Buffer
	p = New(&slow, "import", 2500, Options{})
	p.Add(1000)
	p.Add(1500)
	p.Done()
	lines := strings.Split(strings.TrimSpace(slow.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "import: 1,000 of 2,500 (40%)") ||
		!strings.HasPrefix(lines[1], "import: 2,500 of 2,500 (100%)") || !strings.HasPrefix(lines[2], "import: 2,500 of 2,500 done in") {
		t.Errorf("lines:\n%s\nwant 1,000 of 2,500 (40%%), 2,500 of 2,500 (100%%), then done", slow.String())
	}
	if strings.Contains(slow.String(), "\r") || strings.Contains(slow.String(), "\x1b") {
		t.Errorf("plain lines hold terminal controls: %q", slow.String())
	}
}

// TestCounterBarOnTerminal checks that a terminal gets the library's bar
// (redrawn in place) ending at 100%, and a newline after it.
func TestCounterBarOnTerminal(t *testing.T) {
	var out bytes.Buffer
	p := New(&out, "export", 10, Options{Terminal: true})
	for range 10 {
		p.Add(1)
	}
	p.Done()
	s := out.String()
	if !strings.Contains(s, "\r") || !strings.Contains(s, "export") || !strings.Contains(s, "100%") || !strings.HasSuffix(s, "\n") {
		t.Errorf("terminal output %q; want a bar redrawn with \\r, named export, at 100%%, then a newline", s)
	}
}

// TestFollow checks how a large flush is followed: on a terminal a
// spinner named after the flush, cleared at the end; elsewhere a log line
// every Options.Every; the log names the start and the end in both.
func TestFollow(t *testing.T) {
	for _, tty := range []bool{true, false} {
		t.Run(fmt.Sprintf("tty=%v", tty), func(t *testing.T) {
			var logBuf, term syncbuf.Buffer
			log := slog.New(slog.NewTextHandler(&logBuf, nil))
			end := Follow(log, &term, "final", 12345, Options{Every: 20 * time.Millisecond, Terminal: tty})
			// A tick of either kind (which kind it was is checked below).
			await.True(t, "a tick of the follower", 10*time.Second, func() bool {
				return strings.Contains(term.String(), "flush: 12,345 entries") || strings.Contains(logBuf.String(), "flush: still saving")
			})
			end()
			logs := logBuf.String()
			if !strings.Contains(logs, "flush: saving the unflushed changes") || !strings.Contains(logs, "flush done") ||
				!strings.Contains(logs, "entries=12345") {
				t.Errorf("log:\n%s\nwant the start and the end with entries=12345", logs)
			}
			still := strings.Contains(logs, "flush: still saving")
			if tty {
				if !strings.Contains(term.String(), "flush: 12,345 entries") || still {
					t.Errorf("terminal %q, log lines 'still saving' %v; want a spinner named flush: 12,345 entries, and no such lines", term.String(), still)
				}
			} else if !still || term.String() != "" {
				t.Errorf("log:\n%s\nterminal %q; want 'still saving' lines in the log and nothing drawn", logs, term.String())
			}
		})
	}
}
