package etcdstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/etcdtest"
)

// TestMain turns the test binary into a writer or a collector of
// TestCollectKill9 when MEMFS_GC_ROLE says so.
func TestMain(m *testing.M) {
	switch os.Getenv("MEMFS_GC_ROLE") {
	case "writer":
		os.Exit(gcWriter())
	case "collector":
		os.Exit(gcCollector())
	case "slow":
		os.Exit(slowWriter())
	}
	os.Exit(m.Run())
}

// The kill -9 test's namespace, grace, keys and values.
const (
	killNS = "kill9"
	// killGrace is next to none: what spares the chunks of a save in
	// progress is its intent alone.
	killGrace = time.Millisecond
	killKeys  = 4
	poolSize  = 6
	blockSize = 512 << 10 // one chunk
)

// poolBlock is shared block j of seed: a value is one of them (a chunk
// many values hold, collected and written again) and a tail of its own.
func poolBlock(seed uint64, j int) []byte {
	r := rand.New(rand.NewPCG(seed, 1<<40+uint64(j)))
	b := make([]byte, blockSize)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// killValue is the value of the i-th save of round: a pool block, then a
// tail that starts with "round i key\n".
func killValue(seed uint64, round, i int, key string) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(round)<<20+uint64(i)))
	v := poolBlock(seed, r.IntN(poolSize))
	v = fmt.Appendf(v, "%d %d %s\n", round, i, key)
	tail := make([]byte, 1+r.IntN(64<<10))
	for j := range tail {
		tail[j] = byte(r.Uint32())
	}
	return append(v, tail...)
}

// killKey is the key of the i-th save of round.
func killKey(seed uint64, round, i int) string {
	r := rand.New(rand.NewPCG(seed, uint64(round)<<20+uint64(i)))
	r.IntN(poolSize)
	return fmt.Sprintf("k%d", (round*7+i*3+int(r.Uint32()))%killKeys)
}

func roleStore() (*etcdstore.Store, uint64, int) {
	seed, _ := strconv.ParseUint(os.Getenv("MEMFS_GC_SEED"), 10, 64)
	round, _ := strconv.Atoi(os.Getenv("MEMFS_GC_ROUND"))
	// A long request timeout: a request under way when the process is
	// stopped goes on when it continues.
	st, err := etcdstore.Open(context.Background(), etcdstore.Config{
		Endpoints: []string{os.Getenv("MEMFS_GC_ENDPOINT")}, Namespace: killNS, ChunkGrace: killGrace,
		RequestTimeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return st, seed, round
}

// gcWriter overwrites the keys with large values until killed, one save
// (Save or Apply, in turn) at a time: "try round i key" before, "ack
// round i key" when it returned.
func gcWriter() int {
	st, seed, round := roleStore()
	ctx := context.Background()
	for i := 0; ; i++ {
		key := killKey(seed, round, i)
		e := backend.Entry{Key: key, Value: killValue(seed, round, i, key), Info: backend.Info{Mode: 0o644, MTime: time.Now()}}
		fmt.Printf("try %d %d %s\n", round, i, key)
		var err error
		if i%2 == 0 {
			err = st.Save(ctx, e)
		} else {
			_, err = st.Apply(ctx, backend.Batch{Saves: []backend.Entry{e}})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "save:", err)
			return 1
		}
		fmt.Printf("ack %d %d %s\n", round, i, key)
	}
}

// gcCollector collects until killed: "removed N" after each sweep.
func gcCollector() int {
	st, _, _ := roleStore()
	for {
		got, err := st.Collect(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, "collect:", err)
			return 1
		}
		if got.Swept {
			fmt.Printf("removed %d\n", got.Removed)
		}
		time.Sleep(20 * time.Millisecond) // pacing, not waiting for anything
	}
}

// killProc is a writer or collector process and what it printed.
type killProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer // read after done
	lines  chan string  // closed at its end of output
	done   chan struct{}
}

