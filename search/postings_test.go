package search

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// find returns the entry of document id (from its tf on), or nil: the
// tests' look into a list (the index itself walks lists in order).
func (p *posting) find(id uint32) []byte {
	l := p.locate(id)
	if !l.hasNext || l.next != id {
		return nil
	}
	e := p.data[l.at+l.nextLen:]
	return e[:entryLen(e)]
}

// checkPosting verifies a list's invariants and that it holds exactly
// want (document id -> positions).
func checkPosting(p *posting, want map[uint32][]uint32) error {
	if int(p.n) != len(want) {
		return fmt.Errorf("n = %d, want %d", p.n, len(want))
	}
	ids := slices.Sorted(maps.Keys(want))
	var got []uint32
	starts := make(map[uint32]int) // id -> where its entry starts
	for it := p.iter(); !it.done(); it.advance() {
		got = append(got, it.id)
		starts[it.id] = it.start
		if pos := appendPositions(nil, it.current()); !slices.Equal(pos, want[it.id]) {
			return fmt.Errorf("doc %d: positions %v, want %v", it.id, pos, want[it.id])
		}
	}
	if !slices.Equal(got, ids) {
		return fmt.Errorf("ids %v, want %v", got, ids)
	}
	if len(ids) > 0 && p.last != ids[len(ids)-1] {
		return fmt.Errorf("last %d, want %d", p.last, ids[len(ids)-1])
	}
	if p.blocks != nil {
		total := uint32(0)
		for i, b := range *p.blocks {
			if b.n == 0 || b.n > blockLen {
				return fmt.Errorf("block %d has %d entries", i, b.n)
			}
			if at, ok := starts[b.first]; !ok || at != int(b.off) {
				return fmt.Errorf("block %d: first %d at %d, the list has it at %d (%v)", i, b.first, b.off, at, ok)
			}
			if slices.Index(ids, b.first) != int(total) {
				return fmt.Errorf("block %d starts at entry %d, want %d", i, slices.Index(ids, b.first), total)
			}
			total += b.n
		}
		if total != p.n {
			return fmt.Errorf("blocks hold %d entries, want %d", total, p.n)
		}
	}
	for _, id := range ids {
		if e := p.find(id); e == nil || !slices.Equal(appendPositions(nil, e), want[id]) {
			return fmt.Errorf("find(%d) = %v", id, e)
		}
	}
	for _, step := range []int{1, 3, 40} {
		sk := p.seeker()
		for i := 0; i < len(ids); i += step {
			if e := sk.seek(ids[i]); e == nil || !slices.Equal(appendPositions(nil, e), want[ids[i]]) {
				return fmt.Errorf("seek(%d) by %d = %v", ids[i], step, e)
			}
			if _, ok := want[ids[i]+1]; !ok && sk.seek(ids[i]+1) != nil {
				return fmt.Errorf("seek(%d) of a missing id found something", ids[i]+1)
			}
		}
	}
	return nil
}

func TestPostingModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var p posting
		want := make(map[uint32][]uint32)
		maxID := uint32(50 + rng.IntN(400))
		for op := range 3000 {
			id := uint32(rng.IntN(int(maxID)))
			if _, ok := want[id]; ok && rng.IntN(2) == 0 {
				p.remove(id)
				delete(want, id)
			} else if !ok {
				pos := []uint32{uint32(rng.IntN(5))}
				for range rng.IntN(4) {
					pos = append(pos, pos[len(pos)-1]+1+uint32(rng.IntN(300)))
				}
				p.add(id, appendEntry(nil, pos))
				want[id] = pos
			} else {
				continue
			}
			if op%7 != 0 && op > 200 { // every operation while blocks appear, then some
				continue
			}
			if err := checkPosting(&p, want); err != nil {
				t.Fatalf("seed %d op %d (id %d): %v", seed, op, id, err)
			}
			if p.find(maxID+1) != nil {
				t.Fatalf("find of a missing id found something")
			}
		}
	}
}

// TestPostingBlockFirstRemoval removes the first entries of blocks, whose
// successors' deltas must then count from the previous block.
func TestPostingBlockFirstRemoval(t *testing.T) {
	var p posting
	want := make(map[uint32][]uint32)
	for id := range uint32(1000) {
		p.add(id*3, appendEntry(nil, []uint32{id}))
		want[id*3] = []uint32{id}
	}
	if p.blocks == nil {
		t.Fatal("no block index for 1000 entries")
	}
	for len(*p.blocks) > 2 {
		first := (*p.blocks)[1].first
		p.remove(first)
		delete(want, first)
		if err := checkPosting(&p, want); err != nil {
			t.Fatalf("after removing %d: %v", first, err)
		}
	}
}
