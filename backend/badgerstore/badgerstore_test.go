package badgerstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"expvar"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dir string) (backend.Store, error) {
		return Open(dir, Options{})
	})
}

// TestMain turns the test binary into a store holder when a test runs it
// with holdEnv set: it opens the store (with the memtable size in
// holdMemTableEnv), saves holdFillEnv fillEntries, prints "held", and keeps
// the store open until its stdin closes.
func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		var opts Options
		opts.MemTableSize, _ = strconv.ParseInt(os.Getenv(holdMemTableEnv), 10, 64)
		s, err := Open(dir, opts)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		if n, _ := strconv.Atoi(os.Getenv(holdFillEnv)); n > 0 {
			if err := s.Save(context.Background(), fillEntries(n)...); err != nil {
				fmt.Println("error:", err)
				os.Exit(1)
			}
		}
		fmt.Println("held")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		if err := s.Close(); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	holdEnv         = "BADGERSTORE_TEST_HOLD"     // the store's directory
	holdMemTableEnv = "BADGERSTORE_TEST_MEMTABLE" // Options.MemTableSize
	holdFillEnv     = "BADGERSTORE_TEST_FILL"     // save this many fillEntries first
)

// fillEntries are n entries of 4 KiB, the same in every process.
func fillEntries(n int) []backend.Entry {
	es := make([]backend.Entry, n)
	for i := range es {
		es[i] = entry(fmt.Sprintf("fill/%05d", i), randomBytes(4<<10, uint64(i)))
	}
	return es
}

// hold starts a process that opens the store in dir with the given
// environment, and returns once it holds it. Closing stdin lets it close
// the store and exit.
func hold(t *testing.T, dir string, env ...string) (cmd *exec.Cmd, stdin io.Closer) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), holdEnv+"="+dir), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("holder process said %q, want %q", line, "held\n")
	}
	return cmd, stdin
}

func openT(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	rand.NewChaCha8(s).Read(b)
	return b
}

func entry(key string, value []byte) backend.Entry {
	return backend.Entry{Key: key, Value: value, Info: backend.Info{
		MTime: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Mode:  0o644,
	}}
}

func TestLargeValue(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	const key = "skills/x/resources/model.bin"
	big := randomBytes(40<<20, 1)
	if err := s.Save(t.Context(), entry(key, big)); err != nil {
		t.Fatalf("Save of 40 MiB: %v", err)
	}
	check := func(s *Store, when string) {
		t.Helper()
		got, err := s.Load(t.Context(), key)
		if err != nil {
			t.Fatalf("%s: Load: %v", when, err)
		}
		if !bytes.Equal(got[0].Value, big) || got[0].Info.Size != int64(len(big)) {
			t.Fatalf("%s: got %d bytes (Size %d), equal=%v; want the %d bytes saved",
				when, len(got[0].Value), got[0].Info.Size, bytes.Equal(got[0].Value, big), len(big))
		}
		l, err := s.List(t.Context())
		if err != nil || len(l) != 1 || l[0].Info.Size != int64(len(big)) {
			t.Fatalf("%s: List = %+v, %v; want one key of %d bytes", when, l, err, len(big))
		}
	}
	check(s, "after Save")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	check(openT(t, dir, Options{}), "after reopen")
}

func TestValueOverLimit(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	// The limit is checked before badger sees the value, so that its
	// error (which hex-dumps the value) never appears.
	err := s.Save(t.Context(), entry("ok", []byte("x")), entry("huge", make([]byte, MaxValueSize+1)))
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "huge" {
		t.Fatalf("Save of a value over MaxValueSize = %v, want a *fs.PathError for %q", err, "huge")
	}
	if l, _ := s.List(t.Context()); len(l) != 0 {
		t.Fatalf("after a refused batch List = %v, want empty", l)
	}
}

