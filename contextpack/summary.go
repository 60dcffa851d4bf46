package contextpack

import "encoding/json"

// SummaryLine is the line s takes in SummariesKey: one JSON
// object and a newline.
func SummaryLine(s Summary) ([]byte, error) {
	line, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}
