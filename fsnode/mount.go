package fsnode

import (
	"fmt"
	"log"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/session"
)

// MountOptions are the kernel-facing options of Mount.
type MountOptions struct {
	AllowOther bool
	ReadOnly   bool
	Debug      bool
	FsName     string // shown in /proc/mounts; "" means "memfs"
	// NoXAttrs switches extended attributes off: the kernel answers
	// ENOTSUP itself and never asks memfs. Without them ls -l makes no
	// GETXATTR round trips (one per file for security.selinux, which the
	// kernel does not cache; the ACL's answer it keeps).
	NoXAttrs bool
	// Requests, when set, counts every request that reaches memfs.
	Requests *Requests
}

// Mount mounts root at dir and returns the running server. The caller
// waits with Wait and unmounts with Unmount; root.Close after that.
func Mount(dir string, root *Root, mo MountOptions) (*fuse.Server, error) {
	entry, attr, neg := root.opts.EntryTimeout, root.opts.AttrTimeout, root.opts.NegativeTimeout
	name := mo.FsName
	if name == "" {
		name = "memfs"
	}
	opts := &gofs.Options{
		EntryTimeout:    &entry,
		AttrTimeout:     &attr,
		NegativeTimeout: &neg,
		// Mode 0 is mode 0 (go-fuse would substitute 0644/0755).
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			FsName:      name,
			Name:        "memfs",
			DirectMount: true,
			AllowOther:  mo.AllowOther,
			Debug:       mo.Debug,
			// rawFS answers security.* and system.* reads (go-fuse's
			// IgnoreSecurityLabels knows three names, and answers before
			// MountOptions.Requests can count them).
			DisableXAttrs: mo.NoXAttrs,
			// The kernel keeps each inode's ACL (absent: memfs stores
			// none, and refuses to set one), so ls -l asks for it once.
			EnableAcl: true,
			// memfs clears setuid and setgid itself (rawFS), so the
			// kernel asks for no security.capability before each WRITE.
			ExtraCapabilities: fuse.CAP_HANDLE_KILLPRIV_V2,
			MaxWrite:          1 << 20,
			// The kernel checks permissions (sticky directories
			// included) against the modes memfs reports; device nodes
			// and setuid files are kept, never honoured.
			Options: []string{"default_permissions", "nosuid", "nodev"},
		},
	}
	if mo.Debug {
		// go-fuse prints payload bytes; the writer keeps sizes and
		// redacted names only.
		r := root.c.Redactor()
		redactName := func(name string) string {
			if r != nil {
				if out, f := r.Redact("", []byte(name)); len(f) > 0 {
					return string(out)
				}
			}
			return name
		}
		opts.MountOptions.Logger = log.New(debugWriter{log: root.log, red: redactName}, "", 0)
	}
	if mo.ReadOnly {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "ro")
	}
	root.mounting.Store(true)
	defer root.mounting.Store(false)
	var raw fuse.RawFileSystem = rawFS{gofs.NewNodeFS(root, opts)}
	if mo.Requests != nil {
		raw = countingFS{RawFileSystem: raw, n: mo.Requests}
	}
	// gofs.Mount, with the file system wrapped.
	server, err := fuse.NewServer(raw, dir, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("fsnode: mount %s: %w", dir, err)
	}
	go server.Serve()
	if err := server.WaitMount(); err != nil {
		// As gofs.Mount: a mount that failed has no loop to stop.
		return nil, fmt.Errorf("fsnode: mount %s: %w", dir, err)
	}
	return server, nil
}

// Session returns the session the tree serves.
func (r *Root) Session() *session.Context { return r.c }
