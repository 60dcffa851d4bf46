package main

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/internal/mounthelper"
)

// flagRule is what one numeric or duration flag accepts: a number from min
// to max (durations in nanoseconds; never NaN or an infinity), said in
// words by want. A flag of text that holds a number (search
// --importance-min) is parsed first.
type flagRule struct {
	name     string
	min, max float64
	want     string
	zero     bool // 0 is accepted too (it means something else: "never", "not at all")
}

// flagRules returns the rules of a command's numeric and duration flags
// (TestEveryNumericFlagHasARule keeps the table complete). Each rule says
// what 0 means where 0 is accepted; the flag's Usage says it too.
func flagRules(command string) []flagRule {
	inf := math.Inf(1)
	switch command {
	case "mount":
		return []flagRule{
			{"max-file-size", 1, inf, "a size in bytes of at least 1 (there is no unlimited size: give a large one)", false},
			{"flush-interval", float64(memfs.MinFlushInterval), inf, "0 (flush only on fsync and unmount) or a duration of at least " + memfs.MinFlushInterval.String(), true},
			// The kernel keeps these in jiffies (1 to 10 ms), rounding up:
			// less than 1ms is not a shorter cache, only a surprising one.
			{"attr-timeout", float64(time.Millisecond), inf, "0 (the kernel caches no attribute) or a duration of at least 1ms", true},
			{"entry-timeout", float64(time.Millisecond), inf, "0 (the kernel caches no name) or a duration of at least 1ms", true},
			{"embed-wait", float64(time.Millisecond), inf, "0 (the default, 1s) or a duration of at least 1ms", true},
		}
	case "unmount", "umount-helper":
		return []flagRule{{"timeout", float64(mounthelper.MinWait), inf, "a duration of at least " + mounthelper.MinWait.String() + " such as 30s", false}}
	case "log":
		return []flagRule{
			{"limit", 1, inf, "a number of events of at least 1", false},
			{"before", 1, inf, "a sequence number of at least 1 (events are numbered from 1)", false},
			{"after", 0, inf, "a sequence number of at least 0 (0: from the first event)", false},
		}
	case "ls":
		return []flagRule{{"importance-min", 0, 1, "a number from 0.0 to 1.0", false}}
	case "search":
		return []flagRule{
			{"top-k", 1, inf, "a number of results of at least 1", false},
			{"min-score", 0, inf, "a score of at least 0 (no score is negative)", false},
			{"importance-min", 0, 1, "a number from 0.0 to 1.0", false},
		}
	case "context":
		return []flagRule{
			{"max-chars", 1, inf, "a budget in characters of at least 1", false},
			{"summaries", 0, inf, "a number of summaries of at least 0 (0: none)", false},
			{"at", 1, inf, "an event-log sequence number of at least 1 (events are numbered from 1)", false},
		}
	}
	return nil
}

// checkFlags is every command's Before: it refuses a numeric or duration
// flag out of its range before the command does any work. A flag left at
// its default is not checked (TestFlagDefaultsPass checks the defaults).
func checkFlags(c *cli.Context) error {
	for _, r := range flagRules(c.Command.Name) {
		if !c.IsSet(r.name) {
			continue
		}
		if err := r.check(c.Command.Name, c.Value(r.name)); err != nil {
			return err
		}
	}
	return nil
}

// check reports whether v, a flag's value, is within the rule; the error
// names the command, the flag, the value as given and what is accepted.
func (r flagRule) check(command string, v any) error {
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
		return fmt.Errorf("%s: --%s: a flag of type %T has no check", command, r.name, v)
	}
	if r.zero && n == 0 {
		return nil
	}
	if math.IsNaN(n) || math.IsInf(n, 0) || n < r.min || n > r.max {
		return fmt.Errorf("%s: --%s %s: want %s", command, r.name, text, r.want)
	}
	return nil
}
