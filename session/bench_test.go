package session_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

// benchStores are the backends the session benchmarks run on.
var benchStores = []struct {
	name string
	open func(dir string) (backend.SysStore, error)
}{
	{"dir", func(dir string) (backend.SysStore, error) { return dirstore.Open(dir) }},
	{"badger", func(dir string) (backend.SysStore, error) { return badgerstore.Open(dir, badgerstore.Options{}) }},
}

func benchKey(i int) string {
	return fmt.Sprintf("memory/project-%03d/topic-%02d/note-%06d.md", i%500, i%37, i)
}

// fill saves n entries of size bytes each, in batches.
func fill(b *testing.B, st backend.Store, n, size int) {
	b.Helper()
	val := make([]byte, size)
	const batch = 5000
	for start := 0; start < n; start += batch {
		var es []backend.Entry
		for i := start; i < min(n, start+batch); i++ {
			es = append(es, backend.Entry{Key: benchKey(i), Value: val,
				Info: backend.Info{Mode: 0o644, MTime: time.Unix(1700000000, 0)}})
		}
		if err := st.Save(b.Context(), es...); err != nil {
			b.Fatal(err)
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkBootstrap indexes 100,000 keys (no value loaded) and reports the
// heap bytes the index costs per key.
func BenchmarkBootstrap(b *testing.B) {
	const n = 100_000
	for _, bs := range benchStores {
		b.Run(bs.name, func(b *testing.B) {
			st, err := bs.open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			fill(b, st, n, 16)
			var perKey float64
			for b.Loop() {
				before := heapInUse()
				c := session.NewContext(st, session.Options{})
				if err := c.Bootstrap(b.Context(), "nothing/"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				perKey = float64(heapInUse()-before) / n
				runtime.KeepAlive(c)
				b.StartTimer()
			}
			b.ReportMetric(perKey, "heapB/key")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
		})
	}
}

// BenchmarkFlush flushes 10,000 dirty 4 KiB entries of note-like text,
// with and without redaction.
func BenchmarkFlush(b *testing.B) {
	const n = 10_000
	line := []byte("- remember: the deploy script reads the config from env; ask before using the token API\n")
	val := bytes.Repeat(line, 4096/len(line)+1)[:4096]
	red, err := redact.New(redact.Config{Env: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	for _, bs := range benchStores {
		for _, withRedact := range []bool{false, true} {
			name := bs.name
			opts := session.Options{}
			if withRedact {
				name += "/redact"
				opts.Redactor = red
			}
			b.Run(name, func(b *testing.B) {
				st, err := bs.open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				c := session.NewContext(st, opts)
				round := 0
				for b.Loop() {
					b.StopTimer()
					round++
					for i := range n {
						v := append([]byte(nil), val...)
						v[0] = byte(round)
						if err := c.Set(benchKey(i), v); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					if err := c.Flush(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			})
		}
	}
}

// BenchmarkGet reads a cached key: the target is no allocation.
func BenchmarkGet(b *testing.B) {
	st, err := dirstore.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	c := session.NewContext(st, session.Options{})
	c.Set("memory/global.md", make([]byte, 4096))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get("memory/global.md"); !ok {
			b.Fatal("not cached")
		}
	}
}

// BenchmarkCreateClose creates, writes and closes 10,000 small files, with
// and without the crash journal: the journal's cost per close.
func BenchmarkCreateClose(b *testing.B) {
	const n = 10_000
	val := make([]byte, 2048)
	for _, withJournal := range []bool{false, true} {
		name := "no-journal"
		if withJournal {
			name = "journal"
		}
		b.Run(name, func(b *testing.B) {
			st, err := dirstore.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			for b.Loop() {
				b.StopTimer()
				opts := session.Options{}
				var j *journal.Journal
				if withJournal {
					j, _, err = journal.Open(filepath.Join(b.TempDir(), "journal"))
					if err != nil {
						b.Fatal(err)
					}
					opts.Journal = j
				}
				c := session.NewContext(st, opts)
				c.Mkdir("memory", 0o755, 0, 0)
				for d := range 100 {
					c.Mkdir(fmt.Sprintf("memory/d%02d", d), 0o755, 0, 0)
				}
				b.StartTimer()
				for i := range n {
					h, err := c.Create(fmt.Sprintf("memory/d%02d/f%05d.md", i%100, i), session.CreateOptions{Mode: 0o644})
					if err != nil {
						b.Fatal(err)
					}
					h.WriteAt(val, 0)
					if err := h.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if j != nil {
					j.Close()
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/file")
		})
	}
}

// BenchmarkCreateEvents flushes 10,000 new 4 KiB files, with the event log
// (one event per file, appended to the store's log) and without it: the
// cost of the log.
func BenchmarkCreateEvents(b *testing.B) {
	const n = 10_000
	val := bytes.Repeat([]byte("note text "), 410)[:4096]
	for _, bs := range benchStores {
		for _, withLog := range []bool{false, true} {
			name := bs.name + "/nolog"
			if withLog {
				name = bs.name + "/eventlog"
			}
			b.Run(name, func(b *testing.B) {
				st, err := bs.open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				opts := session.Options{}
				if withLog {
					l, err := eventlog.Open(b.Context(), st, nil)
					if err != nil {
						b.Fatal(err)
					}
					opts.Events = func(ctx context.Context, evs []session.Event) error {
						out := make([]eventlog.Event, len(evs))
						for i, e := range evs {
							out[i] = eventlog.Event{Op: e.Op, Key: e.Key, OldKey: e.OldKey, Size: e.Size, SHA256: e.SHA256, Writer: e.Writer, Session: "bench"}
						}
						_, err := l.Append(ctx, out)
						return err
					}
				}
				c := session.NewContext(st, opts)
				round := 0
				for b.Loop() {
					b.StopTimer()
					round++
					for i := range n {
						if err := c.Set(fmt.Sprintf("r%d/%s", round, benchKey(i)), append([]byte(nil), val...)); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					if err := c.Flush(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
			})
		}
	}
}

// BenchmarkAppendSummaries is `echo LINE >> summaries.jsonl` 10,000 times:
// a file growing to about 1 MiB, each append opened, written and closed,
// with the crash journal and the default redactor, no flush in between.
// What each close costs is the journal record of its append, redacted in
// its context (and the journal's scrub of earlier records when an append
// completes a secret).
func BenchmarkAppendSummaries(b *testing.B) {
	const n = 10_000
	red, err := redact.New(redact.Config{Env: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	line := func(i int) []byte {
		return fmt.Appendf(nil, `{"run":"r-%04d","step":%d,"time":"2026-11-24T10:%02d:%02dZ","text":"summary of step %d: tests pass, flush ok"}`+"\n",
			i/100, i%100, i/60%60, i%60, i)
	}
	st, err := dirstore.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	size := 0
	for b.Loop() {
		b.StopTimer()
		j, _, err := journal.Open(filepath.Join(b.TempDir(), "journal"))
		if err != nil {
			b.Fatal(err)
		}
		c := session.NewContext(st, session.Options{Journal: j, Redactor: red})
		c.Mkdir("memory", 0o755, 0, 0)
		b.StartTimer()
		for i := range n {
			h, err := c.Create("memory/summaries.jsonl", session.CreateOptions{Mode: 0o644})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := h.Append(line(i)); err != nil {
				b.Fatal(err)
			}
			if err := h.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		v, _ := c.Get("memory/summaries.jsonl")
		size = len(v)
		j.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/append")
	b.ReportMetric(float64(size), "final-bytes")
}
