// Package flagrule checks a numeric or duration command-line flag against
// its range before a command does any work: a Rule says what one flag
// accepts, and its error names the command, the flag, the value as given
// and what is accepted.
package flagrule

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Rule is what one numeric or duration flag accepts: a number from Min to
// Max (durations in nanoseconds; never NaN or an infinity), said in words
// by Want. A flag of text that holds a number is parsed first.
type Rule struct {
	Name     string
	Min, Max float64
	Want     string
	Zero     bool // 0 is accepted too (it means something else: "never", "not at all")
}

// Check reports whether v, the flag's value, is within the rule.
func (r Rule) Check(command string, v any) error {
	var n float64
	var text string
	switch v := v.(type) {
	case int:
		n, text = float64(v), strconv.Itoa(v)
	case int64:
		n, text = float64(v), strconv.FormatInt(v, 10)
	case uint64:
		n, text = float64(v), strconv.FormatUint(v, 10)
	case float64:
		n, text = v, strconv.FormatFloat(v, 'g', -1, 64)
	case time.Duration:
		n, text = float64(v), v.String()
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			f = math.NaN()
		}
		n, text = f, strconv.Quote(v)
	default:
		return fmt.Errorf("%s: --%s: a flag of type %T has no check", command, r.Name, v)
	}
	if r.Zero && n == 0 {
		return nil
	}
	if math.IsNaN(n) || math.IsInf(n, 0) || n < r.Min || n > r.Max {
		return fmt.Errorf("%s: --%s %s: want %s", command, r.Name, text, r.Want)
	}
	return nil
}