func TestBatchOverTxnLimit(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	// Values under the value threshold are stored in the LSM tree and count
	// whole against the transaction limit. Three limits' worth of them
	// needs at least three transactions.
	const size = 16 << 10
	if size >= valueThreshold {
		t.Fatalf("value size %d is not below the value threshold %d", size, valueThreshold)
	}
	n := int(3*s.db.MaxBatchSize()/size) + 1
	batch := make([]backend.Entry, n)
	for i := range batch {
		batch[i] = entry(fmt.Sprintf("d%02d/f%05d", i%20, i), randomBytes(size, uint64(i)))
	}
	before := s.txns.Load()
	if err := s.Save(t.Context(), batch...); err != nil {
		t.Fatalf("Save of %d x %d bytes: %v", n, size, err)
	}
	used := s.txns.Load() - before
	if used < 3 {
		t.Fatalf("Save of %d bytes used %d transaction(s), want at least 3: the batch did not cross the limit of %d bytes",
			n*size, used, s.db.MaxBatchSize())
	}
	t.Logf("%d entries of %d bytes (limit %d bytes a transaction) saved in %d transactions", n, size, s.db.MaxBatchSize(), used)
	l, err := s.List(t.Context())
	if err != nil || len(l) != n {
		t.Fatalf("List = %d keys, %v; want %d", len(l), err, n)
	}
	keys := make([]string, n)
	for i, e := range batch {
		keys[i] = e.Key
	}
	got, err := s.Load(t.Context(), keys...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for i := range got {
		if !bytes.Equal(got[i].Value, batch[i].Value) {
			t.Fatalf("%s: value differs after a split Save", keys[i])
		}
	}

	// A small batch is one transaction.
	before = s.txns.Load()
	if err := s.Save(t.Context(), batch[:10]...); err != nil {
		t.Fatal(err)
	}
	if used := s.txns.Load() - before; used != 1 {
		t.Fatalf("a batch of 10 used %d transactions, want 1", used)
	}

	// Deletes count against the limit on entries: each key is two
	// tombstones. Most of these keys do not exist; that costs the same.
	del := make([]string, s.db.MaxBatchCount())
	for i := range del {
		del[i] = fmt.Sprintf("missing/%07d", i)
	}
	copy(del, keys)
	before = s.txns.Load()
	if err := s.Delete(t.Context(), del...); err != nil {
		t.Fatalf("Delete of %d keys: %v", len(del), err)
	}
	if used := s.txns.Load() - before; used < 2 {
		t.Fatalf("Delete of %d keys (limit %d entries) used %d transaction(s), want at least 2", len(del), s.db.MaxBatchCount(), used)
	}
	if l, err := s.List(t.Context()); err != nil || len(l) != 0 {
		t.Fatalf("List after deleting everything = %d keys, %v; want none", len(l), err)
	}
}

// TestSplitKeepsKeysWhole checks the case where a transaction fills up
// between a key's value record and its metadata record: the transaction
// committed must hold neither.
func TestSplitKeepsKeysWhole(t *testing.T) {
	// Empty values make both records of a key cost one entry of badger's
	// count limit and about the same bytes, so the count limit is reached
	// first, and it falls between a key's two records exactly when the
	// limit is odd. Try memtable sizes until one gives that.
	sawPartial := false
	for mt := int64(1 << 20); mt < 1<<20+32*1024; mt += 1024 {
		s := openT(t, t.TempDir(), Options{MemTableSize: mt})
		ops := make([]op, s.db.MaxBatchCount())
		for i := range ops {
			ops[i] = op{key: fmt.Sprintf("k%06d", i), meta: encodeMeta(backend.Info{Mode: 0o644, MTime: time.Now()})}
		}
		txn := s.db.NewTransaction(true)
		_, partial, err := fill(txn, ops)
		txn.Discard()
		if err != nil {
			t.Fatal(err)
		}
		if !partial {
			s.Close()
			continue
		}
		sawPartial = true
		n, err := s.commitPrefix(ops, units(ops))
		if err != nil {
			t.Fatalf("commitPrefix: %v", err)
		}
		if n == 0 || n >= len(ops) {
			t.Fatalf("commitPrefix committed %d of %d ops, want a proper prefix", n, len(ops))
		}
		err = s.db.View(func(txn *badger.Txn) error {
			for i, o := range ops[:n+1] {
				_, merr := txn.Get(metaKey(o.key))
				_, verr := txn.Get(valueKey(o.key))
				want := i < n
				if (merr == nil) != want || (verr == nil) != want {
					t.Errorf("op %d of %d committed: metadata %v, value %v; want both present=%v", i, n, merr, verr, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if !sawPartial {
		t.Fatal("no memtable size made a transaction fill up between a key's two records: the test proves nothing")
	}
}

// TestListReadsNoValues checks List at the level of badger's I/O: table
// blocks read through the block cache, and value-log reads.
func TestListReadsNoValues(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	// Half the values are kept in the LSM tree (under the value
	// threshold), half in the value log.
	const n = 100
	var batch []backend.Entry
	var keys []string
	for i := range n {
		size := 32 << 10
		if i%2 == 1 {
			size = 2 * valueThreshold
		}
		e := entry(fmt.Sprintf("k%03d", i), randomBytes(size, uint64(i)))
		batch = append(batch, e)
		keys = append(keys, e.Key)
	}
	if err := s.Save(t.Context(), batch...); err != nil {
		t.Fatal(err)
	}
	// Reopening moves the memtable into a table on disk and empties the
	// block cache, so that every block List touches is a cache miss.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir, Options{SkipVerify: true}) // the check at Open would fill the block cache
	blocks := func() uint64 { return s.db.BlockCacheMetrics().Misses() }
	vlogReads := func() int64 { return expvar.Get("badger_read_num_vlog").(*expvar.Int).Value() }

	b0, v0 := blocks(), vlogReads()
	l, err := s.List(t.Context())
	if err != nil || len(l) != n {
		t.Fatalf("List = %d entries, %v; want %d", len(l), err, n)
	}
	listBlocks, listVlog := blocks()-b0, vlogReads()-v0

	b0, v0 = blocks(), vlogReads()
	if _, err := s.Load(t.Context(), keys...); err != nil {
		t.Fatal(err)
	}
	loadBlocks, loadVlog := blocks()-b0, vlogReads()-v0
	t.Logf("List read %d blocks and %d value-log entries; Load of all keys read %d and %d", listBlocks, listVlog, loadBlocks, loadVlog)

	// The metadata of 100 keys fills one or two 4 KiB blocks; the
	// iterator may also read the block where the "v/" records begin, to
	// see that the "m/" ones have ended.
	if listBlocks > 4 || listVlog != 0 {
		t.Fatalf("List read %d table blocks and %d value-log entries, want at most 4 blocks and no value-log entry", listBlocks, listVlog)
	}
	// The probes work (List's silence above means something): reading
	// the values shows in both.
	if loadBlocks < n/2 || loadVlog < n/2 {
		t.Fatalf("Load of %d values read %d blocks and %d value-log entries, want at least %d of each: the counters do not see value reads",
			n, loadBlocks, loadVlog, n/2)
	}
}

func TestInUseByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd, stdin := hold(t, dir)
	_, err := Open(dir, Options{})
	want := "in use by process " + strconv.Itoa(cmd.Process.Pid) + ":"
	if !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open of a store held by process %d = %v, want ErrStoreInUse naming the process", cmd.Process.Pid, err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("holder process: %v", err)
	}
	if _, err := openT(t, dir, Options{}).List(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestCrash kills a holder that has saved data without closing the store:
// the lock goes with the process, and every Save that returned is there.
// The holder used a larger memtable than the reopening process, as after
// an upgrade or a change of Options: badger replays its write-ahead log
// into one memtable, and a log that does not fit is a fatal error in badger
// unless Open sizes the memtable for it.
func TestCrash(t *testing.T) {
	dir := t.TempDir()
	const n = 750 // 3 MiB: fits a 4 MiB memtable, not a 1 MiB one
	cmd, _ := hold(t, dir, holdMemTableEnv+"="+strconv.Itoa(4<<20), holdFillEnv+"="+strconv.Itoa(n))
	cmd.Process.Kill()
	cmd.Wait()
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	if len(mems) == 0 {
		t.Fatal("the killed holder left no write-ahead log: the test proves nothing")
	}

	s := openT(t, dir, Options{MemTableSize: 1 << 20})
	want := fillEntries(n)
	keys := make([]string, n)
	for i, e := range want {
		keys[i] = e.Key
	}
	got, err := s.Load(t.Context(), keys...)
	if err != nil {
		t.Fatalf("Load after a crash: %v", err)
	}
	for i := range got {
		if !bytes.Equal(got[i].Value, want[i].Value) {
			t.Fatalf("%s differs after a crash", keys[i])
		}
	}
}

// TestBadgerLockHeld covers a program other than memfs (badger's own
// tool, say) holding the database: memfs.lock is free, badger's LOCK is
// not.
func TestBadgerLockHeld(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, badgerLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	const pid = 4242
	if _, err := fmt.Fprintf(f, "%d\n", pid); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{})
	if !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), fmt.Sprintf("process %d:", pid)) {
		t.Fatalf("Open with badger's LOCK held by %d = %v, want ErrStoreInUse naming it", pid, err)
	}
	// Our own lock was released on the way out.
	f.Close()
	openT(t, dir, Options{})
}

func TestClose(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(t.Context(), entry("a", []byte("a"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.List(t.Context()); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("List after Close = %v, want fs.ErrClosed", err)
	}
	if _, err := s.Load(t.Context(), "a"); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Load after Close = %v, want fs.ErrClosed", err)
	}
	if err := s.Save(t.Context(), entry("a", nil)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Save after Close = %v, want fs.ErrClosed", err)
	}
	if err := s.Delete(t.Context(), "a"); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Delete after Close = %v, want fs.ErrClosed", err)
	}
	if _, err := s.Apply(t.Context(), backend.Batch{Saves: []backend.Entry{entry("a", nil)}}); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Apply after Close = %v, want fs.ErrClosed", err)
	}
}

// BenchmarkSave saves the same 1000 values of 4 KiB per op, a large flush:
// overwrites, in the LSM tree (under the value threshold), durable.
func BenchmarkSave(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n, size = 1000, 4 << 10
	batch := make([]backend.Entry, n)
	for i := range batch {
		batch[i] = entry(fmt.Sprintf("memory/d%02d/f%04d.md", i%10, i), randomBytes(size, uint64(i)))
	}
	b.SetBytes(n * size)
	before := s.txns.Load()
	for b.Loop() {
		if err := s.Save(b.Context(), batch...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.txns.Load()-before)/float64(b.N), "txns/op")
}

// BenchmarkOpen opens a store of 100,000 notes of 2 KiB (200 MiB, in the
// LSM tree), with the check of every table's checksums that Open makes and
// without it: what the check costs a mount.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	const n, size = 100_000, 2 << 10
	val := bytes.Repeat([]byte("a line of a note that an agent keeps. "), size/38+1)[:size]
	for start := 0; start < n; start += 1000 {
		batch := make([]backend.Entry, 0, 1000)
		for i := start; i < start+1000; i++ {
			batch = append(batch, entry(fmt.Sprintf("memory/p%03d/n%06d.md", i%500, i), val))
		}
		if err := s.Save(b.Context(), batch...); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	for _, skip := range []bool{false, true} {
		name := "verify"
		if skip {
			name = "no-verify"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s, err := Open(dir, Options{SkipVerify: skip})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// TestRepeatedCrashesKeepTheMemtableSize: every kill -9 leaves a memtable
// log preallocated at twice the memtable size; the next Open sizes its
// memtable to hold it (leftoverLogSize). Sized by the file, the memtable
// doubled at each crash, and so did the next log, until after seven
// crashes at the default size a 4 GiB log overflowed badger's 32-bit log
// size and the eighth Open failed ("cannot create memtable ... 00008.mem
// already exists"): the store was unusable.
func TestRepeatedCrashesKeepTheMemtableSize(t *testing.T) {
	dir := t.TempDir()
	const n, crashes = 10, 9
	for i := range crashes {
		fill := 0
		if i == 0 {
			fill = n
		}
		cmd, _ := hold(t, dir, holdFillEnv+"="+strconv.Itoa(fill))
		cmd.Process.Kill()
		cmd.Wait()
		mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
		if len(mems) == 0 {
			t.Fatal("the killed holder left no memtable log: the test proves nothing")
		}
		for _, m := range mems {
			if fi, err := os.Stat(m); err == nil && fi.Size() > 2*DefaultMemTableSize {
				t.Errorf("after crash %d, %s is %d bytes, want at most %d (twice the memtable size)", i+1, m, fi.Size(), 2*DefaultMemTableSize)
			}
		}
	}
	s := openT(t, dir, Options{})
	want := fillEntries(n)
	for _, e := range want {
		got, err := s.Load(t.Context(), e.Key)
		if err != nil || len(got) != 1 || !bytes.Equal(got[0].Value, e.Value) {
			t.Fatalf("Load(%s) after %d crashes: %v", e.Key, crashes, err)
		}
	}
}
