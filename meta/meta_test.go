package meta_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/meta"
)

func TestValidateType(t *testing.T) {
	for _, v := range meta.DefaultTypes() {
		if err := meta.Validate(meta.Type, []byte(v)); err != nil {
			t.Errorf("Validate(type %q) = %v, want nil", v, err)
		}
	}
	added, err := meta.ParseTypes("incident, runbook")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		types meta.Types
		value string
		ok    bool
	}{
		{"default set, a default type", meta.Types{}, "decision", true},
		{"default set, an unknown type", meta.Types{}, "incident", false},
		{"added set, an added type", added, "incident", true},
		{"added set, a default type", added, "note", true},
		{"added set, an unknown type", added, "guess", false},
		{"case matters", meta.Types{}, "Decision", false},
		{"empty", meta.Types{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := meta.ValidateWith(tt.types, meta.Type, []byte(tt.value))
			if tt.ok {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, meta.ErrInvalid) {
				t.Fatalf("got %v, want an error wrapping ErrInvalid", err)
			}
			// The error names every type the set holds, added ones too.
			for _, v := range tt.types.List() {
				if !strings.Contains(err.Error(), v) {
					t.Errorf("error %q does not list the type %q", err, v)
				}
			}
		})
	}
	if got := added.List(); !slices.Equal(got, append(meta.DefaultTypes(), "incident", "runbook")) {
		t.Errorf("List = %q, want the defaults, then incident and runbook", got)
	}
}

func TestParseTypes(t *testing.T) {
	tests := []struct {
		v     string
		added []string // beyond the defaults; nil with an error
		ok    bool
	}{
		{"", nil, true},
		{"  ", nil, true},
		{"incident", []string{"incident"}, true},
		{" incident ,runbook", []string{"incident", "runbook"}, true},
		{"incident,incident,fact", []string{"incident"}, true}, // a repeat, a default: nothing new
		{"incident,,runbook", nil, false},
		{"two words", nil, false},
		{"a,b/c", nil, false},
		{strings.Repeat("x", meta.MaxAgentLen+1), nil, false},
	}
	for _, tt := range tests {
		got, err := meta.ParseTypes(tt.v)
		if (err == nil) != tt.ok {
			t.Errorf("ParseTypes(%q) error = %v, want ok %v", tt.v, err, tt.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, meta.ErrInvalid) {
				t.Errorf("ParseTypes(%q) = %v, want an error wrapping ErrInvalid", tt.v, err)
			}
			continue
		}
		if want := append(meta.DefaultTypes(), tt.added...); !slices.Equal(got.List(), want) {
			t.Errorf("ParseTypes(%q).List() = %q, want %q", tt.v, got.List(), want)
		}
	}
}

func TestValidateSession(t *testing.T) {
	for v, ok := range map[string]bool{
		"s1":                           true,
		"claude.2026-11-23T10:00Z@h_1": true,
		strings.Repeat("s", 128):       true,
		"":                             false,
		strings.Repeat("s", 129):       false,
		"a/b":                          false, // a run id's form: no '/'
		"a b":                          false,
		"line\nbreak":                  false,
	} {
		err := meta.Validate(meta.Session, []byte(v))
		if (err == nil) != ok {
			t.Errorf("Validate(session %q) = %v, want ok %v", v, err, ok)
		}
		if err != nil && !errors.Is(err, meta.ErrInvalid) {
			t.Errorf("Validate(session %q) = %v, want an error wrapping ErrInvalid", v, err)
		}
	}
}

func TestUnknownAttributeNamesSessionAndType(t *testing.T) {
	err := meta.Validate(meta.Prefix+"kind", []byte("fact"))
	if !errors.Is(err, meta.ErrInvalid) {
		t.Fatalf("Validate(user.memfs.kind) = %v, want an error wrapping ErrInvalid", err)
	}
	for _, w := range []string{"session", "type"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name the known attribute %s", err, w)
		}
	}
}

func TestParseSessionAndType(t *testing.T) {
	tests := []struct {
		name         string
		x            map[string][]byte
		session, typ string
	}{
		{"set", map[string][]byte{meta.Session: []byte("s1"), meta.Type: []byte("decision")}, "s1", "decision"},
		// A type some mount added is read back by a reader that does
		// not know it: it was checked where it was set.
		{"an added type", map[string][]byte{meta.Type: []byte("incident")}, "", "incident"},
		{"unset", nil, "", ""},
		{"not of the form", map[string][]byte{meta.Session: []byte("a/b"), meta.Type: []byte("two words")}, "", ""},
	}
	for _, tt := range tests {
		a := meta.Parse(tt.x)
		if a.Session != tt.session || a.Type != tt.typ {
			t.Errorf("%s: Parse = session %q, type %q; want %q, %q", tt.name, a.Session, a.Type, tt.session, tt.typ)
		}
	}
}

func TestCheckFilter(t *testing.T) {
	added, err := meta.ParseTypes("incident")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		types        meta.Types
		session, typ string
		ok           bool
	}{
		{meta.Types{}, "", "", true},
		{meta.Types{}, "s1", "decision", true},
		{meta.Types{}, "", "incident", false},
		{added, "", "incident", true},
		{added, "a/b", "", false},
	} {
		err := tt.types.CheckFilter(tt.session, tt.typ)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, meta.ErrInvalid) {
			t.Errorf("CheckFilter(%q, %q) with %q = %v, want ok %v", tt.session, tt.typ, tt.types.List(), err, tt.ok)
		}
	}
}

// A run id is what a checkpoint's first part may be: ASCII letters,
// digits and . _ -, not starting with '.', at most 128 bytes.
func TestValidateRun(t *testing.T) {
	for v, ok := range map[string]bool{
		"task-1.a_B": true, strings.Repeat("r", 128): true,
		"": false, ".hidden": false, "..": false, "a/b": false, "agent@host": false, "a:b": false,
		"é": false, strings.Repeat("r", 129): false, "a\nb": false,
	} {
		if err := meta.ValidateRun(v); (err == nil) != ok {
			t.Errorf("ValidateRun(%q) = %v, want ok %v", v, err, ok)
		}
	}
}
