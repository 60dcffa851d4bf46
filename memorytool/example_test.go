package memorytool_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/memorytool"
)

// A program that gives Claude the memory tool hands each tool_use input
// to the handler and returns the text (an error's, with is_error).
func Example() {
	dir, _ := os.MkdirTemp("", "memorytool-example")
	defer os.RemoveAll(dir)
	st, err := dirstore.Open(dir)
	if err != nil {
		panic(err)
	}
	opts := memfs.CommandOptions{Access: memfs.WriteStore, Agent: "example"}.Options()
	opts.JournalPath = filepath.Join(dir, dirstore.JournalName)
	opts.Logger = slog.New(slog.DiscardHandler)
	f, err := memfs.Open(context.Background(), st, opts)
	if err != nil {
		panic(err)
	}
	defer f.Close(context.Background())

	h := memorytool.New(f, memorytool.Options{Writer: "claude"})
	for _, input := range []string{
		`{"command":"create","path":"/memories/prefs.md","file_text":"language: Go\n"}`,
		`{"command":"str_replace","path":"/memories/prefs.md","old_str":"Go","new_str":"Go and Rust"}`,
		`{"command":"view","path":"/memories/prefs.md"}`,
		`{"command":"view","path":"/memories/../etc/passwd"}`,
	} {
		res, err := h.HandleJSON(context.Background(), []byte(input))
		if err != nil {
			fmt.Println(err) // is_error: true
			continue
		}
		fmt.Print(res.Text, "\n")
	}
	// Output:
	// File created successfully at: /memories/prefs.md
	// The memory file has been edited.
	//      1	language: Go and Rust
	//
	// Here's the content of /memories/prefs.md with line numbers:
	//      1	language: Go and Rust
	//
	// Error: the path "/memories/../etc/passwd" has a . or .. segment; paths are /memories or under it, such as /memories/notes.md
}
