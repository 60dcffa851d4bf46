package main

import (
	"strings"
	"testing"
)

// The history commands on a store no mount serves: history lists the
// versions, diff shows the last change, revert brings the one before
// back as a new version, a checkpoint names the namespace, restore
// brings a removed key back from it.
func TestHistoryCommands(t *testing.T) {
	t.Parallel()
	store := "badger:" + t.TempDir()
	mustRun(t, "one\n", "put", "--store", store, "memory/a.md")
	mustRun(t, "", "checkpoint", "save", "--store", store, "run1", "s1")
	mustRun(t, "two\n", "put", "--store", store, "memory/a.md")
	if out := mustRun(t, "", "history", "--store", store, "memory/a.md"); strings.Count(out, " write ") != 2 {
		t.Fatalf("history: %q, want two writes", out)
	}
	if out := mustRun(t, "", "diff", "--store", store, "memory/a.md"); !strings.HasSuffix(out, "@@ -1 +1 @@\n-one\n+two\n") {
		t.Fatalf("diff: %q", out)
	}
	mustRun(t, "", "revert", "--store", store, "memory/a.md")
	if out := mustRun(t, "", "cat", "--store", store, "memory/a.md"); out != "one\n" {
		t.Fatalf("after revert: %q", out)
	}
	if out := mustRun(t, "", "checkpoint", "latest", "--store", store, "run1"); !strings.HasPrefix(out, "run1/s1 ") {
		t.Fatalf("checkpoint latest: %q", out)
	}
	mustRun(t, "", "rm", "--store", store, "memory/a.md")
	if out := mustRun(t, "", "restore", "--store", store, "--to", "run1/latest", "memory/"); out != "memory/a.md\n" {
		t.Fatalf("restore: %q", out)
	}
	if out := mustRun(t, "", "history", "--store", store, "memory/a.md"); strings.Count(out, "\n") != 5 {
		t.Fatalf("history after revert, rm, restore: %q, want 5 versions", out)
	}
	mustRun(t, "", "snapshot", "rm", "--store", store, "run1/s1")
	if out := mustRun(t, "", "snapshot", "list", "--store", store); out != "" {
		t.Fatalf("snapshot list after rm: %q", out)
	}
}

// history redact blanks one version's bytes (the diff from it shows
// nothing removed), keeps its record, and refuses a store a mount serves.
func TestHistoryRedact(t *testing.T) {
	t.Parallel()
	store := "badger:" + t.TempDir()
	mustRun(t, "token=hunter2\n", "put", "--store", store, "memory/a.md")
	mustRun(t, "two\n", "put", "--store", store, "memory/a.md")
	seqs := strings.Fields(mustRun(t, "", "history", "--store", store, "memory/a.md"))
	if len(seqs) != 10 {
		t.Fatalf("history: %q, want two versions", seqs)
	}
	old, now := strings.TrimLeft(seqs[0], "0"), strings.TrimLeft(seqs[5], "0")
	if out := mustRun(t, "", "history", "redact", "--store", store, "memory/a.md", old); !strings.HasPrefix(out, "memory/a.md@"+old+" redacted") {
		t.Fatalf("redact: %q", out)
	}
	if out := mustRun(t, "", "diff", "--store", store, "memory/a.md", old, now); strings.Contains(out, "hunter2") || !strings.Contains(out, "+two") || !strings.Contains(out, "(redacted)") {
		t.Fatalf("diff from the redacted version: %q", out)
	}
	if out := mustRun(t, "", "history", "--store", store, "memory/a.md"); strings.Count(out, "\n") != 2 {
		t.Fatalf("history after redact: %q, want both records", out)
	}
	mnt := t.TempDir()
	startMount(t, store, mnt, nil)
	if _, _, err := run(t, "", "history", "redact", "--store", store, "memory/a.md", now); err == nil || !strings.Contains(err.Error(), "unmount it first") {
		t.Fatalf("redact under a mount: %v, want a refusal", err)
	}
}

// checkpoint save through a mount, of a run that has no step yet.
func TestCheckpointThroughMount(t *testing.T) {
	t.Parallel()
	store, mnt := "badger:"+t.TempDir(), t.TempDir()
	mustRun(t, "one\n", "put", "--store", store, "memory/a.md")
	startMount(t, store, mnt, nil)
	mustRun(t, "", "checkpoint", "save", "--store", store, "run1", "s1")
	mustRun(t, "", "checkpoint", "save", "--store", store, "run1", "s2")
	if out := mustRun(t, "", "checkpoint", "latest", "--store", store, "run1"); out != "run1/s2\n" {
		t.Fatalf("checkpoint latest through the mount: %q", out)
	}
	if out := mustRun(t, "", "checkpoint", "list", "--store", store, "run1"); out != "run1/s1\nrun1/s2\n" {
		t.Fatalf("checkpoint list through the mount: %q", out)
	}
}
