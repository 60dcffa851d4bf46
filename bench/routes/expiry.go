package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ttl is the notes' time to live: none expires during the run.
const ttl = "720h"

func noteName(i int) string { return fmt.Sprintf("d%03d/n%06d.md", i%1000, i) }

// buildExpiryStores writes o.keys notes of 300-600 bytes, each with the
// attribute user.bench (a store with attributes but no deadline), imports
// them into the badger store "none" under notes/, gives each
// user.memfs.ttl instead (same size, same mtimes), imports them into
// "ttl", and removes the tree.
func buildExpiryStores(o options) error {
	tree := filepath.Join(o.work, "tree")
	for i := range o.keys {
		p := filepath.Join(tree, noteName(i))
		if i < 1000 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(p, text(i, 300+i%301), 0o644); err != nil {
			return err
		}
		if err := syscall.Setxattr(p, "user.bench", []byte(ttl), 0); err != nil {
			return fmt.Errorf("setxattr %s: %w", p, err)
		}
	}
	imp := func(name string) error {
		t0 := time.Now()
		err := runCmd(o.work, o.memfs, "import", "--quiet", "--store", "badger:"+filepath.Join(o.work, name), "--prefix", "notes/", tree)
		logf("imported %d notes into %s in %v", o.keys, name, time.Since(t0).Round(time.Millisecond))
		return err
	}
	if err := imp("none"); err != nil {
		return err
	}
	for i := range o.keys {
		p := filepath.Join(tree, noteName(i))
		if err := syscall.Removexattr(p, "user.bench"); err != nil {
			return err
		}
		if err := syscall.Setxattr(p, "user.memfs.ttl", []byte(ttl), 0); err != nil {
			return err
		}
	}
	if err := imp("ttl"); err != nil {
		return err
	}
	return os.RemoveAll(tree)
}

// An expRound is one mount's figures.
type expRound struct {
	ready, cpuReady, cpuSettled float64 // ms
	first                       float64 // ms: a rewrite right after ready
	rss, hwm                    float64 // MiB, settled: VmRSS, VmHWM
	writeWall, writeCPU         float64 // µs per write
	drain                       float64 // ms after the last write until memfs idles
}

// expVariant is a binary and the store it mounts.
type expVariant struct {
	name, bin, store string
}

// measureExpiry mounts a fresh copy of v's store, times the mount and a
// rewrite of a note right after, lets it settle 3 s (the expiry loop
// fills its queue in the background), then rewrites o.writes other notes
// (open O_TRUNC, write, close), with the process's CPU time over all of
// them.
func measureExpiry(o options, v expVariant) (expRound, error) {
	var r expRound
	store := filepath.Join(o.work, "run-store")
	if err := os.RemoveAll(store); err != nil {
		return r, err
	}
	if err := runCmd(o.work, "cp", "-a", filepath.Join(o.work, v.store), store); err != nil {
		return r, err
	}
	defer os.RemoveAll(store)
	m, ready, err := start(o.work, v.bin, filepath.Join(o.work, "mnt"), "--store", "badger:"+store, "--flush-interval", "0", "--embedder", "none", "--quiet")
	if err != nil {
		return r, err
	}
	defer m.stop(5 * time.Minute)
	r.ready, r.cpuReady = ms(ready), ms(cpu(m.pid()))
	t0 := time.Now()
	if err := os.WriteFile(filepath.Join(m.dir, "notes", noteName(o.keys-1)), text(0, 400), 0o644); err != nil {
		return r, err
	}
	r.first = ms(time.Since(t0))
	time.Sleep(3 * time.Second)
	r.cpuSettled, r.rss, r.hwm = ms(cpu(m.pid())), memMiB(m.pid(), "VmRSS"), memMiB(m.pid(), "VmHWM")
	if err := checkAttr(m.dir, v.store); err != nil {
		return r, err
	}
	c0 := cpu(m.pid())
	t0 = time.Now()
	for i := range o.writes {
		p := filepath.Join(m.dir, "notes", noteName(i*37%o.keys))
		if err := os.WriteFile(p, text(i+1, 400), 0o644); err != nil {
			return r, err
		}
	}
	wall := time.Since(t0)
	r.drain = ms(idle(m.pid())) // what the writes left the loop, done
	r.writeCPU = float64((cpu(m.pid()) - c0).Nanoseconds()) / 1000 / float64(o.writes)
	r.writeWall = float64(wall.Nanoseconds()) / 1000 / float64(o.writes)
	return r, nil
}

