package mounthelper_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/mounthelper"
	"github.com/memfs/memfs/internal/mounttest"
)

// serveEnv makes the test binary a memfs process serving the dir store
// STORE at MNT ("STORE:MNT") until it is unmounted: what umount(8)'s
// helper waits for.
const serveEnv = "MOUNTHELPER_TEST_SERVE"

func TestMain(m *testing.M) {
	if v := os.Getenv(serveEnv); v != "" {
		store, mnt, _ := strings.Cut(v, ":")
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		err := memfs.RunMount(ctx, mnt, memfs.RunOptions{StoreDir: store, Logger: slog.New(slog.DiscardHandler),
			Open: func(ctx context.Context) (*memfs.FS, error) {
				st, err := dirstore.Open(store)
				if err != nil {
					return nil, err
				}
				return memfs.Open(ctx, st, memfs.Options{JournalPath: filepath.Join(store, dirstore.JournalName), Logger: slog.New(slog.DiscardHandler)})
			}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestUmount unmounts a mount another process serves and waits for that
// process to exit, saying so when verbose; a directory that is no mount
// is an error naming it, made absolute, and nothing is said.
func TestUmount(t *testing.T) {
	mounttest.NeedFUSE(t)
	wd := t.TempDir()
	t.Chdir(wd)
	var out strings.Builder
	if err := mounthelper.Umount(&out, "nomount", false, false, true, time.Second); err == nil || !strings.Contains(err.Error(), filepath.Join(wd, "nomount")) || out.Len() > 0 {
		t.Errorf("Umount of no mount = %v, said %q; want an error naming it, absolute, and nothing said", err, out.String())
	}

	store, mnt := t.TempDir(), filepath.Join(t.TempDir(), "mnt")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+store+":"+mnt)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	exited := false
	t.Cleanup(func() { // after a failure: nothing left serving
		if !exited {
			cmd.Process.Kill()
			<-waited
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	await.True(t, "the mount", 10*time.Second, func() bool { return mounthelper.ServedBy(mnt) == cmd.Process.Pid })
	if err := mounthelper.Umount(&out, mnt, false, false, true, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s: unmounted; memfs process %d flushed and exited\n", mnt, cmd.Process.Pid); out.String() != want {
		t.Errorf("Umount said %q, want %q", out.String(), want)
	}
	select {
	case err := <-waited:
		exited = true
		if err != nil {
			t.Errorf("the serving process: %v; want it to exit cleanly", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the serving process has not exited")
	}
}
