package manpage

import (
	"strings"
	"testing"
)

func TestFinish(t *testing.T) {
	env := map[string]string{"HOME": "/home/inst", "XDG_CONFIG_HOME": "/home/inst/cfg", "XDG_DATA_HOME": "/"}
	page := Finish("(default: badger:/home/inst/.local/share/memfs/store) (default: /home/inst/cfg/memfs/redact.json) /home/install/x\n", func(k string) string { return env[k] })
	for _, want := range []string{"badger:~/.local/share/memfs/store", "$XDG_CONFIG_HOME/memfs/redact.json", "/home/install/x", ".SH EXIT STATUS"} {
		if !strings.Contains(page, want) {
			t.Errorf("Finish lacks %q:\n%.300s", want, page)
		}
	}
}
