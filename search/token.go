package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memfs/memfs/search/internal/porter"
)

// Token is one term of a text and its ordinal position. Tokens that stand
// for the same words (an identifier and its parts) share a position: the
// whole "camelcase" has the position of its first part "camel".
type Token struct {
	Term string
	Pos  int
}

// MaxTermLen is the longest term in bytes; a longer word is cut at a rune
// boundary, the same way in documents and queries, so it still matches.
const MaxTermLen = 64

// Tokenize splits text into terms with their positions, by the rules in
// the package documentation: lower-cased, English words stemmed. Invalid
// UTF-8 separates words.
func Tokenize(text string) []Token {
	toks := make([]Token, 0, len(text)/6) // about one token per word
	scan(text, func(t span) { toks = append(toks, Token{Term: t.term, Pos: t.pos}) })
	return toks
}

// span is a token with the bytes of text it came from.
type span struct {
	term       string
	pos        int
	start, end int // text[start:end] is the source of term
}

// isCJK reports whether r is written without spaces between words, so that
// it is indexed as overlapping bigrams. U+30FC (the long vowel mark, script
// Common) is used inside katakana words.
func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo, the first of them
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 0x30FC
}

// isWord reports whether r belongs to a word of a spaced script.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) && !isCJK(r)
}

func isUpper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsUpper(r)
}

func isLower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.IsLower(r)
}

func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsDigit(r)
}

// decode is utf8.DecodeRuneInString with invalid bytes as U+FFFD of width
// one, which is neither a letter nor a digit.
func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// scan calls emit for every token of text in order of position.
func scan(text string, emit func(span)) {
	pos := 0
	var segs [][2]int // the segments of a compound, reused
	for i := 0; i < len(text); {
		r, n := decode(text, i)
		switch {
		case isCJK(r):
			i, pos = scanCJK(text, i, pos, emit)
		case isWord(r):
			// A compound is segments of word runes joined by single '_'
			// or '-' (snake_case, kebab-case).
			segs = segs[:0]
			start := i
			for {
				j := i
				for j < len(text) {
					if c := text[j]; c < utf8.RuneSelf {
						if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
							j++
							continue
						}
						break
					}
					r, n := decode(text, j)
					if !isWord(r) {
						break
					}
					j += n
				}
				segs = append(segs, [2]int{i, j})
				i = j
				if i+1 < len(text) && (text[i] == '_' || text[i] == '-') {
					if r, _ := decode(text, i+1); isWord(r) {
						i++
						continue
					}
				}
				break
			}
			pos = emitCompound(text, start, i, segs, pos, emit)
		default:
			i += n
		}
	}
}

// scanCJK emits the bigrams of the run of CJK runes at text[i:], or the one
// rune of a run of one, and returns where the run ends and the next position.
func scanCJK(text string, i, pos int, emit func(span)) (int, int) {
	a := i // start of the previous rune
	_, n := decode(text, i)
	b := i + n // start of the current rune
	if b >= len(text) {
		emit(span{term: indexTerm(text[a:b]), pos: pos, start: a, end: b})
		return b, pos + 1
	}
	r, m := decode(text, b)
	if !isCJK(r) {
		emit(span{term: indexTerm(text[a:b]), pos: pos, start: a, end: b})
		return b, pos + 1
	}
	for {
		emit(span{term: indexTerm(text[a : b+m]), pos: pos, start: a, end: b + m})
		pos++
		a, b = b, b+m
		if b >= len(text) {
			return b, pos
		}
		r, m = decode(text, b)
		if !isCJK(r) {
			return b, pos
		}
	}
}

// emitCompound emits the tokens of text[start:end], made of segs: the whole
// compound when it has several segments, and for each segment its whole
// when it has several camel-case parts, then the parts.
func emitCompound(text string, start, end int, segs [][2]int, pos int, emit func(span)) int {
	if len(segs) > 1 {
		emit(span{term: indexTerm(text[start:end]), pos: pos, start: start, end: end})
	}
	var buf [8]int
	for _, s := range segs {
		seg := text[s[0]:s[1]]
		parts := camelParts(seg, buf[:0])
		if len(parts) > 1 {
			emit(span{term: indexTerm(seg), pos: pos, start: s[0], end: s[1]})
		}
		prev := 0
		for _, cut := range parts {
			emit(span{term: indexTerm(seg[prev:cut]), pos: pos, start: s[0] + prev, end: s[0] + cut})
			pos++
			prev = cut
		}
	}
	return pos
}

// camelParts appends to cuts the byte offsets where the parts of a word
// end: "camelCase" -> [5 9], "HTTPServer" -> [4 10], "utf8Decode" -> [4 10].
// A part starts at an upper-case letter after a lower-case letter or a
// digit, and at the last upper-case letter of a run followed by a
// lower-case one ("HTTPServer"), except before a final plural "s" ("URLs",
// "IDs" stay whole).
func camelParts(w string, cuts []int) []int {
	if !hasUpper(w) {
		return append(cuts, len(w))
	}
	var prev, prev2 rune // the runes before r; 0 at the start
	prevAt := 0          // where prev starts
	for i := 0; i < len(w); {
		r, n := decode(w, i)
		if isUpper(r) && (isLower(prev) || isDigit(prev)) {
			cuts = append(cuts, i)
		} else if isLower(r) && isUpper(prev) && isUpper(prev2) && !(r == 's' && i+n == len(w)) {
			cuts = append(cuts, prevAt)
		}
		if r < utf8.RuneSelf || !unicode.IsMark(r) { // a mark belongs to the letter before it
			prev2, prev, prevAt = prev, r, i
		}
		i += n
	}
	return append(cuts, len(w))
}

// hasUpper reports whether w may have an upper-case letter: it is false
// for lower-case ASCII and digits, the common case.
func hasUpper(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// indexTerm returns the term of the word s: in lower case, cut to
// MaxTermLen bytes at a rune boundary, and stemmed (porter.Stem) when it
// is then a word of ASCII letters only. Documents and queries both get
// their terms here, so "payments" finds "payment" and "paying" finds
// "pay". A compound ("snake_case"), a word with a digit and one with a
// letter outside ASCII are left as they are (a compound's parts are
// terms of their own, stemmed when they are ASCII letters).
func indexTerm(s string) string {
	s = strings.ToLower(s)
	if len(s) > MaxTermLen {
		cut := MaxTermLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return porter.Stem(s)
}
