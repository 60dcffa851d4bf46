package contextpack

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// SummaryLine is the line s takes in SummariesKey: one JSON
// object and a newline.
func SummaryLine(s Summary) ([]byte, error) {
	line, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// NewSummary is the summary of step of run, now, whose text is words
// joined by spaces: an error when it has none (memfs summary add, memfs
// repo summary).
func NewSummary(run, step string, words []string) (Summary, error) {
	text := strings.Join(words, " ")
	if strings.TrimSpace(text) == "" {
		return Summary{}, errors.New("give the summary TEXT")
	}
	return Summary{Run: run, Step: step, Time: time.Now().UTC(), Text: text}, nil
}