func startRole(t *testing.T, role, endpoint string, seed uint64, round int) *killProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MEMFS_GC_ROLE="+role, "MEMFS_GC_ENDPOINT="+endpoint,
		fmt.Sprintf("MEMFS_GC_SEED=%d", seed), fmt.Sprintf("MEMFS_GC_ROUND=%d", round))
	p := &killProc{cmd: cmd, lines: make(chan string, 1024), done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		cmd.Wait()
		if s := p.stderr.String(); s != "" {
			t.Logf("%s %d said: %s", role, cmd.Process.Pid, s)
		}
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill ends p with SIGKILL and waits for it.
func (p *killProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	for range p.lines {
	}
	<-p.done
}

// TestCollectKill9: a writer overwrites large values (sharing chunks) in a
// loop while a collector runs in another process; each round kills both
// with SIGKILL, each at a random point. Every acknowledged save must read
// back whole (or a later save of the key that was under way), and the
// chunks a killed writer left unnamed must be collected in the end.
// MEMFS_GC_SEED and MEMFS_GC_ROUNDS (8) repeat or lengthen a run.
func TestCollectKill9(t *testing.T) {
	srv := etcdtest.Start(t)
	seed := rand.Uint64()
	if v := os.Getenv("MEMFS_GC_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	rounds := 8
	if v := os.Getenv("MEMFS_GC_ROUNDS"); v != "" {
		rounds, _ = strconv.Atoi(v)
	}
	t.Logf("seed %d, %d rounds (MEMFS_GC_SEED, MEMFS_GC_ROUNDS repeat it)", seed, rounds)
	r := rand.New(rand.NewPCG(seed, 0))
	st := open(t, srv, killNS, func(c *etcdstore.Config) { c.ChunkGrace = killGrace })

	kl := &killLog{acked: map[string]killSave{}, tried: map[killSave]string{}}
	for round := range rounds {
		killRound(t, srv.Endpoint(), seed, round, r, kl)
		kl.checkAcked(t, st, seed, round)
	}

	// No writer left: what no record names goes, and only that.
	before, named := collectUnnamed(t, raw(t, srv), st, kl)
	for key := range kl.acked {
		if _, err := st.Load(context.Background(), key); err != nil {
			t.Fatalf("after the last collection: %v", err)
		}
	}
	t.Logf("%d acknowledged saves; %d chunks at the end of the rounds, %d named; %d removed in all", kl.saves, before, named, kl.removed)
}

// killSave names a save of TestCollectKill9: its round, and its number in
// the round.
type killSave struct{ round, i int }

// after reports whether s is a later save than o.
func (s killSave) after(o killSave) bool {
	return s.round > o.round || s.round == o.round && s.i > o.i
}

// killLog is what the writers and the collectors of TestCollectKill9 said.
type killLog struct {
	mu      sync.Mutex          // guards the fields below
	acked   map[string]killSave // each key's last acknowledged save
	tried   map[killSave]string // each save begun, to its key
	removed int                 // chunks collected
	saves   int                 // saves acknowledged
}

// readWriter reads a writer's lines, with a token on ackc for each
// acknowledged save.
func (kl *killLog) readWriter(lines <-chan string, ackc chan<- struct{}) {
	for l := range lines {
		var s killSave
		var kind, key string
		if _, err := fmt.Sscanf(l, "%s %d %d %s", &kind, &s.round, &s.i, &key); err != nil {
			continue
		}
		kl.mu.Lock()
		kl.tried[s] = key
		if kind == "ack" {
			kl.acked[key] = s
			kl.saves++
			ackc <- struct{}{}
		}
		kl.mu.Unlock()
	}
}

// readCollector reads a collector's lines.
func (kl *killLog) readCollector(lines <-chan string) {
	for l := range lines {
		var n int
		if _, err := fmt.Sscanf(l, "removed %d", &n); err == nil {
			kl.mu.Lock()
			kl.removed += n
			kl.mu.Unlock()
		}
	}
}

// killRound runs a writer and a collector, and kills the writer after 1
// to 6 acknowledged saves and a random bit more (mid-save, often), the
// collector at a random moment before or after it.
func killRound(t *testing.T, endpoint string, seed uint64, round int, r *rand.Rand, kl *killLog) {
	t.Helper()
	col := startRole(t, "collector", endpoint, seed, round)
	w := startRole(t, "writer", endpoint, seed, round)
	ackc := make(chan struct{}, 1024)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		kl.readWriter(w.lines, ackc)
	}()
	go func() {
		defer readers.Done()
		kl.readCollector(col.lines)
	}()
	acks := 1 + r.IntN(6)
	extra := time.Duration(r.IntN(40)) * time.Millisecond
	colFirst := r.IntN(2) == 0
	colAt := time.Duration(r.IntN(60)) * time.Millisecond
	deadline := time.After(60 * time.Second)
	for range acks {
		select {
		case <-ackc:
		case <-w.done:
			t.Fatalf("round %d: the writer ended by itself", round)
		case <-deadline:
			t.Fatalf("round %d: no %d acknowledged saves within 60 s", round, acks)
		}
	}
	// The sleeps place the kills at random points; they wait for nothing.
	if colFirst {
		time.Sleep(colAt)
		col.kill()
	}
	time.Sleep(extra)
	w.kill()
	if !colFirst {
		time.Sleep(colAt)
		col.kill()
	}
	readers.Wait()
}

// checkAcked checks that every key reads back whole after round: its last
// acknowledged save, or a later one that was under way.
func (kl *killLog) checkAcked(t *testing.T, st *etcdstore.Store, seed uint64, round int) {
	t.Helper()
	kl.mu.Lock()
	defer kl.mu.Unlock()
	for key, a := range kl.acked {
		got, err := st.Load(context.Background(), key)
		if err != nil {
			t.Fatalf("round %d (seed %d): %s, acknowledged at save %d of round %d: %v", round, seed, key, a.i, a.round, err)
		}
		v := got[0].Value
		var s killSave
		var k string
		if len(v) <= blockSize {
			t.Fatalf("round %d: %s holds %d bytes", round, key, len(v))
		}
		fmt.Sscanf(string(v[blockSize:min(len(v), blockSize+64)]), "%d %d %s", &s.round, &s.i, &k)
		if k != key || kl.tried[s] != key || a.after(s) {
			t.Fatalf("round %d (seed %d): %s holds save %d of round %d (%q), not its acknowledged %d of round %d or a later one",
				round, seed, key, s.i, s.round, k, a.i, a.round)
		}
		if !bytes.Equal(v, killValue(seed, s.round, s.i, key)) {
			t.Fatalf("round %d (seed %d): %s, save %d of round %d, does not read back as written", round, seed, key, s.i, s.round)
		}
	}
}

// collectUnnamed collects until no chunk that no record names is left (60
// s at most), adding what it removes to kl.removed, and returns the
// chunks stored before and the chunks the records name.
func collectUnnamed(t *testing.T, cli *clientv3.Client, st *etcdstore.Store, kl *killLog) (before, named int) {
	t.Helper()
	want := killNamedChunks(t, cli)
	before = len(killStoredChunks(t, cli))
	// The killed writers' intents end with their leases, on etcd's
	// clock: poll.
	await.True(t, "every chunk no record names collected after the last writer", 60*time.Second, func() bool {
		got, err := st.Collect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		kl.removed += got.Removed
		left := killStoredChunks(t, cli)
		missing := 0
		for _, h := range left {
			if !want[h] {
				missing++
			}
		}
		if len(left) < len(want) {
			t.Fatalf("%d chunks left, fewer than the %d the records name", len(left), len(want))
		}
		return missing == 0
	})
	return before, len(want)
}

// killNamedChunks are the chunks the records of the kill -9 namespace
// name.
func killNamedChunks(t *testing.T, cli *clientv3.Client) map[string]bool {
	t.Helper()
	resp, err := cli.Get(context.Background(), "/memfs/"+killNS+"/m/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, kv := range resp.Kvs {
		var rec struct{ Chunks []string }
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			t.Fatalf("record %s: %v", kv.Key, err)
		}
		for _, h := range rec.Chunks {
			out[h] = true
		}
	}
	return out
}

