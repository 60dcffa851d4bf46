// Package searchtest holds what the tests of search (the index's format)
// and search/live (the service) share: a memory store of system records
// that counts its saves, and the fake secret their redaction finds. It
// imports neither package, so that search's own tests can use it.
package searchtest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
)

// MemSys is a memory store (backend/memstore) that counts its SaveSys
// calls.
type MemSys struct {
	*memstore.Store
	Saves atomic.Int64 // successful SaveSys calls
}

// NewMemSys returns an empty MemSys.
func NewMemSys() *MemSys { return &MemSys{Store: memstore.New()} }

// SaveSys is the store's, counted in Saves when it succeeds.
func (m *MemSys) SaveSys(ctx context.Context, name string, data []byte) error {
	err := m.Store.SaveSys(ctx, name, data)
	if err == nil {
		m.Saves.Add(1)
	}
	return err
}

// Records returns every record by name.
func (m *MemSys) Records(tb testing.TB) map[string][]byte {
	tb.Helper()
	es, err := m.ListSys(context.Background(), "")
	if err != nil {
		tb.Fatal(err)
	}
	recs := make(map[string][]byte, len(es))
	for _, e := range es {
		recs[e.Key] = m.Rec(tb, e.Key)
	}
	return recs
}

// Rec returns the record name, or nil if there is none.
func (m *MemSys) Rec(tb testing.TB, name string) []byte {
	tb.Helper()
	d, err := m.LoadSys(context.Background(), name)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// Put stores a record behind the index's back, without counting it.
func (m *MemSys) Put(tb testing.TB, name string, data []byte) {
	tb.Helper()
	if err := m.Store.SaveSys(context.Background(), name, data); err != nil {
		tb.Fatal(err)
	}
}

// Size is the bytes of every record together.
func (m *MemSys) Size(tb testing.TB) int {
	tb.Helper()
	es, err := m.ListSys(context.Background(), "")
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, e := range es {
		n += int(e.Info.Size)
	}
	return n
}

// Secret is the fake secret of the tests: "tok_" and 20 alphanumerics,
// found by SecretRE (the real rules live in package redact, which changes
// on its own; the contract under test is the index's).
const Secret = "tok_Zq8Wm3Xr5Tn7Vb2Kc4Ld"

// SecretRE finds Secret and every string of its shape.
var SecretRE = regexp.MustCompile(`tok_[A-Za-z0-9]{20}`)

// SecretIn returns the name of a record of sys that holds a 12-byte piece
// of Secret in any case (terms are lower-cased), or "".
func SecretIn(t *testing.T, sys *MemSys) string {
	t.Helper()
	secret := strings.ToLower(Secret)
	for name, rec := range sys.Records(t) {
		rec = bytes.ToLower(rec)
		for i := 0; i+12 <= len(secret); i++ {
			if bytes.Contains(rec, []byte(secret[i:i+12])) {
				return name
			}
		}
	}
	return ""
}

// Normalize scales v to unit length (a zero vector stays zero).
func Normalize(v []float32) {
	n := 0.0
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
}
