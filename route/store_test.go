package route_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/backend/location"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/backend/storetest"
	"github.com/memfs/memfs/route"
)

func table(t *testing.T, specs ...string) *route.Table {
	t.Helper()
	var rs []route.Route
	for _, s := range specs {
		r, err := route.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	tb, err := route.NewTable(rs)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// openRouted opens, in dir, a store of three routes: the default one and
// memory/ on directory stores, skills/ on badger. The conformance suite's keys
// fall in all three.
func openRouted(t *testing.T, dir string) (backend.Store, error) {
	tb := table(t, "memory/=dir:"+filepath.Join(dir, "memory"), "skills/=badger:"+filepath.Join(dir, "a"))
	var opened []backend.Store
	fail := func(err error) (backend.Store, error) {
		for _, s := range opened {
			s.Close()
		}
		return nil, err
	}
	for _, sub := range []string{"def", "memory", "a"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fail(err)
		}
	}
	mem, err := dirstore.Open(filepath.Join(dir, "memory"))
	if err != nil {
		return fail(err)
	}
	opened = append(opened, mem)
	a, err := badgerstore.Open(filepath.Join(dir, "a"), badgerstore.Options{})
	if err != nil {
		return fail(err)
	}
	opened = append(opened, a)
	def, err := dirstore.Open(filepath.Join(dir, "def"))
	if err != nil {
		return fail(err)
	}
	opened = append(opened, def)
	// t.Routes() is longest prefix first: memory/, then skills/.
	return route.NewStore(tb, []backend.Store{mem, a}, def)
}

// externalWrite is another program writing the directory store of the
// route key lives in.
func externalWrite(t *testing.T, dir, key string, value []byte) {
	t.Helper()
	p := filepath.Join(dir, "def", filepath.FromSlash(key))
	if sub, ok := strings.CutPrefix(key, "memory/"); ok {
		p = filepath.Join(dir, "memory", filepath.FromSlash(sub))
	}
	if value == nil {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, value, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConformanceMixed(t *testing.T) {
	storetest.RunWith(t, openRouted, storetest.Options{HostTimes: true, HostDevices: true, ImplicitDirs: true, External: externalWrite})
}

// TestConformanceBatches: three badger stores, so that the routed store
// is a Batcher, and batches (FailOnConflict among them) span routes.
func TestConformanceBatches(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dir string) (backend.Store, error) {
		tb := table(t, "memory/=badger:x", "skills/=badger:y")
		var sts []backend.Store
		for _, sub := range []string{"memory", "a", "def"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				return nil, err
			}
			s, err := badgerstore.Open(filepath.Join(dir, sub), badgerstore.Options{})
			if err != nil {
				for _, s := range sts {
					s.Close()
				}
				return nil, err
			}
			sts = append(sts, s)
		}
		st, err := route.NewStore(tb, sts[:2], sts[2].(backend.SysStore))
		if err == nil {
			if _, ok := st.(backend.Batcher); !ok {
				t.Fatal("a store of badger routes is no Batcher")
			}
		}
		return st, err
	})
}

// TestKeysLandInTheirRoute: a key is saved in its route's store without
// the prefix; a key the default store still holds under a route's prefix
// is shadowed; a read-only route refuses saves and deletes, naming the
// route.
func TestKeysLandInTheirRoute(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	skills, def := filepath.Join(dir, "skills"), filepath.Join(dir, "def")
	for _, d := range []string{skills, def} {
		os.MkdirAll(d, 0o755)
	}
	os.MkdirAll(filepath.Join(skills, "git"), 0o755)
	os.WriteFile(filepath.Join(skills, "git", "SKILL.md"), []byte("team"), 0o644)
	os.MkdirAll(filepath.Join(def, "skills", "old"), 0o755)
	os.WriteFile(filepath.Join(def, "skills", "old", "SKILL.md"), []byte("shadowed"), 0o644)

	ro, err := dirstore.OpenReadOnly(skills)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dirstore.Open(def)
	if err != nil {
		t.Fatal(err)
	}
	st, err := route.NewStore(table(t, "skills/=dir:"+skills+":ro"), []backend.Store{ro}, d)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ents, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range ents {
		keys = append(keys, e.Key)
	}
	if got, want := strings.Join(keys, " "), "skills skills/git skills/git/SKILL.md"; got != want {
		t.Errorf("List: %s, want %s (the default store's skills/old is shadowed; skills is its directory)", got, want)
	}
	got, err := st.Load(ctx, "skills/git/SKILL.md")
	if err != nil || string(got[0].Value) != "team" {
		t.Fatalf("Load: %v %v", err, got)
	}
	if _, err := st.Load(ctx, "skills/old/SKILL.md"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("Load of a shadowed key: %v, want not found", err)
	}
	var pe *fs.PathError
	if _, err := st.Load(ctx, "skills/none.md"); !errors.As(err, &pe) || pe.Path != "skills/none.md" {
		t.Errorf("Load of a missing key: %v, want it named with its route's prefix", err)
	}
	e := backend.Entry{Key: "skills/new.md", Value: []byte("x"), Info: backend.Info{Mode: 0o644}}
	err = st.Save(ctx, e)
	var roe *route.ReadOnlyError
	if !errors.Is(err, backend.ErrReadOnly) || !errors.As(err, &roe) || roe.Route != "skills/" {
		t.Errorf("Save in a read-only route: %v, want the route named", err)
	}
	if err := st.Delete(ctx, "skills/git/SKILL.md"); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("Delete in a read-only route: %v", err)
	}
	e.Key = "memory/a.md"
	if err := st.Save(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(def, "memory", "a.md")); err != nil {
		t.Errorf("a key of the default route is not in its store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(skills, "new.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused save reached the read-only store: %v", err)
	}
}

