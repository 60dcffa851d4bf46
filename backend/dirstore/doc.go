// Package dirstore is a backend.Store kept in a plain directory: one node
// (file, directory, symlink, fifo, socket, device) per key, so the store can be read, grepped, edited, backed up and put
// under version control with ordinary tools while no mount is running.
//
//	s, err := dirstore.Open(filepath.Join(home, ".local/share/memfs"))
//	if err != nil {
//		return err // wraps backend.ErrStoreInUse if a mount holds it
//	}
//	defer s.Close()
//	err = s.Save(ctx, backend.Entry{Key: "memory/global.md", Value: v, Info: info})
//
// # Layout
//
// A key is the node's path relative to the root, unchanged:
// "memory/global.md" is <root>/memory/global.md. Every node is a key as
// itself, dotfiles included (.git, .env): a regular file (its content is
// the value), a directory (an entry of its own, with no value), a symlink
// (its target is the value; it is never followed), a fifo, a socket, a
// character or block device (no value; Info.Rdev from stat). Info is what
// lstat(2) reports: the mode with the node type and the setuid, setgid and
// sticky bits, owner, atime, mtime, ctime, and user.* extended attributes.
// A node that is not a directory and has several names (st_nlink > 1) is
// listed under each with Info.Link = "i<dev>.<ino>", the same for all of
// them; the Link a caller saved under is not kept (the contract allows
// it). Only memfs's own names stay out (backend.IsReserved: the lock, the
// marker, the journal, system records, temp nodes); a name that is not a
// valid key (invalid UTF-8 or a control character, for example) is skipped, a directory whole, and
// reported by Skipped, as is a directory the process may not read (it is
// listed, its content is not).
//
// Directories are entries: Save makes one with its attributes, Delete
// removes one only when it is empty, and neither prunes or creates one
// unasked, but for the directories a key needs (0755, less the umask),
// which then stay. List reports every directory but the root.
//
// # Node types
//
// Save writes each node under a temp name (".memfs-tmp-<random>") in its
// key's directory and renames it over the key, so a reader sees the old
// node or the new one: a file is written and fsynced, a symlink made with
// symlinkat, a fifo, socket or device with mknodat. Owner first (lchown
// for a symlink), then the mode (chown clears setuid and setgid; a symlink
// has no mode of its own), then atime and mtime with utimensat and
// AT_SYMLINK_NOFOLLOW (a zero ATime is the MTime; a zero MTime the time of
// the save). The ctime cannot be set: List reports the real one, which is
// the save's time.
//
// A directory is made in place (mkdirat) and, after everything the same
// Save puts in it, gets its owner, mode, times and attributes (the whole
// set: names not given are removed), deepest first: saving into it moves
// its mtime, and a mode without write permission would stop a process that
// is not root from saving into it. An existing directory keeps what it
// holds. A node of another type in a directory's way is never replaced
// (it may be another program's file): the Save fails with fs.ErrExist, and
// the caller deletes the node first; a directory in the
// way of another node type is removed the same way only when it is empty,
// else it is put back and the Save fails with an error naming the key.
//
// Entries of one Save that share a non-empty Info.Link are one node: the
// first is written, the others are linked to it under temp names of their
// own (linkat) and all are renamed over their keys, so every name is the
// same inode. The first entry's value and attributes are the node's.
//
// Extended attributes: Linux keeps user.* attributes on regular files and
// directories only (the VFS refuses them with EPERM on a symlink, fifo,
// socket or device, on every filesystem, and a mount is never handed one).
// An entry of those types that carries some is refused with
// backend.ErrInvalidXAttr before anything is written, rather than dropped;
// List and Load do not ask for theirs.
//
// Device nodes need CAP_MKNOD: without it Save fails with EPERM naming the
// key. A symlink, fifo, socket or device has no data to fsync and cannot be
// opened for fsync without following it or opening the device: the fsync
// of its directory after the rename makes it durable, as journalling
// filesystems (ext4, xfs, btrfs) commit the inode with the entry.
//
// # No symlink is followed
//
// Every key path is resolved from a descriptor of the root one segment at
// a time with openat(O_NOFOLLOW|O_DIRECTORY): a symlink on the way (one
// that leaves the root, one that stays inside it, such as "skills/link" ->
// "../memory") is never followed. Save of a key under one fails with an
// error that names the key and matches ENOTDIR; Load and Stat report such a
// key as not found (it matches backend.ErrKeyNotFound and ENOTDIR); Delete
// ignores it, as it is not in the store; List does not enter a symlink, nor
// a directory that becomes one while it walks (each directory is opened
// from its parent's descriptor, O_NOFOLLOW). Load reads a symlink's target
// with readlinkat and never opens a fifo or a device: the node is pinned
// with an O_PATH|O_NOFOLLOW descriptor and, only if it is a regular file,
// reopened through /proc/self/fd (the same inode, whatever has taken the
// name since). Files and directories are read with O_NOATIME where the
// process may (the owner, or root), so memfs moves no atime it keeps;
// readlink moves a symlink's atime whatever the flags, and Load puts it
// back (which moves the symlink's ctime). System records (sys.go) live in
// .memfs-sys and go through an os.Root with each path checked for links.
//
// # Atomicity
//
// Each node is written atomically, as above. A batch is not atomic as a
// whole: if Save fails, each key of the batch holds its old node or its
// new one, and the temp nodes it made are removed. Every entry of a batch
// is validated (backend.ValidateEntries, and the xattr rule above) before
// anything is written, so an invalid entry fails the batch with nothing
// touched. A crash can leave a temp node behind; its name is reserved, so
// it is never listed, and the next Open sweeps them all away (a temp
// directory only when empty). Nor can a save in one file and a delete of
// another be one step, so the store is not a backend.Batcher: a caller
// makes its Save and Delete calls in the order that loses nothing (the
// session saves before it deletes). Its capabilities are
// backend.SysStore, backend.Walker, backend.Versioned,
// backend.ConditionalDeleter and backend.Spacer.
//
// SaveIf (backend.Versioned) saves regular files with one name
// conditionally; directories, symlinks, fifos, sockets, devices and
// hard-link groups of the same call are saved first, as Save does.
// DeleteIf (backend.ConditionalDeleter) removes a node only while it is
// the version expected.
//
// # Versions
//
// A version (backend.Version) is the size, mtime and ctime. The kernel
// moves a node's ctime on every change of it: its content, mode, owner,
// attributes, link count, and a rename; no process can set it. So another
// program's chmod, chown or setxattr, which leaves size and mtime as they
// were, is a new version: a conditional save keeps it beside the key, a
// conditional delete leaves it, and neither reverts it. Measured on
// Linux 6.18 (ext4 and tmpfs): over 20,000 rounds of stat, chmod, stat,
// the ctime moved every time (multigrain timestamps: a change after a
// stat gets a fine-grained time); before 6.13 the ctime is the clock's
// tick, so a change of mode or attributes alone within the tick of
// memfs's own save (a few ms) looks like memfs's version. A
// digest of every attribute was the alternative, and was rejected: the
// ctime costs nothing (List has it), and covers what a digest would have
// to list. Because the ctime cannot be chosen, Save and SaveIf write the
// one each node got into the caller's entries (Info.CTime), and Load of a
// symlink reports the ctime after it put the atime back. A node with
// several names has no ctime in its version (backend.VersionOf): removing
// one name moves the others'. Nor has a symlink, for a delete: every Load
// moves it.
//
// The renames that a conditional save or delete makes move the ctime of
// the node they displace, so each reads the node first (stat and user.*
// attributes), renames, and checks that the node displaced is that node,
// unchanged but for its ctime. A delete renames the node to a temp name
// to look at it; one that is not the version expected goes back (for
// that moment the name is absent), and is reported on every running
// Watch, since nothing changed that the kernel would report.
//
// # Durability
//
// When Save returns nil, the data and the names are durable. One file takes
// fsync(file), rename, fsync(dir). A batch waits twice where that sequence
// waits twice per file: it writes every temp file and fsyncs them
// concurrently (on up to 32 goroutines), so that all data is on disk before
// any key changes; renames them all; then fsyncs each directory that gained
// an entry once, concurrently. A directory Save created is made durable by
// syncing its parents too; a directory entry is fsynced once its
// attributes are set. Delete fsyncs each directory it changed once. The
// directories of one call are opened once each, from their parent's
// descriptor, and kept open until it returns.
//
// BenchmarkSave measures it against the serial sequence per file: see
// BENCHMARKS.md, "Dir store: one barrier for many files" (from 100 files
// on, batched takes a fraction of the serial time).
//
// One syncfs(2) in place of each concurrent fsync round is about twice as
// fast again on an idle filesystem (same section), and was rejected: it
// writes back every dirty page of the filesystem, not only ours. With 1 GiB that another program had just written, a batch of 100
// took 290-440 ms with syncfs and 13-18 ms with concurrent fsync on the same
// machine; on a slow disk that gap becomes seconds, and a home directory is
// where builds and browsers write. syncfs would also miss a filesystem
// mounted below the root. Concurrent fsync pays for our own files only.
//
// # Lock
//
// Open takes an exclusive, non-blocking flock(2) on <root>/.memfs-sys/.lock
// and writes its PID there (memfs's own files are in .memfs-sys, ignored by
// git: own.go). On a store an older memfs made, it also locks
// <root>/.memfs.lock, that memfs's lock, without writing into it. A second Open of the same directory, in another
// process or in this one (flock belongs to the open file description), fails
// with an error wrapping backend.ErrStoreInUse that names the holder's PID.
// Close releases the lock; the file stays, since removing a lock file lets
// two processes both believe they hold it. The kernel drops the lock when
// the holder dies, so a crash never leaves the store locked.
//
// OpenReadOnly (the commands that only read) changes nothing in the root:
// it shares the lock file with other readers (a flock(2) LOCK_SH, on the
// file opened read-only: no PID written), creates none where there is
// none, writes no marker and sweeps no temp; every write fails with
// backend.ErrReadOnly. Open and OpenReadOnly exclude each other.
//
// # Owner and mode
//
// Save sets Info.Mode's permission, setuid, setgid and sticky bits exactly
// (no umask) and gives the node to Info.UID and Info.GID. A process that is
// not root may only give a node to a group it belongs to; the contract asks
// for the owner "as far as the process may set" it, so when chown fails
// with EPERM for a non-root process the node keeps the writer's owner and
// Save goes on. List and Load report the owner the node really has.
//
// # Watch
//
// A Store is a backend.Watcher: Watch follows the directory with inotify
// (fsnotify), recursively. A directory that appears is reported, watched
// at once, and every node found in it reported (its files raised no event
// of their own); a directory removed or renamed away is reported under its own key,
// and the reader looks for the keys it held under it. memfs's own names
// (backend.IsReserved: the lock, the journal, the records, temp nodes) and
// names that are no valid key are never reported. Hidden directories
// (".git", ".cache") are not entered: a repository holds thousands of
// them, each an inotify watch from a small per-user budget, and a change
// inside one is seen at the next List. An overflow of the kernel's queue
// (or any other watch error) is reported as Change{Lost: true}.
//
// # Concurrency
//
// A Store is safe for concurrent use. It holds no lock of its own: each
// operation relies on the filesystem's atomic create, rename, renameat2
// and rmdir, and resolves its keys' directories afresh.
//
// Each Watch runs one goroutine (and fsnotify's own), which owns its
// inotify instance and its channel; it sends with ctx and Close watched,
// so a reader that stops reading never holds it. It ends, closing the
// channel, when ctx is done or Close is called; Close waits for every
// Watch to end before it releases the store.
package dirstore
