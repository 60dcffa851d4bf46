package contextpack

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/memfs/memfs/repo"
)

// Name writes words as the NAME of .memfs/context/NAME, the form ParseName
// reads: joined with spaces, then percent-encoded, dots too (a name ending
// in ManifestSuffix asks for a manifest, so a query word that ends so must
// not).
func Name(words ...string) string {
	return strings.ReplaceAll(url.PathEscape(strings.Join(words, " ")), ".", "%2E")
}

// ErrName is wrapped by ParseName's errors: a name that is no pack's.
var ErrName = errors.New("invalid context pack name")

// ParseName reads the name of a pack file: "" for .memfs/context.md, NAME
// for .memfs/context/NAME, either followed by ManifestSuffix for the
// pack's manifest (ManifestSuffix alone is .memfs/context.manifest.json).
// NAME is percent-encoded words: "max:N" (Options.MaxChars, N ≥ 1),
// "summaries:K" (Options.Summaries; 0 asks for none), "at:SEQ" (the pack
// as it stood when the event log's head was SEQ ≥ 1; at is 0 without
// one), "type:T" and "session:S" (Options.Type, Options.Session: only the
// notes of that memory type, of that session), "repo:HASH" (Options.Repo:
// the pack of a repository, HASH as memfs repo id prints it; "repo:HASH,
// PARENT,..." also sets Options.RepoParents), and the rest
// the query
// (Options.Query, its words joined by single spaces). The error of a name that does not decode, or of a word of the
// grammar with a bad value, does not quote the name: a query may be a
// paragraph.
func ParseName(name string) (o Options, at uint64, manifest bool, err error) {
	base, manifest := strings.CutSuffix(name, ManifestSuffix)
	dec, err := url.PathUnescape(base)
	if err != nil {
		return Options{}, 0, false, fmt.Errorf("context: %w: %w", ErrName, err)
	}
	var query []string
	for _, w := range strings.Fields(dec) {
		k, v, ok := strings.Cut(w, ":")
		switch {
		case ok && k == "max":
			if o.MaxChars, err = strconv.Atoi(v); err != nil || o.MaxChars < 1 {
				return Options{}, 0, false, fmt.Errorf("context: %w: max:%s: want a positive number of characters", ErrName, v)
			}
		case ok && k == "summaries":
			if o.Summaries, err = strconv.Atoi(v); err != nil {
				return Options{}, 0, false, fmt.Errorf("context: %w: summaries:%s: want a number", ErrName, v)
			}
			if o.Summaries == 0 {
				o.Summaries = -1
			}
		case ok && (k == "type" || k == "session"):
			f := &o.Type
			if k == "session" {
				f = &o.Session
			}
			if v == "" || *f != "" {
				return Options{}, 0, false, fmt.Errorf("context: %w: %s: want one value, given once", ErrName, k)
			}
			*f = v
		case ok && k == "repo":
			ids := strings.Split(v, ",")
			if o.Repo != "" || slices.ContainsFunc(ids, func(id string) bool { return repo.ValidateHash(id) != nil }) {
				return Options{}, 0, false, fmt.Errorf("context: %w: repo: want one repository id (16 hex digits, as memfs repo id prints it), or ID,PARENT..., given once", ErrName)
			}
			o.Repo = ids[0]
			if len(ids) > 1 {
				o.RepoParents = ids[1:]
			}
		case ok && k == "at":
			if at != 0 {
				return Options{}, 0, false, fmt.Errorf("context: %w: at: given twice", ErrName)
			}
			if at, err = strconv.ParseUint(v, 10, 64); err != nil || at == 0 {
				return Options{}, 0, false, fmt.Errorf("context: %w: at:%s: want an event-log sequence number (1 or more)", ErrName, v)
			}
		default:
			query = append(query, w)
		}
	}
	o.Query = strings.Join(query, " ")
	return o, at, manifest, nil
}
