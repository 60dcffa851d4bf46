package flagrule

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	r := Rule{Name: "top-k", Min: 1, Max: math.Inf(1), Want: "at least 1"}
	for _, v := range []any{1, int64(2), uint64(3), 4.0, time.Second, "5"} {
		if err := r.Check("search", v); err != nil {
			t.Errorf("Check(%v): %v", v, err)
		}
	}
	for _, v := range []any{0, -1.5, math.NaN(), math.Inf(1), "x", "NaN"} {
		err := r.Check("search", v)
		if err == nil || !strings.HasPrefix(err.Error(), "search: --top-k ") || !strings.HasSuffix(err.Error(), "want at least 1") {
			t.Errorf("Check(%v) = %v, want a refusal naming the command, flag and range", v, err)
		}
	}
	if err := (Rule{Name: "z", Min: 1, Max: 2, Zero: true}).Check("c", 0); err != nil {
		t.Errorf("Zero rule refused 0: %v", err)
	}
	if err := r.Check("c", struct{}{}); err == nil {
		t.Error("a value of no known type passed")
	}
}

func TestCheckOptions(t *testing.T) {
	if err := CheckOptions("mount", []string{"mount", "--flush-interval=1ms", "/m"}); err == nil || !strings.HasPrefix(err.Error(), "option flush_interval=1ms: want ") {
		t.Errorf("CheckOptions(flush-interval=1ms) = %v", err)
	}
	if err := CheckOptions("mount", []string{"mount", "--store", "dir:/s", "--flush-interval=0", "--xattrs=false", "--max-file-size=10", "/m"}); err != nil {
		t.Errorf("CheckOptions of good options: %v", err)
	}
}
