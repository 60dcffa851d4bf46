package session

import (
	"errors"
	"fmt"
)

// ChooseTransient is the patterns a mount's flags give: none (memfs
// mount --no-transient: persist every name), else values when given
// (--transient, ParseTransient), else nil (DefaultTransient).
func ChooseTransient(none bool, values []string, given bool) ([]string, error) {
	if none {
		if given {
			return nil, errors.New("give --transient or --no-transient, not both")
		}
		return []string{}, nil
	}
	if !given {
		return nil, nil
	}
	pats, err := ParseTransient(values)
	if err != nil {
		return nil, fmt.Errorf("--transient: %w", err)
	}
	return pats, nil
}

// ParseTransient reads transient patterns as a user lists them (memfs
// mount --transient): an empty value stands for no pattern at all
// (persist everything), which goes with no other pattern. The patterns
// are checked (ValidateTransient).
func ParseTransient(values []string) ([]string, error) {
	pats := []string{}
	empty := false
	for _, v := range values {
		if v == "" {
			empty = true
			continue
		}
		pats = append(pats, v)
	}
	if empty && len(pats) > 0 {
		return nil, fmt.Errorf("'' (persist everything) cannot go with patterns %q", pats)
	}
	if err := ValidateTransient(pats); err != nil {
		return nil, fmt.Errorf("%w\n  patterns use path.Match syntax (*, ?, [a-z]), one name segment each", err)
	}
	return pats, nil
}
