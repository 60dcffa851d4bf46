package cliargs

import "strings"

// Under returns which keys "ls PREFIX" lists, given the entries it may
// list: when PREFIX names a key (a file, a directory) or keys under
// PREFIX/ exist, that key and what is under it, as ls(1) lists a
// directory ("memory/project" is not "memory/project.md"); else every
// key that starts with PREFIX ("memory/pro").
func Under[E any](prefix string, entries []E, key func(E) string) func(key string) bool {
	p := strings.TrimSuffix(prefix, "/")
	named := func(k string) bool { return k == p || strings.HasPrefix(k, p+"/") }
	for _, e := range entries {
		if p != "" && named(key(e)) {
			return named
		}
	}
	return func(k string) bool { return strings.HasPrefix(k, prefix) }
}