// checkAttr checks that a note of the store has the attribute the store
// was built with: user.memfs.ttl in "ttl", user.bench in "none".
func checkAttr(mnt, store string) error {
	name := map[string]string{"ttl": "user.memfs.ttl", "none": "user.bench"}[store]
	buf := make([]byte, 64)
	n, err := syscall.Getxattr(filepath.Join(mnt, "notes", noteName(1)), name, buf)
	if err != nil || string(buf[:n]) != ttl {
		return fmt.Errorf("store %s: %s of a note: %q, %v", store, name, buf[:max(n, 0)], err)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// idle waits until the process pid uses less than 5% of a CPU over 200
// ms (at most a minute), and returns how long that took, from the start
// of the quiet 200 ms.
func idle(pid int) time.Duration {
	const tick = 200 * time.Millisecond
	t0, c := time.Now(), cpu(pid)
	for time.Since(t0) < time.Minute {
		time.Sleep(tick)
		n := cpu(pid)
		if n-c < tick/20 {
			return time.Since(t0) - tick
		}
		c = n
	}
	return time.Since(t0)
}

// benchExpiry builds the stores and mounts every variant o.rounds times.
func benchExpiry(o options) error {
	logf("writing and importing %d notes twice", o.keys)
	if err := buildExpiryStores(o); err != nil {
		return err
	}
	vs := []expVariant{{"no ttl", o.memfs, "none"}, {"every file a ttl", o.memfs, "ttl"}}
	if o.base != "" {
		vs = append(vs, expVariant{"every file a ttl, -base", o.base, "ttl"})
	}
	if o.noLoop != "" {
		vs = append([]expVariant{{"no expiry loop (ttl store)", o.noLoop, "ttl"}}, vs...)
	}
	got := map[string][]expRound{}
	for r := range o.rounds {
		order := slices.Clone(vs)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, v := range order {
			er, err := measureExpiry(o, v)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, v.name, err)
			}
			logf("round %d %-26s ready %.0f ms (CPU %.0f ms, %.0f ms at +3 s; first write %.1f ms; RSS %.0f MiB, HWM %.0f); write %.1f µs wall, %.1f µs CPU, busy %.0f ms after",
				r+1, v.name, er.ready, er.cpuReady, er.cpuSettled, er.first, er.rss, er.hwm, er.writeWall, er.writeCPU, er.drain)
			got[v.name] = append(got[v.name], er)
		}
	}
	reportExpiry(o, vs, got)
	return nil
}

// reportExpiry prints the median (min–max) over rounds of each figure,
// per variant.
func reportExpiry(o options, vs []expVariant, got map[string][]expRound) {
	fmt.Printf("\n### Expiry: %d notes (badger, imported under notes/), %d rounds, %d rewrites per mount; medians (min–max)\n\n", o.keys, o.rounds, o.writes)
	fmt.Print("| |")
	for _, v := range vs {
		fmt.Printf(" %s |", v.name)
	}
	fmt.Print("\n| --- |" + strings.Repeat(" ---: |", len(vs)) + "\n")
	rows := []struct {
		name string
		get  func(expRound) float64
	}{
		{"mount until ready, ms", func(r expRound) float64 { return r.ready }},
		{"CPU by then, ms", func(r expRound) float64 { return r.cpuReady }},
		{"a rewrite right after, ms", func(r expRound) float64 { return r.first }},
		{"CPU 3 s later, ms", func(r expRound) float64 { return r.cpuSettled }},
		{"VmRSS 3 s later, MiB", func(r expRound) float64 { return r.rss }},
		{"VmHWM 3 s later, MiB", func(r expRound) float64 { return r.hwm }},
		{"rewrite of a note, µs wall", func(r expRound) float64 { return r.writeWall }},
		{"rewrite of a note, µs CPU of memfs (until it idles)", func(r expRound) float64 { return r.writeCPU }},
		{"memfs busy after the last rewrite, ms", func(r expRound) float64 { return r.drain }},
	}
	for _, row := range rows {
		fmt.Printf("| %s |", row.name)
		for _, v := range vs {
			var x []float64
			for _, r := range got[v.name] {
				x = append(x, row.get(r))
			}
			fmt.Printf(" %.1f (%s) |", median(x), span(x, "%.1f"))
		}
		fmt.Println()
	}
	fmt.Println()
}
