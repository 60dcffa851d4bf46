// Package fsnode is the go-fuse node tree that serves a session.Context as
// a directory. It is a thin view: every node method converts its
// arguments, calls one session method, and converts the result with
// toErrno, the one errno table of memfs. Nodes hold no file state; the
// session owns it all, so the kernel may forget and re-look-up any node at
// any time without losing a byte.
//
// # Layout
//
// The session's keys are files; directories are implied by keys (or made
// with mkdir). ".memfs" at the root is reserved for memfs's own read-only
// virtual files: ".memfs/status" reports the session's counts, the last
// flush, and the damaged keys (session Damaged: one "damaged: KEY" line per
// key the caller may see, a count of the others); ".memfs/status.json" is
// the same status.Status as JSON. Package status owns that format.
//
// # Decisions
//
//   - Inode numbers come from the session, which gives every file and
//     directory a number for its lifetime and keeps it across renames, so
//     go-fuse and the kernel see one identity per file.
//   - Entry, attribute and negative timeouts default to 1 s: with them an
//     ls -lR of thousands of files costs almost no LOOKUPs (FUSE-NOTES).
//   - Opens return FOPEN_KEEP_CACHE unless the content changed behind the
//     kernel since the node's last open (redaction, a reload); such changes
//     are also pushed with NotifyContent from one goroutine, never from a
//     request handler or under a lock (a deadlock otherwise).
//   - Read-only opens carry FOPEN_NOFLUSH: no FLUSH round trip on close.
//   - Extended attributes: user.* only, kept with the entry (see xattr.go).
//     A read of a name in another namespace is answered ENODATA before the
//     node tree sees it (labelFS: no lock, no node). ls -l asks for two per
//     file (security.selinux, system.posix_acl_access): measured 0.07 s ->
//     0.58 s for ls -lR of 10,000 files. The mount enables POSIX ACLs
//     (FUSE_POSIX_ACL), so the kernel keeps the answer for the ACL and asks
//     once per inode; it caches no label, so one GETXATTR a file remains
//     per ls -l (TestRequestsLsLong). Setting an ACL is refused (ENOTSUP),
//     as before. MountOptions.NoXAttrs (memfs mount --xattrs=false)
//     switches them off: the kernel then answers ENOTSUP by itself.
//   - The mount asks for HANDLE_KILLPRIV_V2: memfs clears setuid and
//     setgid itself where the kernel flags a WRITE, an O_TRUNC open or a
//     SETATTR (rawFS), and the kernel no longer asks for
//     security.capability before every WRITE (one GETXATTR per inode
//     instead of one per write).
//   - MountOptions.Requests counts the requests that reach memfs by
//     opcode; the request-count tests (requests_mount_test.go) hold each
//     workload (stat, ls -l, cat, grep -r, sed -i, vim, git status,
//     create) to a budget written beside it.
//   - fsync flushes the whole session: a file's name may depend on a
//     rename or a new directory, so only a full flush makes it durable.
//   - O_APPEND writes append at the session's end of file, not at the
//     kernel's offset, so concurrent appenders never overwrite each other.
//   - Mode, owner and times are stored and persisted exactly, those of
//     directories too: a directory is an entry of the store (see backend).
//     The root's (mode, owner, times, user.* xattrs) are the store's
//     system record backend.RootRecord, on every store: cp -a, rsync -a
//     and tar -x into the mount's root set them, and a chmod 700 of the
//     root holds after a remount (it matters with --allow-other).
//   - .memfs is not listed in the root (Options.ShowMemfs lists it); it
//     opens by name, as ZFS's .zfs does, so tree walks (grep -r, find,
//     cp -a, rsync, git add -A) leave memfs's own files out. Every
//     directory lists . and .. (go-fuse looks neither up).
//   - .memfs/status and status.json report the caller's size at each
//     stat (their text differs between callers), so tools that copy
//     st_size bytes (rsync) copy them whole; they are served DIRECT_IO.
//   - statfs reports the store's room (Options.Space): its usage as used,
//     the room left on its filesystem (or in its quota) as available.
//   - Hard links, symlinks, device nodes, fifos and sockets are made in
//     the session (Link, Symlink, MakeNode) and stored as such; the mount
//     is nodev and nosuid, so device nodes and setuid bits are kept, never
//     honoured.
//   - The mount uses default_permissions: the kernel checks the stored
//     modes against the caller, so --allow-other holds others to them.
//   - The past (.memfs/history, snapshots, checkpoints, at; see history.go) is served
//     with its modes and owners as they were, which the kernel checks,
//     plus memfs's check of the present at each lookup, open and listing;
//     a version never changes, so its entry and attributes are cached an
//     hour and its pages kept: a warm stat or read costs no request.
//   - Checkpoints (snapshots named RUN/STEP) are taken by mkdir of
//     .memfs/checkpoints/RUN/STEP: every run name is a directory there,
//     empty until its first step, because the kernel looks RUN up before
//     the mkdir (snapshots/RUN exists only once the run has a step, and
//     mkdir snapshots/RUN takes a plain snapshot named RUN). checkpoints/
//     lists the runs that have steps; RUN/STEP and RUN/latest are what
//     snapshots/RUN/ shows.
//   - A query longer than a file name may be (255 bytes on many kernels'
//     FUSE, 4 KiB on Linux 6.x, percent-encoded) goes through status.QueryFile
//     (.memfs/search/.query, .memfs/context/.query): written and read back
//     on one read-write descriptor, whose opener the answer is for, so the
//     per-caller masking of answers holds and no path carries the query.
//
// # Concurrency
//
// go-fuse calls node methods from many goroutines at once. A node keeps no
// state but a few atomic fields (a directory's last attributes, a file's
// page-cache version and its O_TMPFILE handle); the rest is the session's,
// and a session.Context is safe for concurrent use. The methods of Root
// (Reads, Session, Close) are safe for concurrent use too. A Root serves
// one mount. The external-change helper's create and unlink are
// recognised by the session's announcements (session.CreateAnnounced,
// RemoveAnnounced): fsnode holds no state for them.
//
// NewRoot registers a session watch and starts one goroutine, which sends
// the kernel every cache invalidation (NotifyContent, NotifyEntry). The
// watch callback runs on whichever goroutine changed the session (a
// request handler, extwatch's worker, a flush), with no lock held; it
// appends to the change feed and queues the key, and never notifies the
// kernel itself. Close removes the watch, then stops the goroutine and
// waits for it. Call Close once the server has unmounted (after its Wait
// returns), never from a request handler or a session watch callback: a
// notification in flight can wait on the kernel, and the kernel on that
// request. Close may be called more than once.
//
// fsnode's own locks each guard a little memory and are never held
// together: the staging table's (Root.stageMu), the notification queue's
// (notifyQueue.mu) and the answer cache's (answerCache.mu). fsnode holds
// none of them across a call into the session, a callback or a kernel
// notification. The callbacks in Options (Status, ContextPack, Search,
// Events, Records) are called from request handlers, concurrently and with
// no fsnode lock held, so each must be safe for concurrent use. An Answer
// may take long; it blocks only the request that asked. Records'
// RecordNames and RecordSize, and Events' Size, are called by lookup and
// getattr and must answer from memory; ReadRecord and ReadAt get the
// request's context. fsnode never calls the store (internal/lint holds
// it). No callback may touch the mountpoint: the kernel may hold, for the
// request being served, a lock that the nested request needs.
package fsnode
