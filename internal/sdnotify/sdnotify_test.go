package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestNotifyReachesSocket sends through $NOTIFY_SOCKET to a real unix
// datagram socket, as systemd's, and reads the datagram there.
func TestNotifyReachesSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv(Socket, path)
	sent, err := Notify("READY=1\n" + Status("serving\nat /m"))
	if err != nil || !sent {
		t.Fatalf("Notify = %v, %v; want true, nil", sent, err)
	}
	buf := make([]byte, 1024)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(buf[:n]), "READY=1\nSTATUS=serving at /m"; got != want {
		t.Errorf("datagram %q, want %q", got, want)
	}
}

// TestNotifyAbstractSocket: systemd may name an abstract socket ("@...").
func TestNotifyAbstractSocket(t *testing.T) {
	name := "@memfs-sdnotify-test-" + filepath.Base(t.TempDir())
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv(Socket, name)
	if _, err := Notify("STOPPING=1"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := conn.Read(buf)
	if string(buf[:n]) != "STOPPING=1" {
		t.Errorf("datagram %q", buf[:n])
	}
}

func TestNotifyWithoutManager(t *testing.T) {
	t.Setenv(Socket, "")
	if sent, err := Notify("READY=1"); sent || err != nil {
		t.Errorf("Notify without NOTIFY_SOCKET = %v, %v; want false, nil", sent, err)
	}
}

// TestListener is the starter's end: what a child sends is read back as
// its keys, and Close leaves no socket behind.
func TestListener(t *testing.T) {
	l, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(l.Path())); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	if err := Send(l.Path(), "READY=1\nSTATUS=up"); err != nil {
		t.Fatal(err)
	}
	st, err := l.Next(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st["READY"] != "1" || st["STATUS"] != "up" {
		t.Errorf("Next = %v", st)
	}
	l.Close()
	if _, err := os.Stat(l.Path()); !os.IsNotExist(err) {
		t.Errorf("socket after Close: %v", err)
	}
}
