package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A variant is one way of mounting: a store and its flags.
type variant struct {
	name string
	bin  string
	args []string
}

// routeVariants are the default route alone, and five routes: the
// routed files live in r5/, a badger store as the default route's is.
func routeVariants(o options) ([]variant, error) {
	w := o.work
	for _, d := range []string{"r3", "r4"} {
		if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
			return nil, err
		}
	}
	// A read-only team directory with a file, as a route is used.
	if err := os.WriteFile(filepath.Join(w, "r3", "SKILL.md"), text(0, 4096), 0o644); err != nil {
		return nil, err
	}
	return []variant{
		{"1 route", o.memfs, []string{"--store", "badger:" + filepath.Join(w, "base")}},
		{"5 routes", o.memfs, []string{"--store", "badger:" + filepath.Join(w, "routed"),
			"--route", "r1/=mem:", "--route", "r2/=mem:",
			"--route", "r3/=dir:" + filepath.Join(w, "r3") + ":ro",
			"--route", "r4/=dir:" + filepath.Join(w, "r4"),
			"--route", "r5/=badger:" + filepath.Join(w, "r5")}},
	}, nil
}

// common are the flags of every mount of the routes part.
var common = []string{"--flush-interval", "0", "--embedder", "none", "--quiet"}

// noCache makes every stat a LOOKUP: the kernel caches no name or
// attribute.
var noCache = []string{"--attr-timeout", "0", "--entry-timeout", "0"}

func fileName(dir string, i int) string { return fmt.Sprintf("%s/f%04d.md", dir, i) }

// populate writes the files of v through a mount of it (its own
// timeouts), then unmounts: the values are in the stores.
func populate(o options, v variant) error {
	m, _, err := start(o.work, v.bin, filepath.Join(o.work, "mnt"), append(slices.Clone(v.args), common...)...)
	if err != nil {
		return err
	}
	for _, d := range []string{"notes", "r5"} {
		if err := os.MkdirAll(filepath.Join(m.dir, d), 0o755); err != nil {
			m.stop(time.Minute)
			return err
		}
		for i := range o.files {
			if err := os.WriteFile(filepath.Join(m.dir, fileName(d, i)), text(i, 4096), 0o644); err != nil {
				m.stop(time.Minute)
				return err
			}
		}
	}
	return m.stop(5 * time.Minute)
}

// A routeRound is one mount's figures: per-op times in µs, wall (each
// op as the client saw it) and the memfs process's CPU time over a phase
// divided by its ops (which waiting for a CPU does not inflate).
type routeRound struct {
	ready                            float64 // ms until the mount answered
	readDef, readRt, statDef, statRt []float64
	cpu                              map[string]float64 // phase -> µs per op
}

// A phase is one kind of op on the files of one directory.
type phase struct {
	name   string
	dir    string
	passes int
	op     func(string) error
	wall   func(*routeRound) *[]float64
}

func readFile(p string) error {
	b, err := os.ReadFile(p)
	if err == nil && len(b) != 4096 {
		err = fmt.Errorf("%s: %d bytes, want 4096", p, len(b))
	}
	return err
}

func statFile(p string) error { _, err := os.Lstat(p); return err }

var phases = []phase{
	{"read notes/", "notes", 1, readFile, func(r *routeRound) *[]float64 { return &r.readDef }},
	{"read r5/", "r5", 1, readFile, func(r *routeRound) *[]float64 { return &r.readRt }},
	{"stat notes/", "notes", 0, statFile, func(r *routeRound) *[]float64 { return &r.statDef }},
	{"stat r5/", "r5", 0, statFile, func(r *routeRound) *[]float64 { return &r.statRt }},
}

