package location_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/backend/location"
)

// registry is the command's: the three stores, in its order.
func registry() *location.Registry {
	r := new(location.Registry)
	r.Register(badgerstore.NewFactory())
	r.Register(dirstore.NewFactory())
	r.Register(etcdstore.NewFactory())
	return r
}

const usage = "badger:PATH, dir:PATH or etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE"

// A local spec names a directory, made absolute; the store's journal and
// lock are in it; it parses back from its String.
func TestParseLocal(t *testing.T) {
	r := registry()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ scheme, journal, lock string }{
		{"badger", badgerstore.JournalName, badgerstore.LockPath("")},
		{"dir", dirstore.JournalName, dirstore.LockPath("")},
	} {
		t.Run(tt.scheme, func(t *testing.T) {
			loc, err := r.Parse(tt.scheme + ":rel/../store")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(wd, "store")
			if loc.Scheme() != tt.scheme || loc.Path() != dir || !loc.Local() || loc.String() != tt.scheme+":"+dir || loc.Dir() != dir {
				t.Errorf("Parse = %s (scheme %q, path %q, local %v, dir %q), want %s:%s, local, in %s", loc, loc.Scheme(), loc.Path(), loc.Local(), loc.Dir(), tt.scheme, dir, dir)
			}
			if got, want := loc.JournalPath("/state", "/mnt"), filepath.Join(dir, tt.journal); got != want {
				t.Errorf("JournalPath = %q, want %q (in the store, whatever the mountpoint)", got, want)
			}
			if got, want := loc.LockPath(), filepath.Join(dir, tt.lock); got != want {
				t.Errorf("LockPath = %q, want %q", got, want)
			}
			again, err := r.Parse(loc.String())
			if err != nil || again != loc {
				t.Errorf("Parse(%q) = %s, %v; want it again", loc, again, err)
			}
		})
	}
}

// An etcd spec is canonical with the default port and without http://;
// it is shared: no lock, and a journal per mountpoint under the state
// directory, at the place memfs has always kept it (a journal left by a
// crash must be found after an upgrade).
func TestParseEtcd(t *testing.T) {
	r := registry()
	loc, err := r.Parse("etcd://127.0.0.1,etcd-2:2380/team")
	if err != nil {
		t.Fatal(err)
	}
	if want := "etcd://127.0.0.1:2379,etcd-2:2380/team"; loc.String() != want || loc.Scheme() != "etcd" || loc.Local() {
		t.Errorf("Parse = %s (scheme %q, local %v), want %s, not local", loc, loc.Scheme(), loc.Local(), want)
	}
	if again, err := r.Parse(loc.String()); err != nil || again != loc {
		t.Errorf("Parse(%q) = %s, %v; want it again", loc, again, err)
	}
	if p := loc.LockPath(); p != "" {
		t.Errorf("LockPath = %q, want none", p)
	}
	if d := loc.Dir(); d != "" {
		t.Errorf("Dir = %q, want none: a shared store is no local directory", d)
	}
	dir := "/state/etcd/team-7346cbbde1ae"
	if got, want := loc.JournalPath("/state", ""), dir+"/commands.journal"; got != want {
		t.Errorf("commands' JournalPath = %q, want %q", got, want)
	}
	if got, want := loc.JournalPath("/state", "/home/u/memory"), dir+"/mount-5e48cc0160bc2609.journal"; got != want {
		t.Errorf("a mount's JournalPath = %q, want %q", got, want)
	}
}

// A bad spec's error names it and the forms the registry takes; one of a
// known scheme says what is wrong with it, and never shows a password.
func TestParseErrors(t *testing.T) {
	r := registry()
	for _, tt := range []struct{ spec, want string }{
		{"nfs:/x", `"nfs:/x": want ` + usage},
		{"/no/scheme", `"/no/scheme": want ` + usage},
		{"", `"": want ` + usage},
		{"badger:", `"badger:": want ` + usage},
		{"dir:", `"dir:": want ` + usage},
		{"etcd://", "no host\n  want etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE"},
		{"etcd://h:2379", "no namespace"},
		{"etcd://h:99999/ns", `bad host "h:99999"`},
		{"etcd://u:hunter2@h/ns", "user, query and fragment are not allowed"},
		{"nfs://u:hunter2@h/x", `"nfs://REDACTED@h/x": want ` + usage},
		// A password with a / in it (base64): the authority ends early.
		{"etcd://u:hunt/er2@h/ns", "not allowed"},
		{"nfs://u:hunt/er2@h/x", `"nfs://REDACTED@h/x": want ` + usage},
		{"nfs:/home/a@b", `"nfs:/home/a@b": want ` + usage}, // a path is no URL: shown as it is
		{"etcd:/h/ns", "not an etcd:// URL"},
	} {
		loc, err := r.Parse(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %s, %v; want an error saying %q", tt.spec, loc, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "hunt")) {
			t.Errorf("Parse(%q): the error shows the password: %v", tt.spec, err)
		}
		if loc != (location.Location{}) {
			t.Errorf("Parse(%q) = %s with its error, want the zero Location", tt.spec, loc)
		}
	}
}

// The zero Location names no store, and does not open.
func TestZeroLocation(t *testing.T) {
	var loc location.Location
	if loc.String() != "" || loc.Scheme() != "" || loc.Local() || loc.Dir() != "" {
		t.Errorf("zero Location: %q, scheme %q, local %v, dir %q", loc, loc.Scheme(), loc.Local(), loc.Dir())
	}
	if st, err := loc.Open(t.Context(), location.Options{}); err == nil {
		st.Close()
		t.Error("the zero Location opened")
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	r := registry()
	defer func() {
		if recover() == nil {
			t.Error("a second dir factory was registered")
		}
	}()
	r.Register(dirstore.NewFactory())
}

// Open opens a dir store writable, or read-only (where every write
// fails); a held store's error is backend.ErrStoreInUse, without the
// hint that an unreadable one gets.
func TestOpenDir(t *testing.T) {
	r := registry()
	loc, err := r.Parse("dir:" + t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := loc.Open(t.Context(), location.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = loc.Open(t.Context(), location.Options{})
	if !errors.Is(err, backend.ErrStoreInUse) || strings.Contains(err.Error(), "check that") {
		t.Errorf("a second Open = %v, want ErrStoreInUse, without a hint", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := loc.Open(t.Context(), location.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	err = ro.Save(t.Context(), backend.Entry{Key: "k", Value: []byte("v"), Info: backend.Info{Mode: 0o644, MTime: time.Now()}})
	if !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("Save on a read-only Open = %v, want ErrReadOnly", err)
	}
}

// A path that is no store fails to open and says what to check.
func TestOpenSaysWhatToCheck(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"badger", "dir"} {
		loc, err := registry().Parse(scheme + ":" + file)
		if err != nil {
			t.Fatal(err)
		}
		st, err := loc.Open(t.Context(), location.Options{})
		if err == nil {
			st.Close()
			t.Fatalf("%s opened a regular file", loc)
		}
		if want := "check that the path is a readable " + scheme + " store"; !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want it to say %q", loc, err, want)
		}
	}
}
