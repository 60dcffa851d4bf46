package hint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The MCP registration memfs hint --write puts beside the hint: the
// server named ServerName, which runs memfs mcp through the mount. Claude
// Code reads a project's .mcp.json, Gemini CLI a project's
// .gemini/settings.json (JSON, where the entry's name is its mark: it is
// replaced, every other entry and key kept), Codex a (trusted) project's
// .codex/config.toml, where the table sits between marker comments as the
// hint does in a Markdown file. All three are the project's, beside its
// instructions file: hint writes nothing in the user's home.

// ServerName is the name memfs is registered under.
const ServerName = "memfs"

// The marker lines of the Codex table.
const (
	TOMLBegin = "# memfs:begin (written by memfs hint; replaced on the next memfs hint --write)"
	TOMLEnd   = "# memfs:end"
)

// MCPArgs is the command line an agent runs memfs mcp with: through the
// mount at mnt, unless it is the placeholder (then the default store, or
// the mount that serves it).
func MCPArgs(mnt string) []string {
	if mnt == "" || mnt == Placeholder {
		return []string{"memfs", "mcp"}
	}
	return []string{"memfs", "mcp", "--mount", mnt}
}

// MCPFile is the file agent reads its MCP servers from, for a project in
// dir (the directory of its instructions file).
func MCPFile(agent, dir string) (string, error) {
	switch agent {
	case "claude":
		return filepath.Join(dir, ".mcp.json"), nil
	case "gemini":
		return filepath.Join(dir, ".gemini", "settings.json"), nil
	case "codex":
		return filepath.Join(dir, ".codex", "config.toml"), nil
	}
	return "", fmt.Errorf("unknown agent %q", agent)
}

// WriteMCP registers memfs mcp (MCPArgs(mnt)) in file, agent's MCP
// configuration (MCPFile): in place of an earlier registration, the rest
// of the file kept. It reports whether the file changed.
func WriteMCP(agent, file, mnt string) (bool, error) {
	args := MCPArgs(mnt)
	if agent == "codex" {
		quoted := make([]string, len(args)-1)
		for i, a := range args[1:] {
			quoted[i] = strconv.Quote(a)
		}
		table := fmt.Sprintf("%s\n[mcp_servers.%s]\ncommand = %q\nargs = [%s]\n%s\n", TOMLBegin, ServerName, args[0], strings.Join(quoted, ", "), TOMLEnd)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return false, err
		}
		return writeMarked(file, table, TOMLBegin, TOMLEnd)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return false, err
	}
	file, err := target(file)
	if err != nil {
		return false, err
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	updated, err := withServer(old, args)
	if err != nil {
		return false, fmt.Errorf("%s: %w; fix it, or register memfs by hand", file, err)
	}
	return replace(file, old, updated)
}

// withServer is the JSON settings old (empty: none yet) with the server
// ServerName running args under mcpServers, every other key kept.
func withServer(old []byte, args []string) ([]byte, error) {
	top := map[string]json.RawMessage{}
	if strings.TrimSpace(string(old)) != "" {
		if err := json.Unmarshal(old, &top); err != nil {
			return nil, fmt.Errorf("not a JSON object (%v)", err)
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := top["mcpServers"]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, fmt.Errorf("mcpServers is not an object (%v)", err)
		}
	}
	entry, err := json.Marshal(map[string]any{"command": args[0], "args": args[1:]})
	if err != nil {
		return nil, err
	}
	servers[ServerName] = entry
	if top["mcpServers"], err = json.Marshal(servers); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(top, "", "  ")
	return append(b, '\n'), err
}

// WriteMCPBeside registers memfs mcp (WriteMCP) for agent, whose
// instructions file is file, and returns the file it wrote.
func WriteMCPBeside(agent, file, mnt string) (string, bool, error) {
	mf, err := MCPFile(agent, filepath.Dir(file))
	if err != nil {
		return "", false, err
	}
	changed, err := WriteMCP(agent, mf, mnt)
	return mf, changed, err
}
