package session

import (
	"slices"
	"sync/atomic"
)

// The memory budget (Options.MaxMemory) bounds the bytes of values the
// session holds. Past it, clean values (the store has them as they are)
// that no File holds open are dropped, least recently opened first, and
// load again at their next open; a value with changes not yet flushed is
// never dropped: when the budget is still passed, by such values that no
// File holds open, the session asks for a flush (Options.Pressure), which
// makes them clean, so that they can go. The store is where a large dirty
// value goes ("spills"): it leaves memory the way every value does,
// redacted, and it was going there anyway; the flush interval is the
// longest a change waits, not a promise that it waits.
//
// A value open through a File is pinned: a reader sees the bytes it
// opened, a writer never sees its value change (a reload would give the
// store's, redacted, bytes). Values are counted at their capacity, which
// is what they take from the heap.
//
// The accounting is exact when it matters and cheap otherwise: a trim
// (trimLocked) sums every loaded value, and between trims the bytes loaded
// and grown are added up (budget.added); a trim runs when they pass the
// room the last trim left. A trim that cannot get under the budget (every
// value left is dirty or open) leaves an eighth of the budget as room, so
// that a stream of writes does not scan the session at every write.

// budget is the session's memory accounting; its fields are guarded by
// Context.mu, but tick, which an Open moves under the read lock.
type budget struct {
	max   int64         // Options.MaxMemory; 0: no budget
	room  int64         // bytes that may be added before the next trim
	held  int64         // bytes of values held at the last trim
	added int64         // bytes loaded and grown since the last trim
	drops int           // values dropped so far
	tick  atomic.Uint32 // counts opens: file.used orders values by their last open
}

// lowWater is where a trim takes the held bytes down to: under the budget
// by an eighth, so that the next trim waits for an eighth of it.
func (b *budget) lowWater() int64 { return b.max - b.max/8 }

// MemoryStats is the session's memory accounting (see Options.MaxMemory).
type MemoryStats struct {
	Budget  int64 // Options.MaxMemory; 0: no budget
	Held    int64 // bytes of the values in memory (at their capacity)
	Dirty   int64 // of those, bytes of values with unflushed changes
	Pinned  int64 // of those, bytes of clean values open through a File
	Dropped int   // clean values dropped under the budget so far
}

// Memory reports the bytes of values the session holds now (a scan of
// every file).
func (s *Stats) Memory() MemoryStats {
	c := s.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	st := MemoryStats{Budget: c.mu.mem.max, Dropped: c.mu.mem.drops}
	c.eachValueLocked(func(f *file) {
		n := int64(cap(f.data))
		st.Held += n
		switch {
		case f.gen != 0:
			st.Dirty += n
		case f.open.Load() > 0:
			st.Pinned += n
		}
	})
	return st
}

// eachValueLocked calls fn once for every file of the namespace whose
// value is in memory (a node with hard links once).
func (c *Context) eachValueLocked(fn func(f *file)) {
	var seen map[*file]bool
	for _, f := range c.mu.tree.files {
		if !f.loaded || f.data == nil {
			continue
		}
		if f.link != nil {
			if seen[f] {
				continue
			}
			if seen == nil {
				seen = make(map[*file]bool)
			}
			seen[f] = true
		}
		fn(f)
	}
}

// grewLocked notes n bytes loaded or grown, and reports whether a trim is
// due.
func (c *Context) grewLocked(n int64) bool {
	if c.mu.mem.max <= 0 || n <= 0 {
		return false
	}
	c.mu.mem.added += n
	return c.mu.mem.added > c.mu.mem.room
}

// touchRLocked marks f as opened now, for the least-recently-opened
// order. The read lock is enough.
func (c *Context) touchRLocked(f *file) {
	f.used.Store(c.mu.mem.tick.Add(1))
}

// trimLocked drops clean, unpinned values, least recently opened first,
// until the held bytes are under the budget's low water mark, and
// reports whether a flush would let more go: the budget is still passed,
// and by values with unflushed changes that no File holds open (a flush
// of values still open frees nothing until they are closed, and costs a
// save of each).
func (c *Context) trimLocked() (pressure bool, dropped int64) {
	if c.mu.mem.max <= 0 {
		return false, 0
	}
	var held, spillable int64
	var drop []*file
	c.eachValueLocked(func(f *file) {
		n := int64(cap(f.data))
		held += n
		switch {
		case f.open.Load() != 0:
		case f.gen != 0:
			spillable += n
		case f.mode.IsRegular() && f.key != "":
			drop = append(drop, f)
		}
	})
	if held > c.mu.mem.max {
		// Oldest first: the distance back from the tick, which wraps.
		now := c.mu.mem.tick.Load()
		slices.SortFunc(drop, func(a, b *file) int {
			da, db := now-a.used.Load(), now-b.used.Load()
			switch {
			case da > db:
				return -1
			case da < db:
				return 1
			}
			return 0
		})
		low := c.mu.mem.lowWater()
		for _, f := range drop {
			if held <= low {
				break
			}
			held -= int64(cap(f.data))
			dropped += int64(cap(f.data))
			c.dropLocked(f)
		}
	}
	c.mu.mem.held, c.mu.mem.added = held, 0
	c.mu.mem.room = max(c.mu.mem.max-held, c.mu.mem.max/8)
	return held > c.mu.mem.max && spillable >= c.mu.mem.max/8, dropped
}

// dropLocked lets f's clean value go; the next open loads it again. Its
// version moves, so that the kernel does not keep pages of the old bytes
// (the store may hold them redacted).
func (c *Context) dropLocked(f *file) {
	f.data, f.loaded = nil, false
	f.shared.Store(false)
	f.ver++
	delete(c.mu.conflict.mergeBase, f)
	c.mu.mem.drops++
}

// trim runs a trim when one is due and asks for a flush when dirty values
// alone are past the budget.
func (c *Context) trim(due bool) {
	if !due {
		return
	}
	c.mu.Lock()
	pressure, dropped := c.trimLocked()
	c.mu.Unlock()
	c.released(dropped)
	if pressure && c.opts.Pressure != nil {
		c.opts.Pressure()
	}
}

// released tells Options.Released of n bytes let go.
func (c *Context) released(n int64) {
	if n > 0 && c.opts.Released != nil {
		c.opts.Released(n)
	}
}

// trimNow is trim after something that may have made values droppable (a
// flush, a close): a trim is due when the held bytes may be past the
// budget.
func (c *Context) trimNow() {
	c.mu.RLock()
	due := c.overRLocked()
	c.mu.RUnlock()
	c.trim(due)
}

// overRLocked reports whether the values held pass the budget.
func (c *Context) overRLocked() bool {
	return c.mu.mem.max > 0 && c.mu.mem.held+c.mu.mem.added > c.mu.mem.max
}

// pinKey holds the value of file key in memory until unpin (nil: key is
// no file): a change that loads a value to save it with the change
// (an attribute, a new name) must not see it dropped in between.
func (c *Context) pinKey(key string) *file {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f := c.mu.tree.files[key]
	if f != nil {
		f.open.Add(1)
	}
	return f
}
