package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSecrets are written through the mount; none may reach the store.
var fakeSecrets = []string{
	"ghp_Zq8mR2xL7bW4nT0vK5yJ1cH6dF3sP9gA2eU7",
	"sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9",
	"AKIAQ3EGXP7ZLRK2MV5N",
}

func TestRedactionBeforeTheStore(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mnt := t.TempDir()
			state := t.TempDir()
			env := []string{"XDG_STATE_HOME=" + state, "XDG_CONFIG_HOME=" + t.TempDir()}
			p := startMount(t, store, mnt, env)
			note := "# Deploy\n\nCI token " + fakeSecrets[0] + " pushes tags.\nstripe.api_key = \"" + fakeSecrets[1] +
				"\"\nexport AWS_ACCESS_KEY_ID=" + fakeSecrets[2] + "\n"
			path := filepath.Join(mnt, "memory", "deploy.md")
			os.MkdirAll(filepath.Dir(path), 0o755)
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(note)
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			// After the flush the mount still shows what was written: the
			// session holds the writer's bytes; only what leaves memory is
			// redacted.
			if got := readBack(path); got != note {
				t.Fatalf("after fsync the mount shows %q, want what was written", got)
			}
			if err := p.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p.log)
			}
			for _, s := range fakeSecrets {
				if strings.Contains(p.log.String(), s) {
					t.Fatal("the log prints a secret")
				}
			}
			if !strings.Contains(p.log.String(), "rule=github-token") {
				t.Errorf("the redaction is not logged with its rule:\n%s", p.log)
			}
			// Every byte memfs left on disk: the store, its journal, the state dir.
			for _, dir := range []string{strings.SplitN(store, ":", 2)[1], state} {
				filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
					if err != nil || !d.Type().IsRegular() {
						return nil
					}
					b, _ := os.ReadFile(path)
					for _, s := range fakeSecrets {
						if bytes.Contains(b, []byte(s)) {
							t.Errorf("%s holds a secret", path)
						}
					}
					return nil
				})
			}
			p2 := startMount(t, store, mnt, env)
			// After a remount the mount shows what the store holds: markers.
			got := readBack(path)
			for _, s := range fakeSecrets {
				if strings.Contains(got, s) {
					t.Fatalf("after remount the mount shows a secret:\n%s", got)
				}
			}
			for _, m := range []string{"[REDACTED:github-token]", "[REDACTED:stripe-secret-key]", "[REDACTED:aws-access-key-id]"} {
				if !strings.Contains(got, m) {
					t.Fatalf("after remount the mount lacks %s:\n%s", m, got)
				}
			}
			p2.terminate(t)
		})
	}
}

func TestRedactCheck(t *testing.T) {
	out, _, err := run(t, "", "redact", "check", "../../testdata/secrets/lookalikes.txt")
	if err != nil || out != "" {
		t.Fatalf("redact check of the look-alikes: %v, %q", err, out)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "note.md")
	os.WriteFile(p, []byte("line one\nthe token is "+fakeSecrets[0]+"\n"), 0o644)
	out, _, err = run(t, "", "redact", "check", p)
	if err == nil || !strings.Contains(out, p+":2:14: github-token") {
		t.Fatalf("redact check: %v, %q", err, out)
	}
	if strings.Contains(out, fakeSecrets[0]) {
		t.Fatal("redact check prints the secret")
	}
	// Standard input, and nothing written.
	out, _, err = run(t, "key "+fakeSecrets[2], "redact", "check")
	if err == nil || !strings.Contains(out, "-:1:5: aws-access-key-id") {
		t.Fatalf("redact check of stdin: %v, %q", err, out)
	}
	if b, _ := os.ReadFile(p); !bytes.Contains(b, []byte(fakeSecrets[0])) {
		t.Fatal("redact check changed the file")
	}
}

// put --no-redact stores the value as it is; a read command still shows
// it redacted (a secret in the store is never printed).
func TestNoRedactFlag(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	_, errOut, err := run(t, "token "+fakeSecrets[0]+"\n", "put", "--store", store, "--no-redact", "memory/raw.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "redaction is off") {
		t.Errorf("--no-redact gave no warning: %q", errOut)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "memory", "raw.md")); err != nil || !bytes.Contains(got, []byte(fakeSecrets[0])) {
		t.Fatalf("--no-redact still redacted: %q, %v", got, err)
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/raw.md"); strings.Contains(got, fakeSecrets[0]) || !strings.Contains(got, "[REDACTED:") {
		t.Fatalf("cat printed the secret a --no-redact put stored: %q", got)
	}
	mustRun(t, "token "+fakeSecrets[0]+"\n", "put", "--store", store, "memory/red.md")
	if got := mustRun(t, "", "cat", "--store", store, "memory/red.md"); strings.Contains(got, fakeSecrets[0]) {
		t.Fatalf("put persisted a secret: %q", got)
	}
}

// A binary value (a NUL byte in its first 8 KiB) is no way around
// redaction: a secret in it is masked in place, at the same length, so
// that offsets and size stay what the format expects. Text is redacted.
func TestBinaryValuesAreMaskedInPlace(t *testing.T) {
	store := "dir:" + t.TempDir()
	env := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", env)
	head := []byte{0x89, 'P', 'N', 'G', 0, 0}
	bin := append(append([]byte{}, head...), []byte("token "+fakeSecrets[0]+" in a blob")...)
	mustRun(t, string(bin), "put", "--store", store, "assets/blob.png")
	mustRun(t, "token "+fakeSecrets[0]+"\n", "put", "--store", store, "memory/text.md")
	got := mustRun(t, "", "cat", "--store", store, "assets/blob.png")
	if len(got) != len(bin) || strings.Contains(got, fakeSecrets[0][:12]) {
		t.Fatalf("binary value: %q (%d bytes), want %d bytes with the secret masked", got, len(got), len(bin))
	}
	if !strings.HasPrefix(got, string(head)+"token ") || !strings.HasSuffix(got, " in a blob") {
		t.Errorf("bytes around the secret changed: %q", got)
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/text.md"); strings.Contains(got, fakeSecrets[0]) {
		t.Errorf("text value not redacted: %q", got)
	}
}
