package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// common is the head of an English word list; the generator's vocabulary
// adds made-up words after it, drawn with a Zipf law as real text is.
var common = strings.Fields(`the of and to a in is it you that he was for on are with as
I his they be at one have this from or had by not word but what some we can out other were
all there when up use your how said an each she which do their time if will way about many
then them write would like so these her long make thing see him two has look more day could
go come did number sound no most people my over know water than call first who may down side
been now find any new work part take get place made live where after back little only round
man year came show every good me give our under name very through just form sentence great
think say help low line differ turn cause much mean before move right boy old too same tell
does set three want air well also play small end put home read hand port large spell add even
land here must big high such follow act why ask men change went light kind off need house
picture try us again animal point mother world near build self earth father head stand own
page should country found answer school grow study still learn plant cover food sun four
between state keep eye never last let thought city tree cross farm hard start might story saw
far sea draw left late run while press close night real life few north deploy plan server
cache index query agent memory note skill review build test release bug fix merge branch`)

var syllables = strings.Fields("ka ri to mo na le sa vi po de lu ne ra ti co ma be su fo ga hi ze pa wu")

// gen makes deterministic English-like notes with code identifiers.
type gen struct {
	rng   *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

func newGen(seed uint64) *gen {
	g := &gen{rng: rand.New(rand.NewPCG(seed, 0x5ea4c4))}
	vr := rand.New(rand.NewPCG(1, 2)) // the vocabulary is the same for every seed
	g.vocab = slices.Clone(common)
	seen := make(map[string]bool)
	for _, w := range g.vocab {
		seen[w] = true
	}
	for len(g.vocab) < 20000 {
		var sb strings.Builder
		for range 2 + vr.IntN(3) {
			sb.WriteString(syllables[vr.IntN(len(syllables))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			g.vocab = append(g.vocab, w)
		}
	}
	g.zipf = rand.NewZipf(g.rng, 1.1, 2, uint64(len(g.vocab)-1))
	return g
}

func (g *gen) word() string { return g.vocab[g.zipf.Uint64()] }

// ident returns a code identifier made of two or three words.
func (g *gen) ident() string {
	parts := []string{g.word(), g.word()}
	if g.rng.IntN(3) == 0 {
		parts = append(parts, g.word())
	}
	switch g.rng.IntN(4) {
	case 0: // camelCase
		for i := 1; i < len(parts); i++ {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		return strings.Join(parts, "")
	case 1:
		return strings.Join(parts, "_")
	case 2:
		return strings.Join(parts, "-")
	default:
		return strings.Join(parts, "/") + ".go"
	}
}

// note returns about size bytes of sentences.
func (g *gen) note(size int) []byte {
	var b bytes.Buffer
	b.WriteString("# ")
	b.WriteString(g.word() + " " + g.word() + "\n\n")
	for b.Len() < size {
		n := 6 + g.rng.IntN(12)
		for i := range n {
			w := g.word()
			if g.rng.IntN(12) == 0 {
				w = g.ident()
			} else if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			if i < n-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
		if g.rng.IntN(5) == 0 {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// notes returns n notes of 500 B to 2 KiB, keyed memory/dNN/nNNNNN.md.
func (g *gen) notes(n int) (keys []string, values [][]byte) {
	for i := range n {
		keys = append(keys, fmt.Sprintf("memory/d%02d/n%06d.md", i%37, i))
		values = append(values, g.note(500+g.rng.IntN(1548)))
	}
	return keys, values
}

// queries returns n queries: single words of every frequency, pairs,
// phrases and identifiers.
func (g *gen) queries(n int) []string {
	var qs []string
	for i := range n {
		switch i % 4 {
		case 0:
			qs = append(qs, g.word())
		case 1:
			qs = append(qs, g.word()+" "+g.word())
		case 2:
			qs = append(qs, g.vocab[g.rng.IntN(len(g.vocab))]+" "+g.word()+" "+g.word())
		default:
			qs = append(qs, g.ident())
		}
	}
	return qs
}
