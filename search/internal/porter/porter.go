// Package porter is M. F. Porter's suffix-stripping algorithm for English
// ("An algorithm for suffix stripping", Program 14(3), 1980, pp. 130-137),
// written here from the paper's rules: the stemmer of the search index's
// tokenizer, which stems the words of documents and queries alike so that
// "connected", "connecting", "connection" and "connections" all meet as
// "connect".
//
// # The algorithm
//
// A letter is a vowel (a, e, i, o, u, and y after a consonant) or a
// consonant (the rest, y at the start or after a vowel). Any word is
// [C](VC)^m[V] in runs of consonants C and vowels V; m is its measure.
// Five steps strip suffixes in turn, each rule "(condition) S1 -> S2"
// replacing the suffix S1 by S2 when the condition holds for the stem
// (the word without S1). In a step, the rule with the longest S1 the word
// ends with is the only one tried: if its condition fails, the step
// does nothing. The conditions are m, *v* (the stem has a vowel), *d (it
// ends with a double consonant), *o (it ends consonant-vowel-consonant,
// the last not w, x or y) and *S (it ends with S).
//
//   - 1a: plurals (sses -> ss, ies -> i, ss -> ss, s -> nothing).
//   - 1b: -eed (m>0: -> ee), -ed and -ing (*v*: removed; then at, bl, iz
//     get an e, a double consonant but ll, ss, zz loses one, and a stem
//     with m=1 and *o gets an e: hopping -> hop, hoping -> hope).
//   - 1c: y -> i when the stem has a vowel (happy -> happi).
//   - 2 and 3: double and single suffixes to a shorter one, m>0
//     (relational -> relate, hopefulness -> hopeful -> hope).
//   - 4: -al, -ance, ..., -ize removed when m>1 (-ion after s or t).
//   - 5: a final e removed when m>1, or m=1 and not *o; -ll -> -l when m>1.
//
// This is the published algorithm with none of the departures of Porter's
// own later C code (which leaves words of one or two letters alone and
// has -logi -> -log and -bli -> -ble). It agrees with the Snowball
// library's "porter" (libstemmer) on the 596 words of the tests and on
// 419,688 strings compared once, but for "s" (Stem keeps it) and
// one class: the paper removes one letter of any double consonant but l,
// s and z in step 1b, Snowball only of bb, dd, ff, gg, mm, nn, pp, rr and
// tt, so "revving" and "trekking" stem to "rev" and "trek" here, "revv"
// and "trekk" there.
package porter

// Stem returns the stem of word, a word of lower-case ASCII letters; any
// other word (empty, or with another byte) is returned as it is, and so
// is a word the rules would strip to nothing (only "s"). The stem is
// never longer than word, and is word's own prefix (no allocation) when
// the rules only removed letters.
func Stem(word string) string {
	var buf [64]byte
	var b []byte
	if len(word) <= len(buf) {
		b = buf[:len(word)]
	} else {
		b = make([]byte, len(word))
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if c < 'a' || c > 'z' {
			return word
		}
		b[i] = c
	}
	if len(b) == 0 {
		return word
	}
	s := stemmer{b: b}
	s.step1a()
	if len(s.b) == 0 {
		return word
	}
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5a()
	s.step5b()
	if n := len(s.b); word[:n] == string(s.b) {
		return word[:n]
	}
	return string(s.b)
}

// stemmer holds a word as the steps strip it, in the array it started in.
type stemmer struct {
	b []byte
}

// consonant reports whether b[i] is a consonant: not a, e, i, o or u, and
// not a y after a consonant.
func (s *stemmer) consonant(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.consonant(i-1)
	}
	return true
}

// measure returns m of b[:n]: the number of vowel runs followed by a
// consonant run, after any leading consonants.
func (s *stemmer) measure(n int) int {
	i := 0
	for i < n && s.consonant(i) {
		i++
	}
	m := 0
	for {
		for i < n && !s.consonant(i) {
			i++
		}
		if i == n {
			return m
		}
		for i < n && s.consonant(i) {
			i++
		}
		m++
	}
}

// hasVowel is *v* of b[:n].
func (s *stemmer) hasVowel(n int) bool {
	for i := range n {
		if !s.consonant(i) {
			return true
		}
	}
	return false
}

// doubleConsonant is *d of b[:n]: two equal letters, both consonants
// (so never "yy": of two y's in a row, one is a vowel).
func (s *stemmer) doubleConsonant(n int) bool {
	return n >= 2 && s.b[n-1] == s.b[n-2] && s.consonant(n-1) && s.consonant(n-2)
}

