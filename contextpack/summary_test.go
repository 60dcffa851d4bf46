package contextpack_test

import (
	"testing"
	"time"

	"github.com/memfs/memfs/contextpack"
)

// A summary is one JSON object on a line of its own, whatever its text
// holds (a newline in the text stays escaped inside the object).
func TestSummaryLine(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	got, err := contextpack.SummaryLine(contextpack.Summary{Run: "r", Step: "s1", Time: at, Text: "did\nthis"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run":"r","step":"s1","time":"2026-11-01T00:00:00Z","text":"did\nthis"}` + "\n"
	if string(got) != want {
		t.Errorf("SummaryLine = %q, want %q", got, want)
	}
}
