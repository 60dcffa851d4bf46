package merge3_test

import (
	"fmt"

	"github.com/memfs/memfs/internal/merge3"
)

// Two mounts append to one log at once; each saw the same base.
func ExampleMerge() {
	base := []byte(`{"n":1}` + "\n")
	ours := []byte(`{"n":1}` + "\n" + `{"n":2,"by":"ours"}` + "\n")
	theirs := []byte(`{"n":1}` + "\n" + `{"n":2,"by":"theirs"}` + "\n")
	merged, ok := merge3.Merge(base, ours, theirs)
	fmt.Print(string(merged))
	fmt.Println(ok)

	_, ok = merge3.Merge([]byte("a\n"), []byte("b\n"), []byte("c\n"))
	fmt.Println(ok)
	// Output:
	// {"n":1}
	// {"n":2,"by":"theirs"}
	// {"n":2,"by":"ours"}
	// true
	// false
}
