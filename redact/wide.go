package redact

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// Text in UTF-16 or UTF-32 holds a NUL in every ASCII character, so it is
// binary to IsBinary, and the rules (written for ASCII and UTF-8) find
// nothing in its bytes. Mask therefore also scans such text as the text
// it is: one byte per code unit (the unit itself when it is ASCII, 0xFF,
// which is no character, otherwise), so that a finding's offsets are
// code units, and masks each secret unit by unit with MaskByte in the
// text's own encoding: the value keeps its size and stays valid text.

// wide is the layout of text in UTF-16 or UTF-32.
type wide struct {
	unit  int // bytes per code unit: 2 or 4
	big   bool
	start int // where the text starts: after a byte-order mark
}

// wideText reports whether value is text in UTF-16 or UTF-32: it starts
// with a byte-order mark, or its first 8 KiB have the NUL pattern of
// ASCII text in one of them (three code units in four a printable ASCII
// character, a tab or a line end).
func wideText(value []byte) (wide, bool) {
	switch {
	case bytes.HasPrefix(value, []byte{0xff, 0xfe, 0, 0}):
		return wide{unit: 4, start: 4}, true
	case bytes.HasPrefix(value, []byte{0, 0, 0xfe, 0xff}):
		return wide{unit: 4, big: true, start: 4}, true
	case bytes.HasPrefix(value, []byte{0xff, 0xfe}):
		return wide{unit: 2, start: 2}, true
	case bytes.HasPrefix(value, []byte{0xfe, 0xff}):
		return wide{unit: 2, big: true, start: 2}, true
	}
	sample := value[:min(len(value), binarySniff)]
	if bytes.IndexByte(sample, 0) < 0 {
		return wide{}, false // ASCII text in them has NULs: the fast way out for UTF-8 text
	}
	// UTF-32 first: its ASCII text is no UTF-16 text (every other unit
	// is NUL), the reverse holds too.
	for _, w := range []wide{{unit: 4}, {unit: 4, big: true}, {unit: 2}, {unit: 2, big: true}} {
		if w.looksASCII(sample) {
			return w, true
		}
	}
	return wide{}, false
}

func (w wide) units(v []byte) int { return (len(v) - w.start) / w.unit }

// at returns code unit i of v.
func (w wide) at(v []byte, i int) uint32 {
	b := v[w.start+i*w.unit:]
	switch {
	case w.unit == 2 && w.big:
		return uint32(binary.BigEndian.Uint16(b))
	case w.unit == 2:
		return uint32(binary.LittleEndian.Uint16(b))
	case w.big:
		return binary.BigEndian.Uint32(b)
	default:
		return binary.LittleEndian.Uint32(b)
	}
}

func (w wide) looksASCII(v []byte) bool {
	n := w.units(v)
	if n < 4 {
		return false
	}
	text := 0
	for i := range n {
		if u := w.at(v, i); u == '\t' || u == '\n' || u == '\r' || u >= 0x20 && u < 0x7f {
			text++
		}
	}
	return text*4 >= n*3
}

// narrow returns one byte per code unit of v: the unit when it is ASCII,
// 0xFF otherwise.
func (w wide) narrow(v []byte) []byte {
	out := make([]byte, w.units(v))
	for i := range out {
		if u := w.at(v, i); u < 0x80 {
			out[i] = byte(u)
		} else {
			out[i] = 0xff
		}
	}
	return out
}

// mask writes MaskByte over code units [from, to) of v, in place.
func (w wide) mask(v []byte, from, to int) {
	for i := from; i < to; i++ {
		b := v[w.start+i*w.unit : w.start+(i+1)*w.unit]
		clear(b)
		if w.big {
			b[len(b)-1] = MaskByte
		} else {
			b[0] = MaskByte
		}
	}
}

// findMasks finds the secrets of value as Mask masks them: in its bytes,
// and, in text in UTF-16 or UTF-32, in its code units as well (those
// findings' Start and End are byte offsets in value; their Line and
// Column count code units). apply masks them in a copy of value.
func (r *Redactor) findMasks(key string, value []byte) (findings []Finding, apply func(out []byte)) {
	raw := r.find(key, value)
	w, ok := wideText(value)
	var units []Finding
	if ok {
		units = r.find(key, w.narrow(value))
	}
	if len(units) == 0 {
		return raw, func(out []byte) { maskBytes(out, raw) }
	}
	findings = slices.Clone(raw)
	for _, f := range units {
		f.Start, f.End = w.start+f.Start*w.unit, w.start+f.End*w.unit
		findings = append(findings, f)
	}
	slices.SortStableFunc(findings, func(a, b Finding) int { return a.Start - b.Start })
	return findings, func(out []byte) {
		maskBytes(out, raw)
		for _, f := range units {
			w.mask(out, f.Start, f.End)
		}
	}
}

func maskBytes(out []byte, findings []Finding) {
	for _, f := range findings {
		for i := f.Start; i < f.End; i++ {
			out[i] = MaskByte
		}
	}
}