func TestTable(t *testing.T) {
	tb := table(t, "skills/=dir:/srv:ro", "scratch=mem:", "team/skills/=mem:")
	for _, c := range []struct {
		key  string
		want string
	}{
		{"skills/a/SKILL.md", "skills/"}, {"skills", "default"}, {"skillsx/a", "default"},
		{"scratch/n.md", "scratch/"}, {"team/skills/x", "team/skills/"}, {"team/x", "default"},
	} {
		if got := tb.Of(c.key).Name(); got != c.want {
			t.Errorf("Of(%s) = %s, want %s", c.key, got, c.want)
		}
	}
	if !tb.Ephemeral("scratch/a") || tb.Ephemeral("memory/a") {
		t.Error("Ephemeral: only a mem: route's keys")
	}
	for _, c := range []struct {
		op, key string
		want    error
	}{
		{"save", "skills/a", backend.ErrReadOnly},
		{"rename", "skills", route.ErrMountPoint},
		{"rmdir", "team", route.ErrMountPoint},
		{"rmdir", "teams", nil},
		{"save", "team", nil},
		{"save", "scratch/a", nil},
		{"create", "scratch/.memfs", backend.ErrReserved},
		{"create", "scratch/x/.memfs", nil},
	} {
		if err := tb.Refuse(c.op, c.key); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Refuse(%s, %s) = %v, want %v", c.op, c.key, err, c.want)
		}
	}
	if err := tb.Move("rename", "memory/a", "scratch/a"); !errors.Is(err, route.ErrCrossRoute) {
		t.Errorf("a rename across routes: %v", err)
	}
	if err := tb.Move("rename", "memory/a", "memory/b"); err != nil {
		t.Errorf("a rename in a route: %v", err)
	}
	for _, bad := range []string{"skills", "=dir:/x", "../x=mem:", ".memfs/x=mem:"} {
		if _, err := route.Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	if _, err := route.NewTable([]route.Route{{Prefix: "a/", Store: "mem:"}, {Prefix: "a/", Store: "mem:"}}); err == nil {
		t.Error("two routes of one prefix")
	}
}

