package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/contextpack"
)

// Ten concurrent appenders, each writing 1,000 summaries with echo >>
// through the mount, lose and interleave nothing; the context pack of the
// mount and of the store shows the latest ones.
func TestSummariesConcurrentAppendAndContext(t *testing.T) {
	t.Parallel()
	store := "dir:" + t.TempDir()
	mustRun(t, "", "import", "--store", store, "../../testdata/sample")
	mnt := t.TempDir()
	p := startMount(t, store, mnt, nil)
	const appenders, each = 10, 1000
	var wg sync.WaitGroup
	errs := make(chan error, appenders)
	for a := range appenders {
		wg.Go(func() {
			script := fmt.Sprintf(`for i in $(seq 1 %d); do
				echo "{\"run\":\"a%d\",\"step\":\"$i\",\"time\":\"2026-11-23T00:00:00Z\",\"text\":\"appender %d step $i\"}" >> memory/summaries.jsonl
			done`, each, a, a)
			cmd := exec.Command("bash", "-ec", script)
			cmd.Dir = mnt
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("appender %d: %v\n%s", a, err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustRun(t, "", "summary", "add", "--mount", mnt, "--run", "final", "--step", "1", "the last step, through memfs summary add")
	b, err := os.ReadFile(filepath.Join(mnt, contextpack.SummariesKey))
	if err != nil {
		t.Fatal(err)
	}
	sums, bad := contextpack.ReadSummaries(b)
	if bad != 0 || len(sums) != appenders*each+1 {
		t.Fatalf("%d summaries, %d unparsable lines; want %d and 0", len(sums), bad, appenders*each+1)
	}
	seen := map[string]bool{}
	for _, s := range sums {
		if want := fmt.Sprintf("appender %s step %s", strings.TrimPrefix(s.Run, "a"), s.Step); s.Run != "final" && s.Text != want {
			t.Fatalf("summary %+v: text does not match its run and step", s)
		}
		seen[s.Run+"/"+s.Step] = true
	}
	if len(seen) != appenders*each+1 {
		t.Fatalf("%d distinct summaries, want %d", len(seen), appenders*each+1)
	}

	pack := mustRun(t, "", "context", "--mount", mnt, "--max-chars", "3000", "--summaries", "1")
	for _, want := range []string{"<!-- memfs context pack sha256:", "## Skills", "- go-patterns: ", "## Recent steps",
		"run final step 1: the last step, through memfs summary add", "## Memory", "### memory/global.md"} {
		if !strings.Contains(pack, want) {
			t.Errorf("context --mount lacks %q:\n%s", want, pack)
		}
	}
	if n := len([]rune(pack)); n > 3000 {
		t.Errorf("context --mount: %d characters over the budget of 3000", n)
	}
	// The manifest beside each pack names its hash: through the CLI, and
	// .memfs/context.manifest.json for .memfs/context.md.
	var m contextpack.Manifest
	if err := json.Unmarshal([]byte(mustRun(t, "", "context", "--mount", mnt, "--max-chars", "3000", "--summaries", "1", "--manifest")), &m); err != nil {
		t.Fatalf("context --manifest: %v", err)
	}
	if !strings.HasPrefix(pack, "<!-- memfs context pack sha256:"+m.PackSHA256+" ") || m.MaxChars != 3000 {
		t.Errorf("context --manifest: hash %s, budget %d; the pack starts %.100q", m.PackSHA256, m.MaxChars, pack)
	}
	got, _ := os.ReadFile(filepath.Join(mnt, ".memfs", "context.md"))
	mj, _ := os.ReadFile(filepath.Join(mnt, ".memfs", "context.manifest.json"))
	if err := json.Unmarshal(mj, &m); err != nil || !strings.HasPrefix(string(got), "<!-- memfs context pack sha256:"+m.PackSHA256+" ") {
		t.Errorf(".memfs/context.manifest.json (%v) does not name .memfs/context.md:\n%.300s", err, got)
	}
	// A tree walk does not meet the computed and large files: they are
	// opened by name only.
	ents, _ := os.ReadDir(filepath.Join(mnt, ".memfs"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "changes status" {
		t.Errorf("ls .memfs = %v, want changes and status only", names)
	}
	p.stop(t)

	mustRun(t, "", "summary", "add", "--store", store, "--run", "offline", "--step", "2", "added to the store")
	pack = mustRun(t, "", "context", "--store", store, "--summaries", "2")
	if !strings.Contains(pack, "run final step 1:") || !strings.Contains(pack, "run offline step 2: added to the store") {
		t.Errorf("context --store lacks the two latest summaries:\n%s", pack)
	}
}

// Through a live mount, with 300 short notes and 3 skills:
// .memfs/context.md holds the whole skills index and the latest summaries,
// its notes are the highest-ranked ones (the notes made important through
// user.memfs.importance first), and .memfs/context.manifest.json
// describes it.
func TestContextPackByValueThroughTheMount(t *testing.T) {
	t.Parallel()
	src := manyNotesTree(t)
	store := "dir:" + t.TempDir()
	mustRun(t, "", "import", "--store", store, src)
	mnt := t.TempDir()
	startMount(t, store, mnt, nil)
	important := []string{"memory/n250.md", "memory/n120.md", "memory/n299.md"}
	for i, k := range important {
		if err := unix.Setxattr(filepath.Join(mnt, k), "user.memfs.importance", []byte(fmt.Sprint(1-float64(i)/10)), 0); err != nil {
			t.Fatal(err)
		}
	}

	pack, m := readContextPack(t, mnt)
	if !strings.HasPrefix(pack, "<!-- memfs context pack sha256:"+m.PackSHA256+" ") || len([]rune(pack)) > contextpack.DefaultMaxChars {
		t.Fatalf("pack of %d characters does not start with its manifest's hash %s:\n%.300s", len([]rune(pack)), m.PackSHA256, pack)
	}
	for _, s := range []string{"- deploy: how to deploy. (skills/deploy/SKILL.md)", "- review: how to review.", "- triage: how to triage."} {
		if !strings.Contains(pack, s) {
			t.Errorf("context.md lacks the skill line %q", s)
		}
	}
	for i := 15; i < 20; i++ {
		if s := fmt.Sprintf("run r step %d: step %d done", i, i); !strings.Contains(pack, s) {
			t.Errorf("context.md lacks the summary %q", s)
		}
	}
	checkPackNotes(t, m, important)
	for _, it := range m.LeftOut {
		if it.Kind != "note" {
			t.Errorf("left out %s %s: skills and summaries must fit their shares", it.Kind, it.Key)
		}
	}
}

// manyNotesTree writes, in a new directory it returns, 300 short notes,
// 3 skills (deploy, review, triage) and 20 summaries of run r.
func manyNotesTree(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(src, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		write(fmt.Sprintf("memory/n%03d.md", i), fmt.Sprintf("note %03d of many.\n", i))
	}
	for _, s := range []string{"deploy", "review", "triage"} {
		write("skills/"+s+"/SKILL.md", "---\nname: "+s+"\ndescription: how to "+s+".\n---\nbody\n")
	}
	var sums strings.Builder
	for i := range 20 {
		fmt.Fprintf(&sums, `{"run":"r","step":"%d","time":"2026-11-23T00:00:00Z","text":"step %d done"}`+"\n", i, i)
	}
	write(contextpack.SummariesKey, sums.String())
	return src
}

// readContextPack reads .memfs/context.md and its manifest from the mount
// at mnt.
func readContextPack(t *testing.T, mnt string) (string, contextpack.Manifest) {
	t.Helper()
	pack, err := os.ReadFile(filepath.Join(mnt, ".memfs", "context.md"))
	if err != nil {
		t.Fatal(err)
	}
	mj, err := os.ReadFile(filepath.Join(mnt, ".memfs", "context.manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m contextpack.Manifest
	if err := json.Unmarshal(mj, &m); err != nil {
		t.Fatal(err)
	}
	return string(pack), m
}

// checkPackNotes checks the notes m includes: many but not all 300, the
// important ones first, the rest (tied on importance, all unset, and on
// recency, imported at once or within seconds of a 7-day half-life) by
// score, then key.
func checkPackNotes(t *testing.T, m contextpack.Manifest, important []string) {
	t.Helper()
	var notes []string
	for _, it := range m.Included {
		if it.Kind == "note" {
			notes = append(notes, it.Key)
		}
	}
	if len(notes) < 10 || len(notes) >= 300 {
		t.Fatalf("%d notes in context.md: want many, not all", len(notes))
	}
	if !slices.Equal(notes[:3], important) {
		t.Errorf("first notes %v, want the important ones %v", notes[:3], important)
	}
	for i := 4; i < len(notes); i++ {
		a, b := m.Included[0], m.Included[0]
		for _, it := range m.Included {
			if it.Key == notes[i-1] {
				a = it
			}
			if it.Key == notes[i] {
				b = it
			}
		}
		if a.Score.Score < b.Score.Score || a.Score.Score == b.Score.Score && a.Key > b.Key {
			t.Errorf("%s (%v) before %s (%v)", a.Key, a.Score.Score, b.Key, b.Score.Score)
		}
	}
}

// memfs context --at SEQ (and the word at:SEQ in .memfs/context/NAME)
// gives, byte for byte, the pack the mount served when the event log's
// head was SEQ: through the mount after the notes changed, and from the
// store once it is unmounted; with a query, and for the manifest too.
func TestContextAtRebuildsThePackServedThen(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	for rel, text := range map[string]string{
		"memory/deploy.md":     "# Deploy\nship on Tuesdays after the canary is green.\n",
		"memory/holidays.md":   "# Holidays\nthe office is closed in August.\n",
		"skills/ship/SKILL.md": "---\nname: ship\ndescription: how to ship a release.\n---\nbody\n",
	} {
		p := filepath.Join(src, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store := "dir:" + t.TempDir()
	mustRun(t, "", "import", "--store", store, src)
	mnt := t.TempDir()
	p := startMount(t, store, mnt, nil)
	sh := func(script string) {
		t.Helper()
		cmd := exec.Command("bash", "-euc", script)
		cmd.Dir = mnt
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	sh(`echo "the canary runs for an hour" >> memory/deploy.md && sync memory/deploy.md`)
	evs := events(t, "--mount", mnt)
	seq := evs[len(evs)-1].Seq
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mnt, ".memfs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	type pack struct {
		flags []string
		want  string
	}
	then := []pack{
		{nil, read("context.md")},
		{[]string{"--manifest"}, read("context.manifest.json")},
		{[]string{"--query", "release canary"}, read("context/release%20canary")},
		{[]string{"--query", "closed", "--manifest"}, read("context/closed.manifest.json")},
	}
	sh(`echo "# Deploy\nnever on Fridays" > memory/deploy.md && rm memory/holidays.md && echo new > memory/new.md && sync memory/new.md`)
	if now := read("context.md"); now == then[0].want {
		t.Fatal("the pack did not change with the notes: the test shows nothing")
	}
	at := fmt.Sprint(seq)
	if got := read("context/at:" + at); got != then[0].want {
		t.Errorf(".memfs/context/at:%s:\n%s\nwant the pack served then:\n%s", at, got, then[0].want)
	}
	check := func(where ...string) {
		t.Helper()
		for _, p := range then {
			args := append(append([]string{"context", "--at", at}, where...), p.flags...)
			if got := mustRun(t, "", args...); got != p.want {
				t.Errorf("memfs %s:\n%s\nwant:\n%s", strings.Join(args, " "), got, p.want)
			}
		}
	}
	check("--mount", mnt)
	p.stop(t)
	check("--store", store)
	if _, _, err := run(t, "", "context", "--store", store, "--at", "0"); err == nil {
		t.Error("memfs context --at 0: no error")
	}
}
