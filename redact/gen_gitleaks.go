//go:build ignore

// gen_gitleaks copies gitleaks' default rule file (config/gitleaks.toml of
// the module version go.mod requires) to gitleaks.toml, under a header that
// carries gitleaks' MIT notice and version. Run it with go generate after
// a gitleaks upgrade; TestEmbeddedGitleaksIsTheModules fails until then.
package main

import (
	"bytes"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const module = "github.com/zricethezav/gitleaks/v8"

func main() {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", module).Output()
	if err != nil {
		log.Fatalf("go list -m %s: %v", module, err)
	}
	dir, version, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok || dir == "" {
		log.Fatalf("go list -m %s: no module directory in %q", module, out)
	}
	license, err := os.ReadFile(filepath.Join(dir, "LICENSE"))
	if err != nil {
		log.Fatal(err)
	}
	rules, err := os.ReadFile(filepath.Join(dir, "config", "gitleaks.toml"))
	if err != nil {
		log.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("# gitleaks' default rule set, copied from " + module + " " + version + "\n")
	b.WriteString("# (config/gitleaks.toml) by gen_gitleaks.go: run go generate, do not edit.\n")
	b.WriteString("# Its license:\n#\n")
	for _, line := range strings.Split(strings.TrimRight(string(license), "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	b.WriteString(headerEnd + "\n")
	b.Write(rules)
	if err := os.WriteFile("gitleaks.toml", b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// headerEnd ends the header; gitleaks.go's headerEnd is the same line.
const headerEnd = "# ---- end of memfs's header; gitleaks' file follows unchanged ----"