// TestNoLinkAcrossRoutes: a hard-link group is one node of one store; a
// save or a batch that would make one across routes writes nothing.
func TestNoLinkAcrossRoutes(t *testing.T) {
	dir := t.TempDir()
	st, err := openRouted(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	link := func(key string) backend.Entry {
		return backend.Entry{Key: key, Value: []byte("one node"), Info: backend.Info{Mode: 0o644, Link: "g"}}
	}
	if err := st.Save(t.Context(), link("notes/a"), link("memory/b")); !errors.Is(err, route.ErrCrossRoute) {
		t.Errorf("Save of a link group across routes: %v, want ErrCrossRoute", err)
	}
	if ents, err := st.List(t.Context()); err != nil || len(ents) != 0 {
		t.Errorf("after a refused save: %d entries, %v", len(ents), err)
	}
}

// TestOpenRefusesOneDirectoryTwice: two routes of one directory, or one
// inside the other's or the default store's, are refused (a read-only
// route takes no lock that would tell).
func TestOpenRefusesOneDirectoryTwice(t *testing.T) {
	var reg location.Registry
	reg.Register(dirstore.NewFactory())
	dir := t.TempDir()
	for _, d := range []string{"x", "x/in", "def"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	def, err := dirstore.Open(filepath.Join(dir, "def"))
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	x, in := "dir:"+filepath.Join(dir, "x"), "dir:"+filepath.Join(dir, "x", "in")
	for _, specs := range [][]string{{"ro/=" + x + ":ro", "rw/=" + x}, {"a/=" + x + ":ro", "b/=" + in + ":ro"}, {"a/=dir:" + filepath.Join(dir, "def") + ":ro"}} {
		tb, err := route.ParseAll(specs, &reg)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := route.Open(t.Context(), tb, &reg, def, filepath.Join(dir, "def"), location.Options{}); err == nil {
			st.Close()
			t.Errorf("%v: opened", specs)
		}
	}
}

// TestParseOptions: a route's options (?ttl=, ?tier=) read back as
// written; an indexed route is read-only; a tier a store cannot be, or an
// unknown option, is refused.
func TestParseOptions(t *testing.T) {
	for _, c := range []struct {
		in, out string
		tier    route.Tier
		ro      bool
		ttl     time.Duration
	}{
		{"archive=dir:/a?tier=indexed", "archive/=dir:/a?tier=indexed", route.Indexed, true, 0},
		{"archive/=dir:/a?ttl=1h&tier=indexed", "archive/=dir:/a?ttl=1h0m0s&tier=indexed", route.Indexed, true, time.Hour},
		{"archive/=dir:/a?tier=indexed:ro", "archive/=dir:/a?tier=indexed", route.Indexed, true, 0},
		{"notes/=dir:/a?tier=persistent", "notes/=dir:/a", route.Persistent, false, 0},
		{"scratch/=mem:?tier=working&ttl=2s", "scratch/=mem:?ttl=2s", route.Working, false, 2 * time.Second},
		{"skills/=dir:/s:ro", "skills/=dir:/s:ro", route.Persistent, true, 0},
	} {
		r, err := route.Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if r.String() != c.out || r.Tier != c.tier || r.ReadOnly != c.ro || r.TTL != c.ttl {
			t.Errorf("Parse(%q) = %s (%v, ro %v, ttl %v), want %s (%v, ro %v, ttl %v)", c.in, r, r.Tier, r.ReadOnly, r.TTL, c.out, c.tier, c.ro, c.ttl)
		}
	}
	for _, bad := range []string{"a/=dir:/a?tier=working", "a/=mem:?tier=indexed", "a/=dir:/a?tier=archive", "a/=dir:/a?x=1", "a/=mem:?ttl=soon"} {
		if _, err := route.Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	tb := table(t, "archive/=dir:/a?tier=indexed", "scratch/=mem:")
	if err := tb.Refuse("save", "archive/x.md"); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("a save into an indexed route: %v, want EROFS", err)
	}
	for key, want := range map[string][2]string{"archive/x": {"archive/", "indexed"}, "scratch/x": {"scratch/", "working"}, "x": {"default", "persistent"}} {
		if r, tier := tb.Where(key); r != want[0] || tier != want[1] {
			t.Errorf("Where(%s) = %s, %s, want %v", key, r, tier, want)
		}
	}
	if got := []int{route.Working.Rank(), route.Persistent.Rank(), route.Indexed.Rank()}; !slices.IsSorted(got) || got[0] == got[2] {
		t.Errorf("ranks %v: want working < persistent < indexed", got)
	}
}

// TestShared: a mount with a route on a store other mounts write (etcd)
// runs under a conflict policy, whatever its default store; a read-only
// or memory-only route is no such store.
func TestShared(t *testing.T) {
	reg := new(location.Registry)
	for _, f := range []location.Factory{dirstore.NewFactory(), memstore.NewFactory(), etcdstore.NewFactory()} {
		reg.Register(f)
	}
	for specs, want := range map[string]bool{
		"":                                    false,
		"scratch/=mem:":                       false,
		"team/=etcd://127.0.0.1:2379/team":    true,
		"team/=etcd://127.0.0.1:2379/team:ro": false,
		"a/=dir:/a team/=etcd://127.0.0.1:2379/tm": true,
	} {
		tb, err := route.ParseAll(strings.Fields(specs), reg)
		if err != nil {
			t.Fatal(err)
		}
		if tb.Shared() != want {
			t.Errorf("%q: Shared() = %v, want %v", specs, tb.Shared(), want)
		}
	}
}
