package devset

import "slices"

// RecallAt returns the share of questions that have at least one wanted
// key among the first k keys of their ranking: ranked[i] is the ranking
// (best first) returned for qs[i], and a question without a ranking
// (i >= len(ranked)) counts as a miss. A question with two wanted notes
// counts once, as found, when either is in its top k. It returns 0 for no
// questions or k < 1.
func RecallAt(k int, ranked [][]string, qs []Question) float64 {
	if len(qs) == 0 || k < 1 {
		return 0
	}
	hits := 0
	for i, q := range qs {
		if r := firstWanted(rankingOf(ranked, i), q.Want); r > 0 && r <= k {
			hits++
		}
	}
	return float64(hits) / float64(len(qs))
}

// MRR returns the mean reciprocal rank over qs: for each question 1/r,
// where r is the 1-based rank of the first wanted key in ranked[i], or 0
// when no wanted key is in the ranking (or there is no ranking). It
// returns 0 for no questions.
func MRR(ranked [][]string, qs []Question) float64 {
	if len(qs) == 0 {
		return 0
	}
	sum := 0.0
	for i, q := range qs {
		if r := firstWanted(rankingOf(ranked, i), q.Want); r > 0 {
			sum += 1 / float64(r)
		}
	}
	return sum / float64(len(qs))
}

// rankingOf returns ranked[i], or nil past its end.
func rankingOf(ranked [][]string, i int) []string {
	if i < len(ranked) {
		return ranked[i]
	}
	return nil
}

// firstWanted returns the 1-based rank of the first key of ranking that is
// in want, or 0 when none is.
func firstWanted(ranking, want []string) int {
	for i, key := range ranking {
		if slices.Contains(want, key) {
			return i + 1
		}
	}
	return 0
}
