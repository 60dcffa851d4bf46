package devset

import (
	"strings"
	"unicode"
)

// stopWords are the words ContentWords drops: articles, pronouns,
// auxiliaries, prepositions and question words, which say nothing about
// which note answers a question.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "but": true, "if": true, "then": true,
	"of": true, "to": true, "in": true, "on": true, "at": true, "by": true, "for": true, "with": true,
	"from": true, "into": true, "about": true, "as": true, "than": true, "so": true, "up": true,
	"out": true, "off": true, "over": true, "after": true, "before": true, "again": true,
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "being": true,
	"am": true, "do": true, "doe": true, "does": true, "did": true, "done": true, "have": true,
	"ha": true, "has": true, "had": true, "can": true, "could": true, "should": true, "would": true,
	"will": true, "shall": true, "may": true, "might": true, "must": true,
	"i": true, "me": true, "my": true, "we": true, "u": true, "us": true, "our": true, "you": true,
	"your": true, "it": true, "its": true, "they": true, "them": true, "their": true, "he": true,
	"she": true, "his": true, "her": true, "this": true, "that": true, "these": true, "those": true,
	"there": true, "here": true, "what": true, "which": true, "who": true, "whom": true,
	"whose": true, "when": true, "where": true, "why": true, "how": true, "any": true, "some": true,
	"all": true, "no": true, "not": true, "one": true, "get": true, "s": true, "t": true,
}

// ContentWords returns the distinct content words of text in order of
// first appearance: lower-cased runs of letters and digits, without the
// words of a small stop list, each stemmed crudely by dropping a final
// plural s ("invoices" -> "invoice", but not "ss" as in "access").
func ContentWords(text string) []string {
	var out []string
	seen := map[string]bool{}
	for w := range strings.FieldsFuncSeq(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		w = stem(w)
		if stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// stem drops a final plural s from a word of more than three letters
// that does not end in "ss", "us" or "is".
func stem(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") &&
		!strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
		return w[:len(w)-1]
	}
	return w
}

// Overlap returns the share of the question's content words
// ([ContentWords]) that also occur among the content words of note: 0 when
// the question shares none of its words with the note, 1 when it uses
// only the note's words, and 0 for a question with no content words.
func Overlap(question, note string) float64 {
	qw := ContentWords(question)
	if len(qw) == 0 {
		return 0
	}
	nw := map[string]bool{}
	for _, w := range ContentWords(note) {
		nw[w] = true
	}
	shared := 0
	for _, w := range qw {
		if nw[w] {
			shared++
		}
	}
	return float64(shared) / float64(len(qw))
}
