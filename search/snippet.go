package search

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// snippetWidth is snippet's width when it is given none.
const SnippetWidth = 160

// wordSlack is how far, in runes, snippet moves a cut end to fall between
// words.
const wordSlack = 12

// snippet returns a one-line excerpt of value of about width runes (160
// for width <= 0) around the place that holds the most distinct words of
// q.Text, the first such place on a tie; the start of value when no word
// matches. Runs of white space and control characters become one space,
// invalid UTF-8 becomes U+FFFD, and "…" marks an end that was cut. It does
// not redact: callers use Index.Snippet, which does.
func snippet(value []byte, q Query, width int) string {
	if width <= 0 {
		width = SnippetWidth
	}
	text := string(value)
	p := newPlan(q.Text)
	want := make(map[string]uint64, len(p.terms))
	for i, t := range p.terms {
		want[t] = p.member[i]
		if want[t] == 0 { // beyond maxGroups: still a word to show
			want[t] = 1 << (maxGroups - 1)
		}
	}
	// The matches, with their rune offsets.
	type match struct {
		start, end   int // bytes
		rstart, rend int // runes
		member       uint64
	}
	var ms []match
	if len(want) > 0 {
		lastByte, lastRune := 0, 0
		runeAt := func(off int) int {
			lastRune += utf8.RuneCountInString(text[lastByte:off])
			lastByte = off
			return lastRune
		}
		scan(text, func(t span) {
			m, ok := want[t.term]
			if !ok {
				return
			}
			if n := len(ms); n > 0 && ms[n-1].start == t.start {
				// A whole and its first part: keep the longer.
				ms[n-1].member |= m
				if t.end > ms[n-1].end {
					ms[n-1].end, ms[n-1].rend = t.end, ms[n-1].rstart+utf8.RuneCountInString(text[t.start:t.end])
				}
				return
			}
			rs := runeAt(t.start)
			ms = append(ms, match{t.start, t.end, rs, rs + utf8.RuneCountInString(text[t.start:t.end]), m})
		})
	}
	// The window of width runes starting at a match that covers the most
	// groups.
	best, bestN, bestEnd := -1, 0, 0
	for i := range ms {
		var cover uint64
		end := i
		for j := i; j < len(ms) && ms[j].rend-ms[i].rstart <= width; j++ {
			cover |= ms[j].member
			end = j
		}
		if n := bits.OnesCount64(cover); n > bestN {
			best, bestN, bestEnd = i, n, end
		}
	}
	total := utf8.RuneCountInString(text)
	from := 0 // runes
	if best >= 0 {
		a, z := ms[best].rstart, ms[bestEnd].rend
		from = a - (width-(z-a))/3 // a third of the slack before the match
		from = max(0, min(from, total-width, a))
	}
	to := min(total, from+width)
	startB, endB := runeOffset(text, from), runeOffset(text, to)
	// Move the cut ends to the spaces nearby, but never past a match.
	if from > 0 {
		limit := startB
		if best >= 0 {
			limit = ms[best].start
		}
		for i, n := startB, 0; i < limit && n < wordSlack; n++ {
			r, size := decode(text, i)
			i += size
			if unicode.IsSpace(r) {
				startB = i
				break
			}
		}
	}
	if to < total {
		limit := 0
		if best >= 0 {
			limit = ms[bestEnd].end
		}
		for i, n := endB, 0; i > limit && n < wordSlack; n++ {
			r, size := utf8.DecodeLastRuneInString(text[:i])
			if unicode.IsSpace(r) {
				endB = i - size
				break
			}
			i -= size
		}
	}
	var sb strings.Builder
	if from > 0 {
		sb.WriteString("…")
	}
	space := true // no space at the start
	for i := startB; i < endB; {
		r, size := decode(text, i)
		i += size
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			if !space {
				sb.WriteByte(' ')
				space = true
			}
			continue
		}
		space = false
		sb.WriteRune(r) // utf8.RuneError for an invalid byte: U+FFFD
	}
	out := strings.TrimRight(sb.String(), " ")
	if to < total {
		out += "…"
	}
	return out
}

// runeOffset returns the byte offset of rune n of text, counting an
// invalid byte as one rune as decode does.
func runeOffset(text string, n int) int {
	i := 0
	for ; n > 0 && i < len(text); n-- {
		_, size := decode(text, i)
		i += size
	}
	return i
}
