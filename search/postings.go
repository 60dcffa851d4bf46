package search

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"
)

// blockLen is the number of entries after which a postings list gets a
// block index, and the most entries a block holds before it is split.
const blockLen = 32

// posting is the postings list of one term: one byte stream of entries in
// ascending document id, each the uvarint id delta from the entry before
// (the first: the id), then the entry (see appendEntry). Most terms occur in one document (identifiers, names),
// so the fixed size of a posting is much of the index's size: it is held
// by value, and the block index exists only for long lists.
type posting struct {
	term   string
	data   []byte
	blocks *[]block // nil while the list has at most blockLen entries
	n      uint32   // entries
	last   uint32   // document id of the last entry
}

// block is a run of entries of a long list, so that an entry is found
// without decoding the list from its start.
type block struct {
	first uint32 // document id of the block's first entry
	off   uint32 // where the first entry (its id delta) starts in data
	n     uint32 // entries
}

// df returns the number of documents holding the term.
func (p *posting) df() int { return int(p.n) }

// loc is a place in a postings list, as locate finds it.
type loc struct {
	at      int    // where the entry of the id starts, or where it would be inserted
	prev    uint32 // id of the entry before at (0 at the start)
	hasNext bool   // an entry starts at at
	next    uint32 // its id
	nextLen int    // the length of its id delta
	bi      int    // the block that holds at; -1 without blocks
}

// locate finds where the entry of id is or would go.
func (p *posting) locate(id uint32) loc {
	l := loc{bi: -1}
	count, first := int(p.n), uint32(0)
	if p.blocks != nil {
		bs := *p.blocks
		l.bi = max(0, sort.Search(len(bs), func(i int) bool { return bs[i].first > id })-1)
		l.at, count, first = int(bs[l.bi].off), int(bs[l.bi].n), bs[l.bi].first
	}
	for i := range count {
		d, m := binary.Uvarint(p.data[l.at:])
		cur := l.prev + uint32(d)
		if i == 0 && l.bi >= 0 {
			cur = first // the delta is from the previous block's last entry
		}
		if cur >= id {
			l.hasNext, l.next, l.nextLen = true, cur, m
			return l
		}
		l.prev = cur
		l.at += m + entryLen(p.data[l.at+m:])
	}
	if l.at < len(p.data) { // the next block's first entry
		_, m := binary.Uvarint(p.data[l.at:])
		l.hasNext, l.next, l.nextLen = true, (*p.blocks)[l.bi+1].first, m
	}
	return l
}

// add inserts the entry of document id, which the list does not hold.
func (p *posting) add(id uint32, entry []byte) {
	if p.n == 0 || id > p.last {
		at := len(p.data)
		var buf [binary.MaxVarintLen32]byte
		delta := binary.PutUvarint(buf[:], uint64(id-p.last))
		if p.data == nil { // exact size: most terms stay in one document
			p.data = make([]byte, 0, delta+len(entry))
		}
		p.data = append(append(p.data, buf[:delta]...), entry...)
		p.n++
		p.last = id
		switch {
		case p.blocks != nil:
			bs := *p.blocks
			if b := &bs[len(bs)-1]; b.n < blockLen {
				b.n++
			} else {
				*p.blocks = append(bs, block{first: id, off: uint32(at), n: 1})
			}
		case p.n > blockLen:
			p.index()
		}
		return
	}
	l := p.locate(id)
	// Replace the next entry's delta with the new entry and the next
	// entry's delta from id.
	ins := binary.AppendUvarint(nil, uint64(id-l.prev))
	ins = append(ins, entry...)
	mid := len(ins)
	ins = binary.AppendUvarint(ins, uint64(l.next-id))
	p.splice(l.at, l.at+l.nextLen, ins)
	p.n++
	if p.blocks == nil {
		if p.n > blockLen {
			p.index()
		}
		return
	}
	bs := *p.blocks
	b := &bs[l.bi]
	if uint32(l.at) == b.off {
		b.first = id
	}
	b.n++
	shift := len(ins) - l.nextLen
	for j := l.bi + 1; j < len(bs); j++ {
		if bs[j].off == uint32(l.at) { // the next entry starts block j
			bs[j].off = uint32(l.at + mid)
		} else {
			bs[j].off += uint32(shift)
		}
	}
	if b.n > blockLen {
		p.split(l.bi)
	}
}

