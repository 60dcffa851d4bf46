package redact

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrFound is wrapped by the error of a Check that found secrets: the
// check fails (a pre-commit hook's exit status 1).
var ErrFound = errors.New("secret(s) found")

// Check reports the secrets r finds in the files paths names, as a
// pre-commit check wants them: one line per finding on w,
// "PATH:LINE:COLUMN: RULE", never the secret itself. With no path it
// reads stdin, named "-". Every file is read before any is checked, so a
// file that cannot be read fails the check with nothing reported. found
// is the number of findings; when there are any, the error says how many
// ("redact check: N secret(s) found", wrapping ErrFound).
func (r *Redactor) Check(w io.Writer, paths []string, stdin io.Reader) (found int, err error) {
	if len(paths) == 0 {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return 0, err
		}
		return r.report(w, []string{"-"}, [][]byte{data})
	}
	data := make([][]byte, len(paths))
	for i, p := range paths {
		if data[i], err = os.ReadFile(p); err != nil {
			return 0, err
		}
	}
	return r.report(w, paths, data)
}

// report writes the findings in data[i], read from paths[i].
func (r *Redactor) report(w io.Writer, paths []string, data [][]byte) (found int, err error) {
	for i, p := range paths {
		_, findings := r.Redact(p, data[i])
		for _, f := range findings {
			if _, err := fmt.Fprintf(w, "%s:%d:%d: %s\n", p, f.Line, f.Column, f.RuleID); err != nil {
				return found, err
			}
		}
		found += len(findings)
	}
	if found > 0 {
		return found, fmt.Errorf("redact check: %d %w", found, ErrFound)
	}
	return 0, nil
}