// cvc is *o of b[:n]: consonant, vowel, consonant at its end, the last
// not w, x or y.
func (s *stemmer) cvc(n int) bool {
	if n < 3 || !s.consonant(n-1) || s.consonant(n-2) || !s.consonant(n-3) {
		return false
	}
	c := s.b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

// endsWith reports whether the word ends with suffix. It compares from
// the end, where most suffixes fail at once: the rules' tables are
// tried whole, and this is most of the stemmer's time.
func (s *stemmer) endsWith(suffix string) bool {
	n := len(s.b) - len(suffix)
	if n < 0 {
		return false
	}
	for i := len(suffix) - 1; i >= 0; i-- {
		if s.b[n+i] != suffix[i] {
			return false
		}
	}
	return true
}

// rule is "S1 -> S2" of a step whose rules share one condition.
type rule struct{ s1, s2 string }

// rules are a step's rules by the last letter of their S1 ('a' first),
// so that a word is tried only against those ending as it does.
type rules [26][]rule

// longest returns the rule of rs with the longest S1 the word ends with,
// and the length of the stem before it.
func (s *stemmer) longest(rs *rules) (r rule, stem int, ok bool) {
	if len(s.b) == 0 {
		return r, 0, false
	}
	for _, x := range rs[s.b[len(s.b)-1]-'a'] {
		if len(x.s1) > len(r.s1) && s.endsWith(x.s1) {
			r, ok = x, true
		}
	}
	return r, len(s.b) - len(r.s1), ok
}

// set replaces b[stem:] with s2. No rule's S2 is longer than its S1, and
// the e step 1b adds follows a removed -ed or -ing, so b's array has the
// room (append would make the array escape to the heap).
func (s *stemmer) set(stem int, s2 string) {
	s.b = s.b[:stem+len(s2)]
	copy(s.b[stem:], s2)
}

var step1aRules = rules{
	's' - 'a': {{"sses", "ss"}, {"ies", "i"}, {"ss", "ss"}, {"s", ""}},
}

func (s *stemmer) step1a() {
	if r, stem, ok := s.longest(&step1aRules); ok {
		s.set(stem, r.s2)
	}
}

func (s *stemmer) step1b() {
	var stem int
	switch {
	case s.endsWith("eed"): // the longest rule: -ed is not tried after it
		if stem = len(s.b) - 3; s.measure(stem) > 0 {
			s.set(stem, "ee")
		}
		return
	case s.endsWith("ed"):
		stem = len(s.b) - 2
	case s.endsWith("ing"):
		stem = len(s.b) - 3
	default:
		return
	}
	if !s.hasVowel(stem) {
		return
	}
	s.b = s.b[:stem]
	n := len(s.b)
	switch {
	case s.endsWith("at"), s.endsWith("bl"), s.endsWith("iz"):
		s.set(n, "e")
	case s.doubleConsonant(n):
		if c := s.b[n-1]; c != 'l' && c != 's' && c != 'z' {
			s.b = s.b[:n-1]
		}
	case s.measure(n) == 1 && s.cvc(n):
		s.set(n, "e")
	}
}

func (s *stemmer) step1c() {
	if n := len(s.b) - 1; s.endsWith("y") && s.hasVowel(n) {
		s.b[n] = 'i'
	}
}

// step2Rules are the paper's 20 rules of step 2.
var step2Rules = rules{
	'i' - 'a': {{"enci", "ence"}, {"anci", "ance"}, {"abli", "able"}, {"alli", "al"}, {"entli", "ent"},
		{"eli", "e"}, {"ousli", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}},
	'l' - 'a': {{"ational", "ate"}, {"tional", "tion"}},
	'm' - 'a': {{"alism", "al"}},
	'n' - 'a': {{"ization", "ize"}, {"ation", "ate"}},
	'r' - 'a': {{"izer", "ize"}, {"ator", "ate"}},
	's' - 'a': {{"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}},
}

func (s *stemmer) step2() {
	if r, stem, ok := s.longest(&step2Rules); ok && s.measure(stem) > 0 {
		s.set(stem, r.s2)
	}
}

// step3Rules are the paper's 7 rules of step 3.
var step3Rules = rules{
	'e' - 'a': {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}},
	'i' - 'a': {{"iciti", "ic"}},
	'l' - 'a': {{"ical", "ic"}, {"ful", ""}},
	's' - 'a': {{"ness", ""}},
}

func (s *stemmer) step3() {
	if r, stem, ok := s.longest(&step3Rules); ok && s.measure(stem) > 0 {
		s.set(stem, r.s2)
	}
}

// step4Rules are the paper's 19 rules of step 4, which all remove their
// suffix; "ion" also needs the stem to end with s or t.
var step4Rules = rules{
	'c' - 'a': {{"ic", ""}},
	'e' - 'a': {{"ance", ""}, {"ence", ""}, {"able", ""}, {"ible", ""}, {"ate", ""}, {"ive", ""}, {"ize", ""}},
	'i' - 'a': {{"iti", ""}},
	'l' - 'a': {{"al", ""}},
	'm' - 'a': {{"ism", ""}},
	'n' - 'a': {{"ion", ""}},
	'r' - 'a': {{"er", ""}},
	's' - 'a': {{"ous", ""}},
	't' - 'a': {{"ant", ""}, {"ement", ""}, {"ment", ""}, {"ent", ""}},
	'u' - 'a': {{"ou", ""}},
}

func (s *stemmer) step4() {
	r, stem, ok := s.longest(&step4Rules)
	if !ok || s.measure(stem) <= 1 {
		return
	}
	if r.s1 == "ion" && (stem == 0 || s.b[stem-1] != 's' && s.b[stem-1] != 't') {
		return
	}
	s.set(stem, "")
}

func (s *stemmer) step5a() {
	if !s.endsWith("e") {
		return
	}
	stem := len(s.b) - 1
	if m := s.measure(stem); m > 1 || m == 1 && !s.cvc(stem) {
		s.b = s.b[:stem]
	}
}

func (s *stemmer) step5b() {
	if n := len(s.b); s.endsWith("ll") && s.measure(n) > 1 {
		s.b = s.b[:n-1]
	}
}
