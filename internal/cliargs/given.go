package cliargs

import "flag"

// Given wraps a flag's Value to remember whether the command line gave
// it: the flag package calls Set only for a value on the command line
// (a parser that takes a default from the environment puts it in as the
// default), so an explicit flag can be told from an environment
// variable's value.
type Given struct {
	flag.Value
	given bool // Set was called: the command line holds the flag
}

// Set sets the value, and remembers the command line gave it.
func (v *Given) Set(s string) error {
	v.given = true
	return v.Value.Set(s)
}

// WrapGiven wraps the values of the flags names in set as Given.
func WrapGiven(set *flag.FlagSet, names []string) {
	for _, name := range names {
		if fl := set.Lookup(name); fl != nil {
			fl.Value = &Given{Value: fl.Value}
		}
	}
}

// WasGiven reports whether v, a flag's value (or its Generic getter's
// result), is Given on the command line.
func WasGiven(v any) bool {
	g, ok := v.(*Given)
	return ok && g.given
}
