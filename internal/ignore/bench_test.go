package ignore_test

import (
	"fmt"
	"testing"

	"github.com/memfs/memfs/internal/ignore"
)

// BenchmarkIgnored: one key against the defaults and a root and a
// directory .memfsignore of 5 patterns each (the cost each indexed or
// packed file pays).
func BenchmarkIgnored(b *testing.B) {
	r := ignore.New(map[string][]byte{
		".memfsignore":        []byte("*.tmp\n/build/\nlogs/\n!keep.tmp\nnode_modules/\n"),
		"memory/.memfsignore": []byte("drafts/\n*.bak\n/scratch\n**/cache/**\n*.log\n"),
	})
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("memory/project-%d/notes/n%04d.md", i%37, i)
	}
	b.ResetTimer()
	for i := range b.N {
		r.Ignored(keys[i%len(keys)])
	}
}

// BenchmarkIgnoredDefaults: the defaults alone (no .memfsignore).
func BenchmarkIgnoredDefaults(b *testing.B) {
	var r *ignore.Rules
	for i := range b.N {
		r.Ignored(fmt.Sprintf("memory/project-%d/notes/n%04d.md", i%37, i%1000))
	}
}
