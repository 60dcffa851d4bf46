// Package manpage finishes memfs(1): the page the command renders from
// its commands and flags gets the sections their help cannot hold
// (mount(8) and fstab, ENVIRONMENT, EXIT STATUS, FILES with the .memfs/
// files of a mount, SEE ALSO), and the defaults computed from the
// environment of whoever renders it (an install as root) are written as
// the variables they come from, so that the page is true for every user.
//
// # Concurrency
//
// Finish is a pure function of its arguments.
package manpage

import (
	"path/filepath"
	"strings"
)

// Finish returns page (roff, the commands' section) with the other
// sections appended, and each value of the variables in env (the
// renderer's: HOME, XDG_*_HOME) that a default shows written as the
// variable: "~" for HOME, "$XDG_DATA_HOME" and so on.
func Finish(page string, getenv func(string) string) string {
	for _, v := range []string{"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "HOME"} {
		dir := filepath.Clean(getenv(v))
		if !filepath.IsAbs(dir) || dir == "/" {
			continue
		}
		name := "$" + v
		if v == "HOME" {
			name = "~"
		}
		page = strings.ReplaceAll(page, dir+"/", name+"/")
	}
	return page + System
}

// System holds the sections after the commands'.
const System = `
.SH MOUNT(8) AND /ETC/FSTAB
With \fI/sbin/mount.fuse.memfs\fP linked to memfs (\fBmemfs install\fP), or memfs in
/usr/local/bin or /usr/bin and fuse3's mount.fuse installed:
.PP
.EX
mount -t fuse.memfs badger:/var/lib/memfs/store /srv/memory -o allow_other
.EE
.PP
and in /etc/fstab (the store is the first field, or \fBstore=\fP with any first field):
.PP
.EX
badger:/var/lib/memfs/store  /srv/memory  fuse.memfs  defaults,_netdev,flush_interval=10s  0  0
.EE
.PP
Options: \fBro\fP, \fBallow_other\fP, \fBstore=\fP\fISPEC\fP, \fBlog=\fP\fIFILE\fP, \fBtimeout=\fP\fIDURATION\fP (how long
mount waits for the mount to serve; 2m), and every flag of \fBmemfs mount\fP as \fINAME\fP=\fIVALUE\fP or \fINAME\fP
(flush_interval=10s, bootstrap=memory/ repeated for more prefixes, noxattrs); the generic
options (defaults, rw, dev, suid, exec, auto, noauto, user, _netdev, nofail, x-systemd.*, ...)
are accepted and ignored; any other option is refused. The helper starts \fBmemfs mount\fP in the
background and returns once the mount serves, or fails with the server's error.
Unmount with \fBmemfs unmount\fP \fIDIR\fP or \fBumount\fP \fIDIR\fP: with \fI/sbin/umount.fuse.memfs\fP (\fBmemfs install\fP)
umount returns once memfs has made its last flush and exited; without it, memfs flushes
just after the unmount.
.SH ENVIRONMENT
.TP
\fBMEMFS_STORE\fP
the store when \fB--store\fP is not given (a \fB--mount\fP given overrides it)
.TP
\fBMEMFS_AGENT\fP
the agent a command or a mount writes as (\fB--agent\fP)
.TP
\fBMEMFS_EMBEDDER\fP
the embedder for semantic search (\fB--embedder\fP)
.TP
\fBMEMFS_MODEL_DIR\fP
where \fBmemfs models install\fP puts models and the default embedder finds them
(else \fI$XDG_CACHE_HOME/memfs/models\fP, else \fI~/.cache/memfs/models\fP)
.TP
\fBETCDCTL_CACERT\fP, \fBETCDCTL_CERT\fP, \fBETCDCTL_KEY\fP, \fBETCDCTL_INSECURE_SKIP_TLS_VERIFY\fP, \fBETCDCTL_USER\fP, \fBETCDCTL_PASSWORD\fP
TLS and authentication of an etcd:// store, as etcdctl reads them
.TP
\fBMEMFS_ETCD_TIMEOUT\fP
how long one etcd request may take (a Go duration, at least 100ms)
.TP
\fBXDG_DATA_HOME\fP, \fBXDG_STATE_HOME\fP, \fBXDG_CONFIG_HOME\fP, \fBXDG_CACHE_HOME\fP, \fBHOME\fP
where the default store, the journals and logs, the redaction config and the models are (see FILES)
.SH EXIT STATUS
.TP
\fB0\fP
the command did what it was asked; a mount exits 0 once it has flushed and unmounted
(\fBmemfs unmount\fP, \fBumount\fP, SIGINT or SIGTERM)
.TP
\fB1\fP
any error, printed on standard error after \fBmemfs:\fP (an unknown flag or command adds the
usage line)
.TP
\fB3\fP
\fBmemfs repo cache get\fP: the artifact is there but stale (the working tree changed since it was put)
.SH FILES
.TP
\fI$XDG_DATA_HOME/memfs/store\fP (\fI~/.local/share/memfs/store\fP)
the default store (badger)
.TP
\fI$XDG_STATE_HOME/memfs/\fP (\fI~/.local/state/memfs/\fP)
the journals of mounts of shared stores (\fIrecovery/\fP) and the logs of mounts started by mount(8) (\fIlog/\fP)
.TP
\fI$XDG_CONFIG_HOME/memfs/redact.json\fP (\fI~/.config/memfs/redact.json\fP)
the redaction rules, when it exists (\fB--redact-config\fP)
.TP
\fI/var/log/memfs/MOUNTPOINT.log\fP
log of a mount started by mount(8) as root (slashes of the mountpoint as dashes);
\fI$XDG_STATE_HOME/memfs/log/\fP for other users
.TP
\fI/usr/local/lib/systemd/system/memfs@.service\fP, \fI/usr/local/lib/systemd/user/memfs@.service\fP
the systemd units (system, user) that \fBmemfs install\fP writes (under \fB--prefix\fP); the user unit
serves the default store unless \fI~/.config/memfs/INSTANCE.env\fP sets \fBMEMFS_STORE\fP
.PP
In a mount, \fI.memfs/\fP holds memfs's own files, computed on each read and never stored:
.TP
\fI.memfs/status\fP, \fI.memfs/status.json\fP
the store, the session's counts, the live mounts (as text, as JSON)
.TP
\fI.memfs/changes\fP
every change, one JSON object a line (\fBtail -f\fP follows it)
.TP
\fI.memfs/events.jsonl\fP, \fI.memfs/events/\fP
the event log (\fBmemfs log\fP)
.TP
\fI.memfs/search/QUERY\fP
the search results for QUERY (\fBmemfs search\fP)
.TP
\fI.memfs/context.md\fP, \fI.memfs/context/QUERY\fP
context packs, each with a \fI.manifest.json\fP naming its sources (\fBmemfs context\fP)
.TP
\fI.memfs/history/KEY/\fP, \fI.memfs/snapshots/NAME/\fP, \fI.memfs/checkpoints/RUN/STEP/\fP, \fI.memfs/at/SEQ/\fP
the past, read-only: KEY's versions (one file each, and \fIlog\fP), the namespace as a snapshot,
a checkpoint or an event left it (\fBmemfs history\fP, \fBsnapshot\fP, \fBcheckpoint\fP)
.SH SEE ALSO
mount(8), fstab(5), mount.fuse3(8), systemd.service(5)
`
