package badgerstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dir string) (backend.Store, error) {
		return Open(dir, Options{})
	})
}

func openT(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLargeValueSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 40<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>13)
	}
	if err := s.Save(t.Context(), backend.Entry{Key: "skills/x/resources/model.bin", Value: big, Info: backend.Info{Mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openT(t, dir)
	got, err := s2.Load(t.Context(), "skills/x/resources/model.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[0].Value, big) || got[0].Info.Size != int64(len(big)) {
		t.Fatalf("40 MiB value came back as %d bytes (equal=%v)", len(got[0].Value), bytes.Equal(got[0].Value, big))
	}
}

func TestBatchBeyondTxnLimitIsSplitAndComplete(t *testing.T) {
	s := openT(t, t.TempDir())
	// 2,000 values of 16 KiB inline values (below the value threshold):
	// about 32 MiB, several times the 4.8 MiB transaction limit.
	const n = 2000
	batch := make([]backend.Entry, n)
	for i := range batch {
		v := bytes.Repeat([]byte{byte(i)}, 16<<10)
		batch[i] = backend.Entry{Key: fmt.Sprintf("d%02d/f%05d", i%20, i), Value: v, Info: backend.Info{Mode: 0o644}}
	}
	before := s.txns.Load()
	if err := s.Save(t.Context(), batch...); err != nil {
		t.Fatal(err)
	}
	used := s.txns.Load() - before
	if used < 2 {
		t.Fatalf("the batch used %d transaction(s): it did not cross the limit, the test proves nothing", used)
	}
	t.Logf("%d entries of 16 KiB saved in %d transactions", n, used)
	l, err := s.List(t.Context())
	if err != nil || len(l) != n {
		t.Fatalf("List = %d keys, %v; want %d", len(l), err, n)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		got, err := s.Load(t.Context(), batch[i].Key)
		if err != nil || !bytes.Equal(got[0].Value, batch[i].Value) {
			t.Fatalf("entry %d after split save: %v", i, err)
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
}

func TestListReadsNoValues(t *testing.T) {
	s := openT(t, t.TempDir())
	if err := s.Save(t.Context(), backend.Entry{Key: "a", Value: make([]byte, 1<<20), Info: backend.Info{Mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	// Remove the value behind List's back: List must still work, because
	// it never looks at values, and Load must notice.
	if err := s.db.DropPrefix([]byte(valuePrefix)); err != nil {
		t.Fatal(err)
	}
	l, err := s.List(t.Context())
	if err != nil || len(l) != 1 || l[0].Info.Size != 1<<20 {
		t.Fatalf("List without values = %+v, %v", l, err)
	}
	if _, err := s.Load(t.Context(), "a"); err == nil {
		t.Fatal("Load of a key without its value succeeded")
	}
}

// TestMain lets the test binary hold a store in a child process.
func TestMain(m *testing.M) {
	if dir := os.Getenv("BADGERSTORE_HOLD"); dir != "" {
		s, err := Open(dir, Options{})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("held")
		time.Sleep(time.Minute)
		s.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestInUseByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BADGERSTORE_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "held") {
		t.Fatalf("child did not hold the store: %q", buf[:n])
	}
	_, err = Open(dir, Options{})
	if !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", cmd.Process.Pid)) {
		t.Fatalf("Open of a store held by pid %d = %v", cmd.Process.Pid, err)
	}
}
