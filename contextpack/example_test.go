package contextpack_test

import (
	"context"
	"fmt"

	"github.com/memfs/memfs/contextpack"
)

// A pack of two notes and a skill: the skills index first, then the notes
// best first (the query ranks kernel.md above the more important
// style.md). The manifest is beside the pack, not in it.
func ExampleBuild() {
	src := entrySource{
		note("memory/style.md", "Short answers.\n", 0, "0.9"),
		note("memory/kernel.md", "The kernel caches attributes.\n", 0, ""),
		note("skills/fuse/SKILL.md", "---\nname: fuse-debugging\ndescription: Trace FUSE requests.\n---\nbody\n", 0, ""),
	}
	p, err := contextpack.Build(context.Background(), src, contextpack.Options{Query: "kernel cache", MaxChars: 500})
	if err != nil {
		panic(err)
	}
	fmt.Print(p.Text)
	for _, it := range p.Manifest.Included {
		if it.Score == nil {
			fmt.Printf("%s %s\n", it.Kind, it.Key)
			continue
		}
		fmt.Printf("%s %s score %.3f = relevance %.2f × importance %.2f × recency %.2f\n",
			it.Kind, it.Key, it.Score.Score, it.Score.Relevance, it.Score.Importance, it.Score.Recency)
	}
	// Output:
	// <!-- memfs context pack sha256:fb84dfaab88c2b3cfbb396c062abf85f971c93054db8353cea07df0a7c82fd46 omitted:0 -->
	//
	// ## Skills
	//
	// - fuse-debugging: Trace FUSE requests. (skills/fuse/SKILL.md)
	//
	// ## Memory
	//
	// ### memory/kernel.md
	//
	// The kernel caches attributes.
	//
	// ### memory/style.md
	//
	// Short answers.
	//
	// skill skills/fuse/SKILL.md
	// note memory/kernel.md score 0.500 = relevance 1.00 × importance 0.50 × recency 1.00
	// note memory/style.md score 0.045 = relevance 0.05 × importance 0.90 × recency 1.00
}