// killStoredChunks are the chunks stored in the kill -9 namespace.
func killStoredChunks(t *testing.T, cli *clientv3.Client) []string {
	t.Helper()
	resp, err := cli.Get(context.Background(), "/memfs/"+killNS+"/c/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range resp.Kvs {
		out = append(out, strings.TrimPrefix(string(kv.Key), "/memfs/"+killNS+"/c/"))
	}
	return out
}

// slowValue is the value TestCollectSlowSave saves: 8 chunks.
func slowValue(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 8))
	v := make([]byte, 8*blockSize)
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

// slowWriter saves slowValue under "slow" with Save or Apply
// (MEMFS_GC_ROUND even or odd) and exits.
func slowWriter() int {
	st, seed, round := roleStore()
	e := backend.Entry{Key: "slow", Value: slowValue(seed), Info: backend.Info{Mode: 0o644, MTime: time.Now()}}
	var err error
	if round%2 == 0 {
		err = st.Save(context.Background(), e)
	} else {
		_, err = st.Apply(context.Background(), backend.Batch{Saves: []backend.Entry{e}})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "save:", err)
		return 1
	}
	return 0
}

// TestCollectSlowSave: a save that stops (SIGSTOP) after writing some of
// its chunks, for longer than the grace, while a collection runs, then
// goes on: what it acknowledges reads back whole. (A save slower than the
// grace, on a loaded machine or a slow link, lost the chunks it had
// written before the collection's mark.)
func TestCollectSlowSave(t *testing.T) {
	srv := etcdtest.Start(t)
	const grace = 200 * time.Millisecond
	clk := newClock()
	st := open(t, srv, killNS, func(c *etcdstore.Config) { c.ChunkGrace, c.Now = grace, clk.Now })
	cli := raw(t, srv)
	// Save, then Apply, each stopped for less than the lease's TTL, then
	// for longer: its intent is gone then, and Save fails, writing
	// nothing; Apply writes its chunks again and commits.
	for round := range 4 {
		long := round >= 2
		seed := uint64(round + 1)
		v := slowValue(seed)
		var keys []string
		for i := 0; i < len(v); i += blockSize {
			sum := sha256.Sum256(v[i : i+blockSize])
			keys = append(keys, "/memfs/"+killNS+"/c/"+hex.EncodeToString(sum[:]))
		}
		st.Delete(context.Background(), "slow")
		for _, k := range keys { // none of them stored before
			if _, err := cli.Delete(context.Background(), k); err != nil {
				t.Fatal(err)
			}
		}
		p := startRole(t, "slow", srv.Endpoint(), seed, round)
		// Stop it when some of its chunks are written and its record
		// is not.
		deadline := time.Now().Add(60 * time.Second)
		for {
			resp, err := cli.Get(context.Background(), keys[0], clientv3.WithCountOnly())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Count > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the writer wrote no chunk in 30 s")
			}
		}
		p.cmd.Process.Signal(syscall.SIGSTOP)
		if _, err := st.Load(context.Background(), "slow"); err == nil {
			t.Fatalf("round %d: the save was over before it could be stopped", round)
		}
		if long { // the lease of the stopped process ends on etcd's clock
			waitGone(t, cli, "/memfs/"+killNS+"/g/w/", "the stopped writer's intent", 60*time.Second)
		}
		if _, err := st.Collect(context.Background()); err != nil { // the mark
			t.Fatal(err)
		}
		clk.advance(grace) // the collection's grace passes while the save stands still
		got, err := st.Collect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p.cmd.Process.Signal(syscall.SIGCONT)
		for range p.lines {
		}
		<-p.done
		if long && round%2 == 0 {
			if p.cmd.ProcessState.Success() || !strings.Contains(p.stderr.String(), "lease ended") {
				t.Fatalf("round %d: a Save whose lease ended while it was stopped: %v, %s; want it to fail, saying so", round, p.cmd.ProcessState, p.stderr.String())
			}
			if _, err := st.Load(context.Background(), "slow"); !errors.Is(err, backend.ErrKeyNotFound) {
				t.Fatalf("round %d: a Save that failed left a record: %v", round, err)
			}
			continue
		}
		if !p.cmd.ProcessState.Success() {
			t.Fatalf("round %d: the save failed (%v); it should have gone on", round, p.cmd.ProcessState)
		}
		e, err := st.Load(context.Background(), "slow")
		if err != nil || !bytes.Equal(e[0].Value, v) {
			t.Fatalf("round %d: the save, acknowledged after a collection removed %d chunks, reads back: %v", round, got.Removed, err)
		}
	}
}
