package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The past is as closed as the present, through the mount: uid 65534
// gets a note in its pack as of SEQ (.memfs/context/at:SEQ and memfs
// context --at SEQ --mount) only while it may read it now. A chmod, a
// chmod and a rename, a move into a 0700 directory and a delete each
// take a note out of that past; an untouched note stays; root keeps all.
func TestPastPackObeysPresentPermissionsAsOtherUser(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("this test runs commands as another user with setpriv (util-linux): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and runs commands as uid %d", otherUID)
	}
	mnt := sharedDir(t)
	bin := sharedBinary(t)
	startMount(t, "dir:"+t.TempDir(), mnt, nil, "--allow-other")
	p := func(key string) string { return filepath.Join(mnt, key) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	flush := func() {
		t.Helper()
		f, err := os.Open(p("memory/kept.md"))
		must(err)
		must(f.Sync()) // fsync flushes the session: the changes reach the event log
		must(f.Close())
	}
	notes := map[string]string{
		"memory/kept.md":    "still public: wombat\n",
		"memory/chmod.md":   "shut by a chmod: quokka\n",
		"memory/renamed.md": "shut, then renamed: numbat\n",
		"memory/moved.md":   "moved into a private directory: bilby\n",
		"memory/deleted.md": "removed: dugong\n",
	}
	for k, v := range notes {
		must(os.WriteFile(p(k), []byte(v), 0o644))
		must(os.Chmod(p(k), 0o644))
	}
	must(os.Mkdir(p("memory/private"), 0o700))
	must(os.Chmod(p("memory/private"), 0o700))
	flush()
	events, err := os.ReadFile(p(".memfs/events.jsonl"))
	must(err)
	lines := strings.Split(strings.TrimSpace(string(events)), "\n")
	var last struct{ Seq uint64 }
	must(json.Unmarshal([]byte(lines[len(lines)-1]), &last))
	seq := strconv.FormatUint(last.Seq, 10)

	nobody := caller{name: "uid 65534", priv: []string{fmt.Sprintf("--reuid=%d", otherUID), fmt.Sprintf("--regid=%d", otherUID), "--clear-groups"},
		env: []string{"MEMFS_TEST_MAIN=1", "HOME=/"}}
	root := caller{name: "root", env: nobody.env}
	ways := map[string][]string{
		".memfs/context/at:" + seq:          {"cat", ".memfs/context/at:" + seq},
		"memfs context --mount --at " + seq: {bin, "context", "--mount", mnt, "--at", seq},
	}
	all := []string{"wombat", "quokka", "numbat", "bilby", "dugong"}
	check := func(c caller, shows, hides []string) {
		t.Helper()
		for name, argv := range ways {
			out, err := c.run(t, mnt, argv...)
			if err != nil {
				t.Errorf("%s as %s: %v\n%s", name, c.name, err, out)
				continue
			}
			for _, w := range shows {
				if !strings.Contains(out, w) {
					t.Errorf("%s as %s lacks %q:\n%s", name, c.name, w, out)
				}
			}
			for _, w := range hides {
				if strings.Contains(out, w) {
					t.Errorf("%s as %s shows %q, which it may not read now:\n%s", name, c.name, w, out)
				}
			}
		}
	}
	check(nobody, all, nil) // before: it could read them all then, and now
	if t.Failed() {
		t.FailNow()
	}

	must(os.Chmod(p("memory/chmod.md"), 0o600))
	must(os.Chmod(p("memory/renamed.md"), 0o600))
	must(os.Rename(p("memory/renamed.md"), p("memory/renamed-private.md")))
	must(os.Rename(p("memory/moved.md"), p("memory/private/moved.md")))
	must(os.Remove(p("memory/deleted.md")))
	flush()

	check(nobody, all[:1], all[1:])
	check(root, all, nil)
}
