package search

import "testing"

// A value with bytes that are not UTF-8 in its first KiB (a zlib object of
// a .git directory: no NUL) is binary: no terms, no snippet.
func TestBinaryNoTermsNoSnippet(t *testing.T) {
	ix := New(Options{})
	v := []byte("x\x9c wombat \xcb\xc9")
	ix.Put("memory/blob", v, DocMeta{Size: int64(len(v))})
	ix.Put("memory/a.md", []byte("a wombat"), DocMeta{Size: 8})
	q := Query{Text: "wombat"}
	if hits := ix.Search(q); len(hits) != 1 || hits[0].Key != "memory/a.md" {
		t.Errorf("search: got %v, want memory/a.md alone", hits)
	}
	if !ix.Has("memory/blob") {
		t.Error("the binary value is not in the index: it keeps its stamp, so that a repair does not load it again")
	}
	if s := ix.Snippet("memory/blob", v, q, SnippetWidth); s != "" {
		t.Errorf("snippet of a binary value: got %q, want none", s)
	}
}
