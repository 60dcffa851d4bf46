// Package sdnotify speaks systemd's service notification protocol
// (sd_notify(3)) from both ends: a service sends its state ("READY=1",
// "STOPPING=1", "STATUS=...") as one datagram to the unix socket
// $NOTIFY_SOCKET names, and a starter (memfs mount --daemon, mount(8)'s
// helper) Listens on a socket of its own to learn when the process it
// started is ready, or why it failed. No dependency: the protocol is a
// newline-separated list of KEY=VALUE lines in one datagram.
//
// # Concurrency
//
// Notify is safe for concurrent use. A Listener is read by one goroutine
// (Next) and closed by any.
package sdnotify

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Socket is the environment variable that names the socket to notify: a
// path, or "@name" for an abstract socket (as systemd sets it).
const Socket = "NOTIFY_SOCKET"

// Notify sends state, newline-separated KEY=VALUE lines, to the socket
// $NOTIFY_SOCKET names. Without one (not run by a service manager) it
// does nothing and reports false; an error is the send's.
func Notify(state string) (bool, error) {
	socket := os.Getenv(Socket)
	if socket == "" {
		return false, nil
	}
	return true, Send(socket, state)
}

// Send sends state to the unix datagram socket at socket (a leading '@'
// names an abstract socket).
func Send(socket, state string) error {
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sdnotify: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sdnotify: %w", err)
	}
	return nil
}

// Status is a STATUS= value: one line (a newline would end it).
func Status(s string) string {
	return "STATUS=" + strings.Join(strings.Fields(s), " ")
}

// Listener receives notifications, as a service manager does, on a
// socket in a directory of its own (mode 0700: only its user's processes
// reach it).
type Listener struct {
	conn *net.UnixConn
	dir  string
}

// Listen makes a Listener; give its Path to the process to watch as
// $NOTIFY_SOCKET, and Close it after.
func Listen() (*Listener, error) {
	dir, err := os.MkdirTemp("", "memfs-notify-")
	if err != nil {
		return nil, fmt.Errorf("sdnotify: %w", err)
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "notify"), Net: "unixgram"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sdnotify: %w", err)
	}
	return &Listener{conn: conn, dir: dir}, nil
}

// Path is the socket's path, the value of $NOTIFY_SOCKET.
func (l *Listener) Path() string { return filepath.Join(l.dir, "notify") }

// Next waits until deadline (zero: for ever) for the next notification
// and returns its KEY=VALUE lines as a map; past the deadline the error
// is os.ErrDeadlineExceeded, after Close that of the closed socket.
func (l *Listener) Next(deadline time.Time) (map[string]string, error) {
	if err := l.conn.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	buf := make([]byte, 64<<10)
	n, err := l.conn.Read(buf)
	if err != nil {
		return nil, err
	}
	state := map[string]string{}
	for line := range strings.SplitSeq(string(buf[:n]), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			state[k] = v
		}
	}
	return state, nil
}

// Close closes the socket and removes it with its directory.
func (l *Listener) Close() error {
	err := l.conn.Close()
	os.RemoveAll(l.dir)
	return err
}
