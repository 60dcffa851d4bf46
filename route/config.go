package route

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Config is a mount's layout written down, so that an fstab or systemd
// line stays short: memfs.toml, the first of $MEMFS_CONFIG,
// $XDG_CONFIG_HOME/memfs/memfs.toml (~/.config/memfs/memfs.toml) and
// /etc/memfs/memfs.toml that exists. Routes and quotas are written as the
// flags take them, keyed by prefix; those at the top apply to every
// mount, those of a [mount."MOUNTPOINT"] table to that mountpoint only:
//
//	[routes]
//	"skills/" = "dir:/srv/team-skills:ro"
//	"scratch/" = "mem:?ttl=1h"
//
//	[quotas]
//	"memory/" = "100MiB,10000files,1MiB"
//
//	[mount."/home/ada/memory".routes]
//	"team/" = "etcd://10.0.0.5:2379/team"
//
// A flag for a prefix the file names too wins.
type Config struct {
	Routes map[string]string `toml:"routes"`
	Quotas map[string]string `toml:"quotas"`
	Mount  map[string]struct {
		Routes map[string]string `toml:"routes"`
		Quotas map[string]string `toml:"quotas"`
	} `toml:"mount"`
}

// ConfigPath is where the config is read from: the first of the usual
// places that exists, "" when none does.
func ConfigPath() string {
	if p := os.Getenv("MEMFS_CONFIG"); p != "" {
		return p
	}
	var places []string
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		places = append(places, filepath.Join(xdg, "memfs", "memfs.toml"))
	} else if home, err := os.UserHomeDir(); err == nil {
		places = append(places, filepath.Join(home, ".config", "memfs", "memfs.toml"))
	}
	for _, p := range append(places, "/etc/memfs/memfs.toml") {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// ReadConfig reads the config at path; no path, or $MEMFS_CONFIG unset
// and no file in the usual places, is an empty config. A key the file
// does not know is an error (a typo would drop a route silently).
func ReadConfig(path string) (Config, error) {
	var c Config
	if path == "" {
		return c, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && os.Getenv("MEMFS_CONFIG") == "" {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	err = toml.NewDecoder(f).DisallowUnknownFields().Decode(&c)
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		return Config{}, fmt.Errorf("%s: unknown setting %s (routes, quotas, mount.\"MOUNTPOINT\".routes, .quotas)", path, strings.Join(strict.Errors[0].Key(), "."))
	}
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Flags returns the config's routes and quotas for the mount at mnt as
// the flags write them, with routes and quotas (the flags) after them:
// a flag for a prefix the file names too replaces the file's.
func (c Config) Flags(mnt string, routes, quotas []string) ([]string, []string) {
	rs, qs := maps.Clone(c.Routes), maps.Clone(c.Quotas)
	if m, ok := c.Mount[filepath.Clean(mnt)]; ok {
		rs, qs = merged(rs, m.Routes), merged(qs, m.Quotas)
	}
	return withFlags(rs, routes), withFlags(qs, quotas)
}

func merged(a, b map[string]string) map[string]string {
	if a == nil {
		a = map[string]string{}
	}
	maps.Copy(a, b)
	return a
}

// withFlags writes m's entries as PREFIX=VALUE, leaving out a prefix a
// flag names, then the flags.
func withFlags(m map[string]string, flags []string) []string {
	given := map[string]bool{}
	for _, f := range flags {
		prefix, _, _ := strings.Cut(f, "=")
		given[strings.Trim(prefix, "/")] = true
	}
	var out []string
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if !given[strings.Trim(p, "/")] {
			out = append(out, p+"="+m[p])
		}
	}
	return append(out, flags...)
}