// remove drops the entry of document id, if the list holds it.
func (p *posting) remove(id uint32) {
	l := p.locate(id)
	if !l.hasNext || l.next != id {
		return
	}
	if l.bi > 0 && uint32(l.at) == (*p.blocks)[l.bi].off {
		l.prev = p.blockLast(l.bi - 1) // locate starts a block knowing no prev
	}
	e := l.at + l.nextLen
	e += entryLen(p.data[e:]) // the next entry starts at e
	var repl []byte
	end := e
	var succ uint32
	hasSucc := e < len(p.data)
	if hasSucc {
		d, m := binary.Uvarint(p.data[e:])
		succ = id + uint32(d)
		end = e + m
		repl = binary.AppendUvarint(nil, uint64(succ-l.prev))
	} else {
		p.last = l.prev
	}
	p.splice(l.at, end, repl)
	p.n--
	if p.n == 0 {
		*p = posting{term: p.term}
		return
	}
	if p.blocks == nil {
		return
	}
	bs := *p.blocks
	b := &bs[l.bi]
	b.n--
	if b.n > 0 && uint32(l.at) == b.off {
		b.first = succ // the successor is in the same block
	}
	shift := len(repl) - (end - l.at)
	for j := l.bi + 1; j < len(bs); j++ {
		if bs[j].off == uint32(e) { // the successor starts block j
			bs[j].off = uint32(l.at)
		} else {
			bs[j].off += uint32(shift)
		}
	}
	if b.n == 0 {
		bs = slices.Delete(bs, l.bi, l.bi+1)
		*p.blocks = bs
	}
	if p.n <= blockLen/2 {
		p.blocks = nil
	}
}

// splice replaces data[from:to] with b, and gives memory back when the
// list has shrunk to a quarter of its capacity.
func (p *posting) splice(from, to int, b []byte) {
	p.data = slices.Replace(p.data, from, to, b...)
	if c := cap(p.data); c > 64 && len(p.data) < c/4 {
		p.data = slices.Clone(p.data)
	}
}

// index builds the block index of a list by decoding it.
func (p *posting) index() {
	var bs []block
	it := p.iter()
	for i := 0; !it.done(); i++ {
		if i%blockLen == 0 {
			bs = append(bs, block{first: it.id, off: uint32(it.start)})
		}
		bs[len(bs)-1].n++
		it.advance()
	}
	p.blocks = &bs
}

// blockLast returns the id of block bi's last entry.
func (p *posting) blockLast(bi int) uint32 {
	b := (*p.blocks)[bi]
	at, id := int(b.off), b.first
	for i := range b.n {
		d, m := binary.Uvarint(p.data[at:])
		if i > 0 {
			id += uint32(d)
		}
		at += m + entryLen(p.data[at+m:])
	}
	return id
}

// split halves block bi.
func (p *posting) split(bi int) {
	bs := *p.blocks
	b := bs[bi]
	half := b.n / 2
	// Walk half the block's entries.
	at, id := int(b.off), b.first
	for i := range half + 1 {
		d, m := binary.Uvarint(p.data[at:])
		if i > 0 {
			id += uint32(d)
		}
		if i == half {
			break
		}
		at += m + entryLen(p.data[at+m:])
	}
	bs[bi].n = half
	*p.blocks = slices.Insert(bs, bi+1, block{first: id, off: uint32(at), n: b.n - half})
}

// seeker finds entries of ascending document ids in one list, walking it
// forward and jumping over blocks.
type seeker struct {
	p  *posting
	it iterator
	bi int // the last block jumped to
}

func (p *posting) seeker() *seeker { return &seeker{p: p, it: p.iter()} }

// seek returns the entry of document id, which must not be below the ids
// sought before, or nil.
func (s *seeker) seek(id uint32) []byte {
	if s.p.blocks != nil {
		bs := *s.p.blocks
		if s.bi+1 < len(bs) && bs[s.bi+1].first <= id {
			j := s.bi + sort.Search(len(bs)-s.bi-1, func(i int) bool { return bs[s.bi+1+i].first > id })
			s.bi = j
			if int(bs[j].off) > s.it.start {
				s.it.jump(bs[j])
			}
		}
	}
	for !s.it.done() && s.it.id < id {
		s.it.advance()
	}
	if s.it.done() || s.it.id != id {
		return nil
	}
	return s.it.current()
}

// iterator walks a list's entries in document order.
type iterator struct {
	data  []byte
	start int    // where the current entry (its id delta) starts
	entry int    // where its tf starts
	next  int    // where the next entry starts
	id    uint32 // its document id; math.MaxUint32 past the end
}

func (p *posting) iter() iterator {
	it := iterator{data: p.data}
	it.advance()
	return it
}

func (it *iterator) done() bool { return it.start >= len(it.data) }

// advance moves to the next entry.
func (it *iterator) advance() {
	it.start = it.next
	if it.next >= len(it.data) {
		it.id = math.MaxUint32
		return
	}
	d, m := binary.Uvarint(it.data[it.next:])
	if it.next == 0 {
		it.id = uint32(d)
	} else {
		it.id += uint32(d)
	}
	it.entry = it.next + m
	it.next = it.entry + entryLen(it.data[it.entry:])
}

// jump moves to the first entry of block b.
func (it *iterator) jump(b block) {
	it.next = int(b.off)
	it.advance()
	it.id = b.first // the delta was from the previous block
}

// current returns the current entry (after its id delta).
func (it *iterator) current() []byte { return it.data[it.entry:it.next] }
