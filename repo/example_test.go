package repo_test

import (
	"context"
	"fmt"
	"time"

	"github.com/memfs/memfs/repo"
)

func ExampleMemory_Put() {
	ctx := context.Background()
	files := newFiles() // an open store or a mount, in a program
	m := repo.Memory{Files: files, Now: func() time.Time { return time.Date(2026, 12, 6, 19, 15, 0, 0, time.UTC) }}
	id := repo.Identity{Hash: "0123456789abcdef", Path: "/src/proj"}
	if _, err := m.Init(ctx, id, nil, "git:4b825dc642cb6eb9a060e54bf8d69288fbee4904"); err != nil {
		fmt.Println(err)
		return
	}
	r, err := m.Put(ctx, id.Hash, repo.Record{Kind: repo.Convention, ID: "wrap-errors", Title: "Wrap errors with %w",
		Tags: []string{"go", "errors"}, Body: "Never match error text.\n"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s", r.Markdown())

	_, err = m.Put(ctx, id.Hash, repo.Record{Kind: repo.Note, ID: "flaky", Source: "someone"})
	fmt.Println(err)
	// Output:
	// ---
	// id: "wrap-errors"
	// title: "Wrap errors with %w"
	// tags: ["go", "errors"]
	// createdAt: 2026-12-06T19:15:00Z
	// updatedAt: 2026-12-06T19:15:00Z
	// ---
	// Never match error text.
	// repos/0123456789abcdef/notes/flaky.md: front matter: source: "someone" is not a source: want manual, agent or tool
}
