package session

import "fmt"

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
