package devset

import (
	"math"
	"testing"
)

func TestMetrics(t *testing.T) {
	qs := []Question{
		{Q: "a", Want: []string{"k1"}},
		{Q: "b", Want: []string{"k2", "k3"}},
		{Q: "c", Want: []string{"k4"}},
		{Q: "d", Want: []string{"k5"}},
	}
	ranked := [][]string{
		{"k1", "x", "y"},                // rank 1
		{"x", "y", "k3", "k2"},          // first wanted at rank 3
		{"x", "y", "z", "w", "v", "k4"}, // rank 6
		{"x"},                           // absent
	}
	tests := []struct {
		k    int
		want float64
	}{
		{0, 0}, {1, 0.25}, {2, 0.25}, {3, 0.5}, {5, 0.5}, {6, 0.75}, {100, 0.75},
	}
	for _, tt := range tests {
		if got := RecallAt(tt.k, ranked, qs); got != tt.want {
			t.Errorf("RecallAt(%d) = %v, want %v", tt.k, got, tt.want)
		}
	}
	wantMRR := (1 + 1.0/3 + 1.0/6 + 0) / 4
	if got := MRR(ranked, qs); math.Abs(got-wantMRR) > 1e-12 {
		t.Errorf("MRR = %v, want %v", got, wantMRR)
	}

	// A question without a ranking is a miss.
	if got := RecallAt(10, ranked[:1], qs); got != 0.25 {
		t.Errorf("RecallAt with one ranking = %v, want 0.25", got)
	}
	if got := MRR(ranked[:1], qs); got != 0.25 {
		t.Errorf("MRR with one ranking = %v, want 0.25", got)
	}
	if got := RecallAt(5, nil, nil); got != 0 {
		t.Errorf("RecallAt of no questions = %v, want 0", got)
	}
	if got := MRR(nil, nil); got != 0 {
		t.Errorf("MRR of no questions = %v, want 0", got)
	}
}

func TestOfKind(t *testing.T) {
	qs := []Question{{Q: "a", Kind: KindKeyword}, {Q: "b", Kind: KindParaphrase}, {Q: "c", Kind: KindKeyword}}
	got := OfKind(qs, KindKeyword)
	if len(got) != 2 || got[0].Q != "a" || got[1].Q != "c" {
		t.Errorf("OfKind = %+v, want a and c", got)
	}
}