// measureRoutes mounts every variant at once, with no kernel cache, then
// reads every file once (cold: no mount has loaded any) and stats every
// file o.passes times, each op on every mount in turn (the order rotated
// op by op), so that the machine's bursts of load fall on all of them.
func measureRoutes(o options, vs []variant, round int) ([]routeRound, error) {
	rs := make([]routeRound, len(vs))
	ms := make([]*mount, len(vs))
	defer func() {
		for _, m := range ms {
			if m != nil {
				m.stop(time.Minute)
			}
		}
	}()
	for k := range vs {
		j := (k + round) % len(vs) // which mounts first alternates too
		args := append(append(slices.Clone(vs[j].args), common...), noCache...)
		m, ready, err := start(o.work, vs[j].bin, filepath.Join(o.work, fmt.Sprintf("mnt%d", j)), args...)
		if err != nil {
			return nil, err
		}
		ms[j], rs[j].ready, rs[j].cpu = m, float64(ready.Microseconds())/1000, map[string]float64{}
	}
	time.Sleep(o.settle)
	for _, ph := range phases {
		if err := runPhase(o, ph, ms, rs); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// runPhase does ph on every file, on each mount in turn.
func runPhase(o options, ph phase, ms []*mount, rs []routeRound) error {
	passes := ph.passes
	if passes == 0 {
		passes = o.passes
	}
	c0 := make([]time.Duration, len(ms))
	for j, m := range ms {
		c0[j] = cpu(m.pid())
	}
	n := 0
	for range passes {
		for i := range o.files {
			for k := range ms {
				j := (k + n) % len(ms)
				p := filepath.Join(ms[j].dir, fileName(ph.dir, i))
				t0 := time.Now()
				if err := ph.op(p); err != nil {
					return err
				}
				d := ph.wall(&rs[j])
				*d = append(*d, float64(time.Since(t0).Nanoseconds())/1000)
			}
			n++
		}
	}
	for j, m := range ms {
		rs[j].cpu[ph.name] = float64((cpu(m.pid()) - c0[j]).Nanoseconds()) / 1000 / float64(n)
	}
	return nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func benchRoutes(o options) error {
	vs, err := routeVariants(o)
	if err != nil {
		return err
	}
	for _, v := range vs {
		logf("populating %s: %d + %d files of 4 KiB", v.name, o.files, o.files)
		if err := populate(o, v); err != nil {
			return err
		}
	}
	pinCPU = o.cpu
	defer func() { pinCPU = "" }()
	got := map[string][]routeRound{}
	for r := range o.rounds {
		rs, err := measureRoutes(o, vs, r)
		if err != nil {
			return fmt.Errorf("round %d: %w", r+1, err)
		}
		for j, rr := range rs {
			logf("round %d %-8s ready %.0f ms; read %.1f / %.1f µs; stat %.1f / %.1f µs (default / routed, medians; CPU of memfs: read %.1f / %.1f, stat %.1f / %.1f)",
				r+1, vs[j].name, rr.ready, median(rr.readDef), median(rr.readRt), median(rr.statDef), median(rr.statRt),
				rr.cpu["read notes/"], rr.cpu["read r5/"], rr.cpu["stat notes/"], rr.cpu["stat r5/"])
			got[vs[j].name] = append(got[vs[j].name], rr)
		}
	}
	reportRoutes(o, vs, got)
	return nil
}

// reportRoutes prints, for each op, the median over rounds of the
// per-round median per op and of the per-round ratio of medians 5 routes
// / 1 route (min–max over rounds), then the same of the per-round means.
func reportRoutes(o options, vs []variant, got map[string][]routeRound) {
	fmt.Printf("\n### Routes: %d rounds (both mounts up at once, ops alternating between them; mounts on CPUs %q), %d files of 4 KiB in notes/ and in r5/, %d stats of each per mount\n\n", o.rounds, cmp.Or(o.cpu, "any"), o.files, o.passes)
	fmt.Println("| µs per op | 1 route: median | 5 routes: median | ratio of medians (min–max) | 1 route: mean | 5 routes: mean | ratio of means (min–max) |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	rows := []struct {
		name string
		get  func(routeRound) []float64
	}{
		{"cold read, default route (notes/)", func(r routeRound) []float64 { return r.readDef }},
		{"cold read, routed (r5/, badger)", func(r routeRound) []float64 { return r.readRt }},
		{"stat, default route", func(r routeRound) []float64 { return r.statDef }},
		{"stat, routed", func(r routeRound) []float64 { return r.statRt }},
		{"mount until ready (ms)", func(r routeRound) []float64 { return []float64{r.ready} }},
	}
	base, rt := got[vs[0].name], got[vs[1].name]
	for _, row := range rows {
		var medb, medr, rmed, mb, mr, rmean []float64
		for i := range base {
			b, r := median(row.get(base[i])), median(row.get(rt[i]))
			medb, medr, rmed = append(medb, b), append(medr, r), append(rmed, r/b)
			b, r = mean(row.get(base[i])), mean(row.get(rt[i]))
			mb, mr, rmean = append(mb, b), append(mr, r), append(rmean, r/b)
		}
		fmt.Printf("| %s | %.1f | %.1f | %.3f (%s) | %.1f | %.1f | %.3f (%s) |\n", row.name,
			median(medb), median(medr), median(rmed), span(rmed, "%.2f"),
			median(mb), median(mr), median(rmean), span(rmean, "%.2f"))
	}
	fmt.Println()
	fmt.Println("| µs of memfs CPU per op (phase's CPU time / its ops) | 1 route | 5 routes | ratio (min–max) |")
	fmt.Println("| --- | ---: | ---: | ---: |")
	for _, ph := range phases {
		var cb, cr, rc []float64
		for i := range base {
			b, r := base[i].cpu[ph.name], rt[i].cpu[ph.name]
			cb, cr, rc = append(cb, b), append(cr, r), append(rc, r/b)
		}
		fmt.Printf("| %s | %.1f | %.1f | %.3f (%s) |\n", ph.name, median(cb), median(cr), median(rc), span(rc, "%.2f"))
	}
	fmt.Println()
}
