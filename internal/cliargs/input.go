package cliargs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ReadInput reads what a FILE argument names: the file, or stdin when
// FILE is "" or "-" (as cat(1) takes it).
func ReadInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "" || file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}

// ParseMode reads a permission mode written in octal (0644, 600), as
// chmod(1) takes it; the error quotes s.
func ParseMode(s string) (fs.FileMode, error) {
	var mode uint32
	if _, err := fmt.Sscanf(s, "%o", &mode); err != nil || mode > 0o777 {
		return 0, fmt.Errorf("%q: want an octal mode such as 0644", s)
	}
	return fs.FileMode(mode), nil
}

// Prefix is the key prefix a command is given: its PREFIX argument (arg)
// or --prefix (flag), either one, or both when they agree.
func Prefix(arg, flag string) (string, error) {
	switch {
	case arg == "":
		return flag, nil
	case flag != "" && flag != arg:
		return "", fmt.Errorf("PREFIX %q and --prefix %q disagree", arg, flag)
	}
	return arg, nil
}
