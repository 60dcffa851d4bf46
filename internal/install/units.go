package install

import (
	"embed"
	"strconv"
	"strings"
	"text/template"
)

// The systemd units' one source: templates whose {{.Memfs}} becomes the
// binary install runs as.
//
//go:embed systemd/memfs@.service systemd/user/memfs@.service
var unitFS embed.FS

// Unit is the text of the system unit (user false) or the user unit
// (user true), its commands running the memfs binary at memfs.
func Unit(user bool, memfs string) string {
	name := "systemd/memfs@.service"
	if user {
		name = "systemd/user/memfs@.service"
	}
	tmpl := template.Must(template.ParseFS(unitFS, name))
	var b strings.Builder
	if err := tmpl.Execute(&b, struct{ Memfs string }{execWord(memfs)}); err != nil {
		panic(err) // the templates are this package's own
	}
	return b.String()
}

// execWord is path as the first word of a unit's Exec line
// (systemd.service(5), "Command lines"): specifiers (%) doubled (a $ is
// not expanded in the command's own name, systemd-analyze verify shows),
// and in double quotes with C escapes when it holds a space, a quote or a
// backslash.
func execWord(path string) string {
	path = strings.ReplaceAll(path, "%", "%%")
	if !strings.ContainsAny(path, " \t\n\"'\\") {
		return path
	}
	return strconv.Quote(path)
}
