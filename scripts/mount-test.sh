#!/usr/bin/env bash
# End-to-end test of memfs with real tools on a real FUSE mount, for each
# backend (dir, badger and etcd):
#
#   import testdata/sample into a fresh store, mount it, then use ls -lR, cat,
#   grep -r, cp -r in and out, mv of a file and of a directory, rm -r, sed -i,
#   vim in ex mode, a python3 write-to-temp-then-os.replace, echo >>,
#   truncate, chmod, chown, touch -d and mkdir -p on it while inotifywait
#   watches it; unmount; remount; compare the whole tree with the expected
#   one; unmount; check what the store itself holds.
#
# The expected tree is not a hard-coded list: every operation is run, with
# the same command, on a plain native directory too, and the mount must give
# what the native filesystem gives (exit status, names, contents, modes,
# owners, old mtimes, grep output, ls -lR listing, inotify events).
#
# Section "lossless", on a fresh store per backend mounted with
# --allow-other: every name, node type and attribute survives a remount. A
# git repository built in the mount stays intact; a tree holding every node
# type (fifo, socket, device, symlinks, hard links, setuid/setgid/sticky,
# mode 0, dotfiles, xattrs, old atimes and mtimes) copied in with cp -a and
# rsync -aHAX compares equal to its source (rsync -n -aHAXc) after a
# remount, and again once copied back out; empty and 0700 directories and
# directory link counts survive; an unprivileged user (setpriv, uid 65534)
# meets the sticky bit and mode 0 exactly as on a native directory.
#
# Prints a PASS/FAIL line per check and a summary; exits non-zero on any
# failure. Installs what it needs (fuse3, vim, inotify-tools, python3, attr,
# git, rsync, util-linux) when missing, through scripts/install-deps.sh.
# Mounting needs root (or fuse3); the lossless section's device node and
# unprivileged checks need root. Never leaves a mount or a memfs process
# behind, also on failure or ^C.
#
# The etcd backend runs against one etcd server the script starts for its
# run (free loopback ports, data under the work directory, stopped by PID
# on exit); each section uses a namespace of its own. Every memfs process
# gets XDG_STATE_HOME under the work directory, so that the etcd store's
# crash journals never land in the user's home.
#
# Usage: scripts/mount-test.sh [dir|badger|etcd]...   (default: all three)
# MEMFS_TEST_KEEP=1 keeps the work directory (logs, trees, events).
# MEMFS_MT_ONLY=SECTION runs one section for each backend: tools (import,
# the editing tools, inotify, remount, export) or lossless (git, cp -a,
# rsync -aHAX, every node type, sticky and mode-0 checks as another user);
# or quickstart, once: the README's quick start run literally in a fresh
# HOME, then memfs ls, search and log without --mount while it is mounted;
# or rootdir (first hour: cp -a/rsync -a/tar -x into the root, .memfs out of
# tree walks, df); or firsthour: the README's five-minute tour run
# literally, git init and a commit in the mount with search and packs free
# of .git, a virtual file's error read by cat, flags after arguments, and
# the rootdir checks; or repo: memory per repository (issue 33) in a clone
# of this repository, records written with printf and cp, memfs repo check,
# the repository's pack, its map from the cache, a new branch's memory and a
# second repository's kept apart; or routes: one mount over three stores
# (--route skills/=dir:TEAM:ro --route scratch/=mem:), a read-only team
# directory, mv, ln, rmdir and rename across routes, working memory that
# is searched and never reaches a disk.

# shellcheck disable=SC2016 # the snippets run on both trees are single-quoted on purpose
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
sample=$repo/testdata/sample
backends=("$@")
[ ${#backends[@]} -gt 0 ] || backends=(dir badger etcd)
for kind in "${backends[@]}"; do
	case $kind in
	dir | badger | etcd) ;;
	*)
		echo "unknown backend $kind (want dir, badger or etcd)" >&2
		exit 2
		;;
	esac
done
only=${MEMFS_MT_ONLY:-}
case $only in
"" | tools | lossless | quickstart | rootdir | firsthour | mcp | repo | routes) ;;
*)
	echo "unknown MEMFS_MT_ONLY=$only (want tools, lossless, quickstart, rootdir, firsthour, mcp, repo or routes)" >&2
	exit 2
	;;
esac
want_section() { [ -z "$only" ] || [ "$only" = "$1" ]; }
umask 022
export LC_ALL=C
started=$(date +%s.%N)
t0=${started%%.*} # files with an older mtime were not written by this test

scripts/install-deps.sh

# The work directory must not be under /tmp (nor $TMPDIR): vim skips its
# backup for files matching 'backupskip' (/tmp/*, $TMPDIR/*) and then writes
# in place, so it would not exercise the rename-over path editors use.
# vim is also run with TMPDIR, TMP and TEMP unset, for the same reason.
tmp=$(mktemp -d /var/tmp/memfs-mount-test.XXXXXX)
# The etcd store keeps each process's crash journal under
# $XDG_STATE_HOME/memfs/etcd/: never in the user's home.
export XDG_STATE_HOME=$tmp/state
mkdir -p "$XDG_STATE_HOME"

mount_pids=() # memfs mount processes this script started and has not reaped
watch_pids=() # inotifywait processes this script started
mnts=()       # mountpoints this script used
etcd_pid=""   # the etcd server this script started

is_mounted() { # MOUNTPOINT: listed in /proc/self/mountinfo (also a dead FUSE mount)
	awk -v m="$1" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# stop_all stops the watchers and memfs processes this script started (by
# PID: SIGTERM, which flushes and unmounts, then SIGKILL after 5 s) and
# unmounts what is left of its mountpoints.
stop_all() {
	local pid m i
	for pid in "${watch_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	watch_pids=()
	for pid in "${mount_pids[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			for ((i = 0; i < 50; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			kill -KILL "$pid" 2>/dev/null || true
		fi
		wait "$pid" 2>/dev/null || true
	done
	mount_pids=()
	for m in "${mnts[@]}"; do
		if is_mounted "$m"; then
			fusermount3 -u "$m" 2>/dev/null || umount "$m" 2>/dev/null || umount -l "$m" || true
		fi
	done
}

# stop_etcd stops the etcd server this script started, by PID (after the
# mounts: they save to it when they unmount).
stop_etcd() {
	local i
	[ -n "$etcd_pid" ] || return 0
	if kill -0 "$etcd_pid" 2>/dev/null; then
		kill -TERM "$etcd_pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			kill -0 "$etcd_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$etcd_pid" 2>/dev/null || true
	fi
	wait "$etcd_pid" 2>/dev/null || true
	etcd_pid=""
}

cleanup() {
	local rc=$?
	set +e
	stop_all
	stop_etcd
	if awk -v t="$tmp/" 'index($5, t) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
		echo "WARNING: a mount is still active under $tmp; not removing it" >&2
	elif [ -n "${MEMFS_TEST_KEEP:-}" ]; then
		echo "kept $tmp (MEMFS_TEST_KEEP)" >&2
	else
		rm -rf --one-file-system "$tmp"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- reporting

checks=0
failures=0
failed=()
label=""

pass() {
	checks=$((checks + 1))
	printf 'PASS  %s%s\n' "$label" "$1"
}

# fail NAME [DETAIL...]: each DETAIL is printed indented (multi-line is fine).
fail() {
	checks=$((checks + 1))
	failures=$((failures + 1))
	failed+=("$label$1")
	printf 'FAIL  %s%s\n' "$label" "$1"
	shift
	local d
	for d in "$@"; do
		[ -n "$d" ] && printf '%s\n' "$d" | sed 's/^/        /'
	done
	return 0
}

# same NAME EXPECTED_FILE GOT_FILE [DETAIL...]
same() {
	local name=$1 want=$2 got=$3
	shift 3
	if diff -u --label expected --label got "$want" "$got" >"$tmp/diff"; then
		pass "$name"
	else
		fail "$name" "$(head -n 40 "$tmp/diff")" "$@"
	fi
}

# ------------------------------------------------------------- tree helpers

# tree_dump DIR DIRS OWNER MTIME prints one sorted line per entry of DIR,
# leaving out hidden names (they live only in the session by design; the
# mount also has .memfs/):
#   f PATH MODE [UID:GID] SHA256-OF-CAT [MTIME]
#   d PATH/ MODE UID:GID   (DIRS=all: every directory, as in the session)
#   d PATH/                (DIRS=implied: only directories holding a file)
# MTIME=yes: the exact mtime for files older than this test (never written
# by it, or set by touch -d) and "new" for the others; MTIME=exact: the exact
# mtime of every file; MTIME=no: none.
tree_dump() {
	local dir=$1 dirs=$2 owner=$3 mtime=$4
	(
		cd "$dir"
		find . -mindepth 1 -name '.*' -prune -o -printf '%y\t%m\t%U:%G\t%T@\t%P\n' |
			while IFS=$'\t' read -r type perm own mt path; do
				case $type in
				f)
					sum=$(cat -- "$path" | sha256sum) || sum="CAT-FAILED"
					line="f $path $perm"
					if [ "$owner" = yes ]; then line+=" $own"; fi
					line+=" ${sum%% *}"
					if [ "$mtime" = exact ] || { [ "$mtime" = yes ] && [ "${mt%%.*}" -lt "$t0" ]; }; then
						line+=" $mt"
					elif [ "$mtime" = yes ]; then
						line+=" new"
					fi
					echo "$line"
					if [ "$dirs" = implied ]; then
						d=$path
						while [[ $d == */* ]]; do
							d=${d%/*}
							echo "d $d/"
						done
					fi
					;;
				d)
					if [ "$dirs" = all ]; then echo "d $path/ $perm $own"; fi
					;;
				*) echo "$type $path UNEXPECTED-FILE-TYPE" ;;
				esac
			done
	) | sort -u
}

# compare_trees NAME DIRS OWNER MTIME WANT GOT_DIR [DETAIL...]: WANT is a
# directory, or a file holding a tree_dump made earlier.
compare_trees() {
	local name=$1 dirs=$2 owner=$3 mtime=$4 want=$5 got=$6
	shift 6
	if [ -f "$want" ]; then
		cp "$want" "$tmp/want.tree" && : >"$tmp/want.err"
	else
		tree_dump "$want" "$dirs" "$owner" "$mtime" >"$tmp/want.tree" 2>"$tmp/want.err" || true
	fi
	tree_dump "$got" "$dirs" "$owner" "$mtime" >"$tmp/got.tree" 2>"$tmp/got.err" || true
	if [ -s "$tmp/want.err" ]; then
		fail "$name: reading the expected tree failed (test bug)" "$(cat "$tmp/want.err")"
	elif [ -s "$tmp/got.err" ]; then
		fail "$name: errors reading the tree" "$(head -n 20 "$tmp/got.err")" \
			"$(diff -u --label expected --label got "$tmp/want.tree" "$tmp/got.tree" | head -n 40)" "$@"
	else
		same "$name" "$tmp/want.tree" "$tmp/got.tree" "$@"
	fi
}

# lslr DIR: "PATH PERMS [SIZE]" for every entry `ls -lR` lists (ls hides
# dot names), then ls's errors and "ls-exit N".
lslr() {
	local rc=0
	(cd "$1" && ls -lR .) >"$tmp/lslr.out" 2>"$tmp/lslr.err" || rc=$?
	awk '
		/^\.(\/.*)?:$/ { d = substr($0, 1, length($0) - 1); sub(/^\.\/?/, "", d); if (d != "") d = d "/"; next }
		NF >= 9 && /^[-d]/ {
			name = $9; for (i = 10; i <= NF; i++) name = name " " $i
			perms = substr($1, 1, 10)
			if (perms ~ /^d/) print d name "/", perms; else print d name, perms, $5
		}
		NF >= 9 && /^[^-dt]/ { print "unexpected entry: " $0 }
	' "$tmp/lslr.out" | sort
	sed 's/^/ls-error: /' "$tmp/lslr.err"
	echo "ls-exit $rc"
}

# grep_r DIR ARGS...: `grep -r ARGS .` in DIR, sorted (grep follows readdir
# order), hidden names left out, then grep's errors and exit status.
grep_r() {
	local dir=$1 rc=0
	shift
	(cd "$dir" && grep -r "$@" .) >"$tmp/grep.out" 2>"$tmp/grep.err" || rc=$?
	grep -Ev '^\./(.*/)?\.' "$tmp/grep.out" | sort || true
	sed 's/^/grep-error: /' "$tmp/grep.err"
	echo "grep-exit $rc"
}

# ------------------------------------------------------ mount and unmount

# start_mount LOG [FLAG...]: mounts $spec on $mnt in the background, with
# the extra mount FLAGs, waits (10 s at most) until .memfs/status names the
# process. Sets mount_pid.
start_mount() {
	local log=$1 i status
	"$memfs" mount --store "$spec" --flush-interval 0 "${@:2}" "$mnt" >"$log" 2>&1 &
	mount_pid=$!
	mount_pids+=("$mount_pid")
	for ((i = 0; i < 100; i++)); do
		kill -0 "$mount_pid" 2>/dev/null || return 1
		if status=$(timeout 2 cat "$mnt/.memfs/status" 2>/dev/null) && [[ $status == *"pid: $mount_pid"* ]]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

forget_mount_pid() {
	local p keep=()
	for p in "${mount_pids[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	mount_pids=("${keep[@]}")
}

# stop_mount WHAT LOG: memfs unmount must exit 0, the mount process must exit
# 0 and the mountpoint must be gone.
stop_mount() {
	local what=$1 log=$2 rc=0 prc=0 out i
	out=$(timeout 60 "$memfs" unmount --timeout 30s "$mnt" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$what: memfs unmount exits 0"
	else
		fail "$what: memfs unmount exits $rc" "$out"
	fi
	for ((i = 0; i < 100; i++)); do
		kill -0 "$mount_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$mount_pid" 2>/dev/null; then
		fail "$what: the mount process still runs 10 s after memfs unmount; sending SIGTERM" "$(tail -n 20 "$log")"
		kill -TERM "$mount_pid" 2>/dev/null || true
		sleep 3
		kill -KILL "$mount_pid" 2>/dev/null || true
	fi
	wait "$mount_pid" || prc=$?
	forget_mount_pid "$mount_pid"
	if [ "$prc" -eq 0 ]; then
		pass "$what: the mount process exits 0"
	else
		fail "$what: the mount process exits $prc" "$(tail -n 20 "$log")"
	fi
	if is_mounted "$mnt"; then
		fail "$what: $mnt is still mounted"
		fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null || umount -l "$mnt" || true
	fi
}

# ---------------------------------------------------------------- inotify

# start_watch DIR OUT: inotifywait -m -r on DIR, events to OUT; waits (10 s
# at most) for "Watches established". Sets watch_pid.
start_watch() {
	local dir=$1 out=$2 i
	: >"$out.err" # before the background job opens it, so that grep finds it
	inotifywait -m -r -e create,modify,moved_from,moved_to,delete --format '%e %w%f' "$dir" >"$out" 2>"$out.err" &
	watch_pid=$!
	watch_pids+=("$watch_pid")
	for ((i = 0; i < 100; i++)); do
		grep -q 'Watches established' "$out.err" && return 0
		kill -0 "$watch_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stop_watch DIR OUT PID: creates a hidden marker in DIR, waits until the
# watcher reports it (so that every earlier event is in OUT), stops the
# watcher, and rewrites OUT with paths relative to DIR.
stop_watch() {
	local dir=$1 out=$2 pid=$3 i
	: 2>/dev/null >"$dir/.watch-marker" || true
	for ((i = 0; i < 50; i++)); do
		grep -qxF "CREATE $dir/.watch-marker" "$out" && break
		sleep 0.1
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	local p keep=()
	for p in "${watch_pids[@]}"; do
		[ "$p" = "$pid" ] || keep+=("$p")
	done
	watch_pids=("${keep[@]}")
	awk -v p="$dir/" '{ i = index($0, p); if (i) $0 = substr($0, 1, i - 1) substr($0, i + length(p)); print }' "$out" >"$out.rel"
}

# ------------------------------------------------------------------ steps

# both DESC SNIPPET: runs SNIPPET (bash, errexit) with the expected tree and
# then with the mount as working directory. The mount must succeed where the
# native filesystem does. Returns 1 when it did not.
both() {
	local desc=$1 snippet=$2 rc_e=0 rc_m=0 out_e out_m
	out_e=$(cd "$exp" && timeout 30 bash -euo pipefail -c "$snippet" 2>&1) || rc_e=$?
	out_m=$(cd "$mnt" && timeout 30 bash -euo pipefail -c "$snippet" 2>&1) || rc_m=$?
	if [ "$rc_e" -ne 0 ]; then
		fail "$desc: fails on the native tree (test bug), exit $rc_e" "$out_e"
		return 1
	fi
	if [ "$rc_m" -ne 0 ]; then
		fail "$desc: exit $rc_m on the mount (native: 0)" "\$ $snippet" "$out_m" "$(tail -n 5 "$log1")"
		return 1
	fi
	return 0
}

# step DESC SNIPPET: both, then the whole tree of the mount (names, cat of
# every file, modes, owners, directories) must equal the native one.
step() {
	local desc=$1
	both "$@" || return 0
	compare_trees "$desc" all yes yes "$exp" "$mnt" "\$ $2"
}

# -------------------------------------------------------- the test proper

# Material copied in from outside the mount (cp -r in).
incoming=$tmp/incoming/research
mkdir -p "$incoming/deep/nested"
printf '# Research notes\n\n- FUSE request flow: lookup, getattr, open, read.\n' >"$incoming/notes.md"
printf '#!/bin/sh\necho "review the research"\n' >"$incoming/run.sh"
chmod 755 "$incoming/run.sh"
printf 'fact: the kernel caches attributes for attr_timeout\n' >"$incoming/deep/nested/fact.md"
head -c 3145728 /dev/urandom >"$incoming/blob.bin" # several pages and FUSE writes

# Keys put with `memfs put` (outside memory/, so not loaded at mount), which
# the test removes with rm -r before anything reads them.
archive=$tmp/archive
mkdir -p "$archive"
printf '# 2023 notes\n\n- old\n' >"$archive/notes.md"
printf '# ideas\n' >"$archive/ideas.md"

# os.replace over a key, after writing a hidden temp file in the same
# directory (mkstemp: mode 0600, which the replaced key then has).
cat >"$tmp/replace.py" <<'EOF'
import os, sys, tempfile
target = sys.argv[1]
fd, tmpname = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".replace-", suffix=".tmp")
with os.fdopen(fd, "w") as f:
    f.write('{\n  "name": "scout",\n  "description": "Maps a repository quickly; reviews nothing.",\n  "tools": ["ls", "grep"],\n  "model": "small"\n}\n')
    f.flush()
    os.fsync(f.fileno())
os.replace(tmpname, target)
EOF

echo "== building memfs"
memfs=$tmp/memfs
if ! go build -o "$memfs" ./cmd/memfs; then
	echo "FAIL  go build ./cmd/memfs"
	exit 1
fi

# One etcd server for the whole run, when a backend is etcd: loopback
# ports that are free now, data under the work directory. Each section
# stores under a namespace of its own (store_spec).
etcd_endpoint=""
start_etcd() {
	local ports client peer out
	ports=$(python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])
for s in ss: s.close()') || return 1
	read -r client peer <<<"$ports"
	etcd_endpoint=127.0.0.1:$client
	etcd --name memfs-mt --data-dir "$tmp/etcd-data" --log-level error \
		--listen-client-urls "http://$etcd_endpoint" --advertise-client-urls "http://$etcd_endpoint" \
		--listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
		--initial-cluster "memfs-mt=http://127.0.0.1:$peer" >"$tmp/etcd.log" 2>&1 &
	etcd_pid=$!
	local deadline=$((SECONDS + 20))
	while [ "$SECONDS" -lt "$deadline" ]; do
		kill -0 "$etcd_pid" 2>/dev/null || return 1
		if out=$(ETCDCTL_API=3 timeout 2 etcdctl --endpoints "$etcd_endpoint" --dial-timeout 1s \
			--command-timeout 1s endpoint health 2>&1) && [[ $out == *"is healthy"* ]]; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}
# store_spec KIND SECTION: the store of SECTION (tools, lossless) for
# backend KIND: a directory under the work directory, or a fresh etcd
# namespace, so that sections never see each other's keys.
store_spec() {
	case $1:$2 in
	etcd:*) echo "etcd://$etcd_endpoint/mt-$2-$$" ;;
	*:tools) echo "$1:$tmp/$1-store" ;;
	*) echo "$1:$tmp/$1-$2-store" ;;
	esac
}
# etcdctl_ns ARGS...: etcdctl against the run's server.
etcdctl_ns() { ETCDCTL_API=3 timeout 30 etcdctl --endpoints "$etcd_endpoint" "$@"; }
if [[ " ${backends[*]} " == *" etcd "* ]] && { want_section tools || want_section lossless || want_section rootdir || want_section firsthour || want_section repo || want_section routes; }; then
	echo "== starting etcd ($(etcd --version | head -n 1))"
	if ! start_etcd; then
		if kill -0 "$etcd_pid" 2>/dev/null; then
			echo "FAIL  etcd (pid $etcd_pid) did not become healthy within 20 s"
		else
			echo "FAIL  etcd exited before it became healthy"
		fi
		tail -n 20 "$tmp/etcd.log"
		exit 1
	fi
	echo "== etcd pid $etcd_pid at http://$etcd_endpoint, data $tmp/etcd-data"
fi

# copy_out DIR: cp -r DIR out of the mount; the copy must equal the native
# tree (diff -r, then names, contents and modes; cp -r does not keep owners
# or mtimes).
copy_out() {
	local d=$1 rc=0 out
	rm -rf "$tmp/$kind-out"
	mkdir -p "$tmp/$kind-out"
	out=$(timeout 30 cp -r "$mnt/$d" "$tmp/$kind-out/" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "cp -r $d out of the mount exits $rc" "$out"
	elif out=$(diff -r "$exp/$d" "$tmp/$kind-out/$d" 2>&1); then
		compare_trees "cp -r $d out of the mount: diff -r, names, contents, modes" all no no "$exp/$d" "$tmp/$kind-out/$d"
	else
		fail "cp -r $d out of the mount: diff -r differs" "$out"
	fi
}

# external_changes: another program changes the store while it is
# mounted; cat, ls and a watcher on the mount must see each change. The
# directory store's files are written directly; the etcd store has none, so
# there the other program is a second memfs mount of the same namespace (a
# peer, as in the README's shared memory), which saves each change: an fsync
# after each write, its flush interval after the removal. The same changes
# go to the expected tree, so the final comparisons hold.
external_changes() {
	local store=$tmp/$kind-store i peer="" peer_log=$tmp/$kind-peer.log
	if [ "$kind" = etcd ]; then
		local own_mnt=$mnt own_pid=$mount_pid
		mnt=$tmp/$kind-peer-mnt
		mkdir -p "$mnt"
		mnts+=("$mnt")
		if start_mount "$peer_log" --agent peer --flush-interval 100ms; then
			peer=$mount_pid
			pass "external: a second mount of the namespace (the peer, pid $peer)"
		else
			fail "external: a second mount of the namespace: .memfs/status not readable within 10 s" "$(tail -n 20 "$peer_log")"
		fi
		store=$mnt
		mnt=$own_mnt
		mount_pid=$own_pid
		[ -n "$peer" ] || return 0
	fi
	ext_write() { # FILE TEXT: written (and for the peer, saved) by the other program
		printf '%s\n' "$2" >"$store/$1"
		if [ -n "$peer" ]; then sync "$store/$1"; fi
	}
	if ! start_watch "$mnt/memory" "$tmp/ext.events"; then
		fail "external: inotifywait on the mount" "$(cat "$tmp/ext.events.err")"
		return
	fi
	local w=$watch_pid
	wait_until() { # DESC CMD: CMD succeeds within 3 s
		for ((i = 0; i < 300; i++)); do
			if bash -c "$2" 2>/dev/null; then
				pass "external: $1"
				return 0
			fi
			sleep 0.01
		done
		fail "external: $1 (not within 3 s)"
	}
	ext_write memory/external.md 'written by another program'
	wait_until "a file created in the store shows on the mount" \
		"[ \"\$(cat '$mnt/memory/external.md')\" = 'written by another program' ]"
	ext_write memory/external.md 'changed by another program, and longer'
	wait_until "a file modified in the store shows on the mount (cat and stat)" \
		"[ \"\$(cat '$mnt/memory/external.md')\" = 'changed by another program, and longer' ] && [ \$(stat -c %s '$mnt/memory/external.md') = 39 ]"
	ext_write memory/external-gone.md 'short-lived'
	wait_until "a second created file shows on the mount" "[ -e '$mnt/memory/external-gone.md' ]"
	rm "$store/memory/external-gone.md"
	wait_until "a file removed from the store leaves the mount (ls)" \
		"! ls '$mnt/memory' | grep -qx external-gone.md"
	stop_watch "$mnt/memory" "$tmp/ext.events" "$w"
	# grep stops at the first match and tail dies of SIGPIPE: judge by grep.
	if (set +o pipefail; timeout 5 tail -n +1 -f "$mnt/.memfs/changes" |
		grep -m1 -q '"op":"remove","key":"memory/external-gone.md","origin":"external"'); then
		pass "external: tail -f .memfs/changes shows the removal, origin external"
	else
		fail "external: .memfs/changes lacks the external removal" "$(grep external "$mnt/.memfs/changes")"
	fi
	for ev in "CREATE external.md" "MODIFY external.md" "CREATE external-gone.md" "DELETE external-gone.md"; do
		if grep -qxF "$ev" "$tmp/ext.events.rel"; then
			pass "external: the watcher on the mount got $ev"
		else
			fail "external: the watcher on the mount got no '$ev'" "$(cat "$tmp/ext.events.rel")"
		fi
	done
	cp "$store/memory/external.md" "$exp/memory/external.md"
	touch -r "$store/memory/external.md" "$exp/memory/external.md"
	chmod --reference="$store/memory/external.md" "$exp/memory/external.md"
	if [ -n "$peer" ]; then
		own_mnt=$mnt own_pid=$mount_pid
		mnt=$store mount_pid=$peer
		stop_mount "external: unmount the peer" "$peer_log"
		mnt=$own_mnt mount_pid=$own_pid
		out=$(grep -hE 'level=(WARN|ERROR)' "$peer_log" || true)
		if [ -z "$out" ]; then
			pass "external: the peer's log: no WARN or ERROR"
		else
			fail "external: the peer's log: WARN or ERROR lines" "$(head -n 20 <<<"$out")"
		fi
	fi
}

# xattr_steps: setfattr and getfattr on the mount give what they give on
# the native tree for user attributes; memfs's own attributes are checked
# (an invalid value refused, the writer recorded).
xattr_pat='^user\.(memfs\.tags|memfs\.importance|note|gone)$'
xattr_steps() {
	both "setfattr: set, replace and remove user attributes" \
		'setfattr -n user.memfs.tags -v "go,fuse" memory/global.md
		 setfattr -n user.memfs.importance -v 0.8 memory/global.md
		 setfattr -n user.note -v first agents/scout.json
		 setfattr -n user.note -v second agents/scout.json
		 setfattr -n user.gone -v x agents/scout.json
		 setfattr -x user.gone agents/scout.json' || return 0
	(cd "$exp" && getfattr -d -m "$xattr_pat" memory/global.md agents/scout.json) >"$tmp/xattr.want" 2>&1 || true
	(cd "$mnt" && getfattr -d -m "$xattr_pat" memory/global.md agents/scout.json) >"$tmp/xattr.got" 2>&1 || true
	same "getfattr -d after setfattr (as native)" "$tmp/xattr.want" "$tmp/xattr.got"
	local rc_e=0 rc_m=0
	(cd "$exp" && getfattr -n user.gone agents/scout.json) >/dev/null 2>&1 || rc_e=$?
	(cd "$mnt" && getfattr -n user.gone agents/scout.json) >/dev/null 2>&1 || rc_m=$?
	if [ "$rc_e" -ne 0 ] && [ "$rc_e" = "$rc_m" ]; then
		pass "getfattr of a removed attribute fails as on native (exit $rc_m)"
	else
		fail "getfattr of a removed attribute: exit $rc_m on the mount, $rc_e native"
	fi
	if (cd "$mnt" && setfattr -n user.memfs.importance -v 2 memory/global.md) 2>/dev/null; then
		fail "setfattr user.memfs.importance=2 (out of range) succeeded"
	else
		pass "setfattr user.memfs.importance=2 (out of range) is refused"
	fi
	# python3 wrote agents/scout.json (a temp file, then os.replace); setfattr
	# changed attributes only, which does not make it the value's writer.
	if (cd "$mnt" && getfattr --only-values -n user.memfs.writer agents/scout.json) 2>/dev/null | grep -q '"comm":"python3"'; then
		pass "user.memfs.writer names python3, the last writer of agents/scout.json's value"
	else
		fail "user.memfs.writer of agents/scout.json" "$(cd "$mnt" && getfattr -d -m - agents/scout.json 2>&1)"
	fi
}

# events_step: tail -f .memfs/events.jsonl shows the events of a flush as
# it happens.
events_step() {
	local out=$tmp/$kind-events.tail tp i
	timeout 20 tail -n 0 -f "$mnt/.memfs/events.jsonl" >"$out" 2>&1 &
	tp=$!
	sleep 0.3
	both "a new note for the event log" 'printf "logged\n" > memory/logged.md' || true
	sync "$mnt/memory/logged.md" # fsync: memfs flushes, the log grows
	for ((i = 0; i < 100; i++)); do
		grep -q '"op":"write","key":"memory/logged.md"' "$out" && break
		sleep 0.1
	done
	kill "$tp" 2>/dev/null || true
	wait "$tp" 2>/dev/null || true
	if grep -q '"op":"write","key":"memory/logged.md"' "$out"; then
		pass "tail -f .memfs/events.jsonl shows the write of memory/logged.md after fsync"
	else
		fail "tail -f .memfs/events.jsonl: no event for memory/logged.md within 10 s" "$(cat "$out")"
	fi
	local rc=0 v
	v=$(timeout 30 "$memfs" log --mount "$mnt" --verify 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "memfs log --mount --verify: $v"
	else
		fail "memfs log --mount --verify exits $rc" "$v"
	fi
}

run_backend() {
	local kind=$1
	label="[$kind] "
	spec=$(store_spec "$kind" tools)
	mnt=$tmp/$kind-mnt
	exp=$tmp/$kind-expected
	log1=$tmp/$kind-mount1.log
	log2=$tmp/$kind-mount2.log
	local rc out ev
	echo "== backend $kind (store $spec, mountpoint $mnt)"
	mkdir -p "$mnt"
	mnts+=("$mnt")
	cp -a "$sample" "$exp"

	rc=0
	out=$("$memfs" import --store "$spec" "$sample" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "memfs import testdata/sample exits $rc" "$out"
		return
	fi
	pass "memfs import testdata/sample"
	for f in notes.md ideas.md; do
		rc=0
		out=$("$memfs" put --store "$spec" "archive/2023/$f" "$archive/$f" 2>&1) || rc=$?
		if [ "$rc" -ne 0 ]; then
			fail "memfs put archive/2023/$f exits $rc" "$out"
		else
			pass "memfs put archive/2023/$f"
		fi
	done
	mkdir -p "$exp/archive/2023"
	cp "$archive/notes.md" "$archive/ideas.md" "$exp/archive/2023/"

	if ! start_mount "$log1"; then
		fail "mount: .memfs/status not readable within 10 s" "$(tail -n 20 "$log1")"
		return
	fi
	pass "mount: .memfs/status names pid $mount_pid"

	if ! start_watch "$mnt" "$tmp/$kind-mnt.events"; then
		fail "inotifywait on the mount: no 'Watches established'" "$(cat "$tmp/$kind-mnt.events.err")"
		return
	fi
	local mnt_watch=$watch_pid
	if ! start_watch "$exp" "$tmp/$kind-exp.events"; then
		fail "inotifywait on the native tree (test bug)" "$(cat "$tmp/$kind-exp.events.err")"
		return
	fi
	local exp_watch=$watch_pid

	# ls -lR must list every file, with the same modes and sizes.
	lslr "$exp" >"$tmp/lslr.want"
	lslr "$mnt" >"$tmp/lslr.got"
	same "ls -lR lists every file and directory (names, modes, sizes)" "$tmp/lslr.want" "$tmp/lslr.got"

	# Renames of keys not loaded yet (only memory/ is loaded at mount).
	both "mv a file (not loaded yet): agents/explorer.json -> agents/scout.json" \
		'mv agents/explorer.json agents/scout.json' &&
		pass "mv a file (not loaded yet): agents/explorer.json -> agents/scout.json"
	both "mv a directory (not loaded yet): skills/go-patterns -> skills/golang" \
		'mv skills/go-patterns skills/golang' &&
		pass "mv a directory (not loaded yet): skills/go-patterns -> skills/golang"
	both "rm -r a directory (not loaded yet): archive" 'rm -r archive' &&
		pass "rm -r a directory (not loaded yet): archive"

	grep_r "$exp" -n -i -e review -e errors >"$tmp/grep.want"
	grep_r "$mnt" -n -i -e review -e errors >"$tmp/grep.got"
	same "grep -rni 'review|errors' (paths relative, sorted)" "$tmp/grep.want" "$tmp/grep.got"

	compare_trees "cat every file: names, contents, modes, owners, mtimes, directories" all yes yes "$exp" "$mnt"

	copy_out skills

	step "cp -r a directory in: $incoming -> memory/research" "cp -r '$incoming' memory/"
	step "create files and a new nested directory (mkdir -p, >, chown)" \
		'printf "# TODO\n\n- sort the notes\n" > memory/todo.md
		 mkdir -p memory/2024/06
		 printf "# 2024-06-01\n\nmounted the store\n" > memory/2024/06/day.md
		 echo "log line" > memory/2024/06/log.txt
		 if [ "$(id -u)" = 0 ]; then chown 1234:5678 memory/2024/06/log.txt; fi'
	step "mv a file across directories: memory/project/kernel.md -> memory/kernel.md" \
		'mv memory/project/kernel.md memory/kernel.md'
	step "rm -r a non-empty nested directory and an empty one" \
		'rm -r memory/research/deep memory/project'
	step "sed -i on skills/golang/SKILL.md" \
		'sed -i "s/Idiomatic/Proven/; s/review checklist/final checklist/" skills/golang/SKILL.md'
	step "chmod +x memory/research/notes.md, chmod 640 agents/reviewer.json" \
		'chmod +x memory/research/notes.md
		 chmod 640 agents/reviewer.json'
	step "vim -Es edits a line of agents/reviewer.json (mode 640 kept)" \
		'env -u TMPDIR -u TMP -u TEMP vim -N -Es -u NONE -i NONE -c "%s/\"reviewer\"/\"critic\"/" -c wq agents/reviewer.json'
	if grep -qF '"name": "critic"' "$mnt/agents/reviewer.json" 2>/dev/null; then
		pass "vim saved: agents/reviewer.json has the edited line"
	else
		fail "vim did not save: agents/reviewer.json lacks the edited line" "$(cat "$mnt/agents/reviewer.json" 2>&1)"
	fi
	step "python3 writes a temp file then os.replace over agents/scout.json" \
		"python3 '$tmp/replace.py' agents/scout.json"
	step "echo >> memory/global.md, three times" \
		'for i in 1 2 3; do echo "- appended line $i" >> memory/global.md; done'
	step "truncate -s 40 memory/kernel.md (shrink), -s 300 memory/research/notes.md (grow)" \
		'truncate -s 40 memory/kernel.md
		 truncate -s 300 memory/research/notes.md'
	step "touch -m -d 2021-03-04T05:06:07 memory/global.md" \
		'touch -m -d "2021-03-04 05:06:07.123456789" memory/global.md'
	step "read an open file after rm (unlinked but open)" \
		'printf "open data\n" > memory/unlinked.md
		 exec 3< memory/unlinked.md
		 rm memory/unlinked.md
		 [ ! -e memory/unlinked.md ]
		 [ "$(cat <&3)" = "open data" ]'
	step "a transient editor file (works in the mount, never persisted)" \
		'echo "scratch" > memory/.scratch.md.swp && cat memory/.scratch.md.swp >/dev/null'
	xattr_steps
	events_step

	lslr "$exp" >"$tmp/lslr.want"
	lslr "$mnt" >"$tmp/lslr.got"
	same "ls -lR after the edits" "$tmp/lslr.want" "$tmp/lslr.got"
	grep_r "$exp" -n -i -e review -e errors -e appended -e proven >"$tmp/grep.want"
	grep_r "$mnt" -n -i -e review -e errors -e appended -e proven >"$tmp/grep.got"
	same "grep -rni after the edits" "$tmp/grep.want" "$tmp/grep.got"

	copy_out memory

	# inotify: the watcher on the mount must see what the one on the native
	# tree sees, for these paths (all in directories watched from the start:
	# a watch on a new directory is added after its creation is reported, so
	# events inside it right after are racy on any filesystem).
	stop_watch "$mnt" "$tmp/$kind-mnt.events" "$mnt_watch"
	stop_watch "$exp" "$tmp/$kind-exp.events" "$exp_watch"
	for ev in \
		"CREATE memory/todo.md" \
		"CREATE,ISDIR memory/2024" \
		"CREATE,ISDIR memory/research" \
		"MODIFY memory/global.md" \
		"MODIFY memory/kernel.md" \
		"MOVED_FROM agents/explorer.json" \
		"MOVED_TO agents/scout.json" \
		"MOVED_FROM,ISDIR skills/go-patterns" \
		"MOVED_TO,ISDIR skills/golang" \
		"MOVED_FROM memory/project/kernel.md" \
		"MOVED_TO memory/kernel.md" \
		"MOVED_FROM agents/reviewer.json" \
		"DELETE agents/reviewer.json~" \
		"DELETE,ISDIR memory/project"; do
		if ! grep -qxF "$ev" "$tmp/$kind-exp.events.rel"; then
			fail "inotify: native tree gives no '$ev' (test bug)"
		elif grep -qxF "$ev" "$tmp/$kind-mnt.events.rel"; then
			pass "inotify on the mount: $ev"
		else
			fail "inotify on the mount: no '$ev'" "events seen:" "$(cat "$tmp/$kind-mnt.events.rel")"
		fi
	done
	# And the same set of distinct events overall, random temp names (sed,
	# mkstemp) made equal, events inside the directories created by the test
	# left out (racy, see above), repeats left out (inotify merges a repeated
	# event while the previous one is unread, which depends on timing).
	for ev in mnt exp; do
		sed -E -e 's#/sed[A-Za-z0-9]{6}$#/sedXXXXXX#' -e 's#/\.replace-[A-Za-z0-9_]+\.tmp$#/.replace-XXXX.tmp#' \
			"$tmp/$kind-$ev.events.rel" | grep -Ev ' memory/(research|2024)/' | sort -u >"$tmp/$kind-$ev.events.set"
	done
	same "inotify on the mount: the same distinct events as native (create, modify, move, delete)" \
		"$tmp/$kind-exp.events.set" "$tmp/$kind-mnt.events.set"

	if [ "$kind" = dir ] || [ "$kind" = etcd ]; then
		external_changes
	fi

	# What the session shows just before unmount, exact mtimes included (the
	# native tree cannot give those of files written by the test): the
	# remounted tree and the store must hold exactly this.
	tree_dump "$mnt" implied yes exact >"$tmp/$kind-session.tree" 2>&1 || true
	tree_dump "$mnt" implied no exact >"$tmp/$kind-session-noowner.tree" 2>&1 || true

	stop_mount "unmount" "$log1"

	if ! start_mount "$log2"; then
		fail "remount: .memfs/status not readable within 10 s" "$(tail -n 20 "$log2")"
		return
	fi
	pass "remount: .memfs/status names pid $mount_pid"

	# The persisted tree: file names, contents, modes, owners, and the exact
	# mtime of files this test did not write (or set with touch -d). Empty
	# directories and directory modes are left out: directories are implied
	# by keys (as in git), so they do not outlive the session. Hidden names
	# are left out: they are never persisted (checked just below).
	compare_trees "after remount: the whole tree (names, contents, modes, owners, mtimes)" \
		implied yes yes "$exp" "$mnt" "memfs log: $(tail -n 5 "$log2")"
	compare_trees "after remount: every file as before the unmount, exact mtimes included" \
		implied yes exact "$tmp/$kind-session.tree" "$mnt"
	{ lslr "$exp" | grep -v '/ d'; } >"$tmp/lslr.want" || true
	{ lslr "$mnt" | grep -v '/ d'; } >"$tmp/lslr.got" || true
	same "after remount: ls -lR lists the same files (modes, sizes)" "$tmp/lslr.want" "$tmp/lslr.got"
	out=$(cd "$mnt" && find . -mindepth 1 \( -name '.*.sw?' -o -name 4913 -o -name '.#*' \) -print 2>&1) || true
	if [ -z "$out" ]; then
		pass "after remount: no transient editor file was persisted"
	else
		fail "after remount: transient editor files came back" "$out"
	fi

	(cd "$mnt" && getfattr -d -m "$xattr_pat" memory/global.md agents/scout.json) >"$tmp/xattr.got" 2>&1 || true
	same "after remount: getfattr -d gives the attributes set before" "$tmp/xattr.want" "$tmp/xattr.got"

	stop_mount "unmount after remount" "$log2"

	# What the store itself holds.
	if [ "$kind" = dir ]; then
		# A 1:1 tree; hidden names are memfs's own (.memfs-sys with the lock
		# and the journal, the .memfs-store marker) and nothing else; emptied
		# directories may be pruned or not.
		compare_trees "dir store on disk: names, contents, modes, owners, mtimes" \
			implied yes yes "$exp" "$tmp/$kind-store"
		compare_trees "dir store on disk: every file as in the session, exact mtimes included" \
			implied yes exact "$tmp/$kind-session.tree" "$tmp/$kind-store"
		out=$(cd "$tmp/$kind-store" && find . -mindepth 1 \( -name '.*.sw?' -o -name 4913 -o -name '.#*' -o -name '.memfs-tmp-*' \) -print 2>&1) || true
		if [ -z "$out" ]; then
			pass "dir store on disk: no transient editor file and no temp file"
		else
			fail "dir store on disk: transient or temp files" "$out"
		fi
		(cd "$tmp/$kind-store" && getfattr -d -m "$xattr_pat" memory/global.md agents/scout.json) >"$tmp/xattr.got" 2>&1 || true
		same "dir store on disk: the files carry the attributes as their own (getfattr)" "$tmp/xattr.want" "$tmp/xattr.got"
	elif [ "$kind" = etcd ]; then
		# No files to read: the keys etcd holds for the namespace, one per
		# file and one per directory (memfs keeps directories as nodes of
		# their own); contents, modes, owners and mtimes: memfs ls -l and
		# export below.
		local ns=${spec##*/}
		rc=0
		out=$(etcdctl_ns get --prefix --keys-only "/memfs/$ns/m/" 2>&1) || rc=$?
		if [ "$rc" -ne 0 ]; then
			fail "etcdctl get --prefix --keys-only /memfs/$ns/m/ exits $rc" "$out"
		else
			printf '%s\n' "$out" | sed -n "s#^/memfs/$ns/m/##p" | grep -Ev '(^|/)\.' | sort >"$tmp/keys.got" || true
			(cd "$exp" && find . -mindepth 1 -name '.*' -prune -o \( -type f -o -type d \) -printf '%P\n') | sort >"$tmp/keys.want"
			same "etcd store (etcdctl get --prefix --keys-only /memfs/$ns/m/): one key per file and directory" "$tmp/keys.want" "$tmp/keys.got"
			out=$(printf '%s\n' "$out" | sed -n "s#^/memfs/$ns/m/##p" | grep -E '(^|/)(\.[^/]*\.sw.|4913|\.#[^/]*|\.memfs-tmp-[^/]*)$' || true)
			if [ -z "$out" ]; then
				pass "etcd store: no key for a transient editor file or a temp file"
			else
				fail "etcd store: keys for transient or temp files" "$out"
			fi
		fi
		echo "note: [etcd] 'store on disk: getfattr' skipped: an etcd store has no files to read attributes from (the attributes are checked through the remount above)"
	fi
	rc=0
	out=$("$memfs" ls -l --store "$spec" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "memfs ls -l exits $rc" "$out"
	else
		# Regular files that are not dotfiles (tree_dump leaves those out).
		printf '%s\n' "$out" | awk '$1 ~ /^-/ && $7 !~ /(^|\/)\./ { print $7, $1, $2 ":" $3, $4 }' | sort >"$tmp/ls.got"
		(cd "$exp" && find . -name '.*' ! -name . -prune -o -type f -printf '%P %M %U:%G %s\n') | sort >"$tmp/ls.want"
		same "memfs ls -l --store: keys, modes, owners, sizes" "$tmp/ls.want" "$tmp/ls.got"
	fi
	rc=0
	out=$("$memfs" export --store "$spec" "$tmp/$kind-export" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "memfs export exits $rc" "$out"
	else
		compare_trees "memfs export --store: names, contents, modes, mtimes" \
			implied no yes "$exp" "$tmp/$kind-export"
		compare_trees "memfs export --store: every file as in the session, exact mtimes included" \
			implied no exact "$tmp/$kind-session-noowner.tree" "$tmp/$kind-export"
	fi

	out=$(grep -hE 'level=(WARN|ERROR)' "$log1" "$log2" || true)
	if [ -z "$out" ]; then
		pass "memfs logs: no WARN or ERROR"
	else
		fail "memfs logs: WARN or ERROR lines" "$out"
	fi
}

# ------------------------------------------------------------- lossless

# The lossless section: every name, node type and attribute survives a
# remount. Each backend gets a fresh store of its own, mounted with
# --allow-other (the unprivileged checks need it; root is let in either
# way), so that the section can run alone (MEMFS_MT_ONLY=lossless).

# memfs shows read-only attributes of its own (user.memfs.created,
# user.memfs.writer) on every file. They are not part of any copied tree, so
# every rsync here leaves them alone: not sent, not compared, and not
# removed on the receiver (rsync -X removes the attributes a destination
# has and its source lacks, and memfs refuses to remove these).
rsync_x=('--filter=-x user.memfs.*')

# Every directory time is compared (no --no-times): memfs promises to keep
# them. Atimes are not compared by rsync -a; lossless_atimes does that.
lossless_same_tree() { # NAME SRC DST: rsync -n -aHAXc --itemize-changes --delete prints nothing
	local name=$1 src=$2 dst=$3 rc=0 out
	out=$(timeout 120 rsync -n -aHAXc --itemize-changes --delete "${rsync_x[@]}" "$src/" "$dst/" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
		pass "$name"
	else
		fail "$name: rsync -n -aHAXc --itemize-changes --delete (exit $rc) lists differences" "$(printf '%s\n' "$out" | head -n 40)"
	fi
}

lossless_atimes() { # DIR: "PATH ATIME" of every non-directory, sorted (reads no file)
	(cd "$1" && find . ! -type d -printf '%p %A@\n') | sort
}

# lossless_source DIR builds, on the native filesystem, a tree with every
# node type and attribute memfs promises to keep. The times are set last;
# every atime differs from its mtime, and a.txt's from every other.
lossless_source() {
	local d=$1
	mkdir -p "$d"/sub/.dotdir "$d"/empty "$d"/private "$d"/sgid "$d"/sticky
	printf 'plain\n' >"$d/a.txt"
	printf '# b\n' >"$d/sub/b.md"
	printf 'private\n' >"$d/private/p.txt"
	printf 'a dotfile\n' >"$d/.hidden"
	printf 'a dotfile in a dot directory\n' >"$d/sub/.dotdir/.x"
	printf '#!/bin/sh\necho setuid\n' >"$d/setuid"
	printf 'mode 0\n' >"$d/zero"
	printf 'two names\n' >"$d/hard1"
	ln "$d/hard1" "$d/sub/hard2"
	ln -s sub/b.md "$d/rel-link"
	ln -s does/not/exist "$d/dangling"
	mkfifo "$d/fifo"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/sock"
	if [ "$(id -u)" = 0 ]; then
		mknod "$d/null" c 1 3
		chown 1234:5678 "$d/sub/b.md"
		chown 4321:8765 "$d/sub"
	fi
	chmod 4755 "$d/setuid" # after chown, which clears it
	chmod 0 "$d/zero"
	chmod 0700 "$d/private"
	chmod 2775 "$d/sgid"
	chmod 1777 "$d/sticky"
	setfattr -n user.note -v 'on a file' "$d/a.txt"
	setfattr -n user.note -v 'on a directory' "$d/sub"
	# touch -h: no open (a fifo would block), symlinks themselves.
	find "$d" -exec touch -h -m -d '2021-03-04 05:06:07.123456789' {} +
	find "$d" -exec touch -h -a -d '2020-01-02 03:04:05.987654321' {} +
	touch -h -a -d '2019-05-06 07:08:09.5' "$d/a.txt"
}

# lossless_dir_nlinks DIR: every directory under DIR whose link count is
# not 2 + its subdirectories, as "PATH: nlink N, want M".
lossless_dir_nlinks() {
	local d n want
	while IFS= read -r -d '' d; do
		n=$(stat -c %h "$d")
		want=$((2 + $(find "$d" -mindepth 1 -maxdepth 1 -type d -printf x | wc -c)))
		[ "$n" = "$want" ] || echo "${d#"$1"}/: nlink $n, want $want"
	done < <(find "$1" -path "$1/.memfs" -prune -o -type d -print0)
}

# The git repository built in the mount and, for reference, natively. The
# identity and dates are fixed, so both give the same commit ids; HOME is a
# temporary one (safe.directory, no background gc), never the user's.
lossless_git_build='git -c init.defaultBranch=main init -q .
printf "# notes\n" > notes.md
printf "#!/bin/sh\necho run\n" > run.sh
chmod +x run.sh
ln -s notes.md link
printf "*.log\n" > .gitignore
git add -A
git commit -q -m first
git branch feature
printf "more\n" >> notes.md
printf "ignored\n" > debug.log
git add -A
git commit -q -m second
git gc -q'

lossless_git() { # DIR ARGS...: git ARGS in DIR, with the test's identity and HOME
	local d=$1
	shift
	(cd "$d" && env HOME="$tmp/git-home" GIT_CONFIG_NOSYSTEM=1 \
		GIT_AUTHOR_NAME='memfs test' GIT_AUTHOR_EMAIL=test@memfs.invalid GIT_AUTHOR_DATE='2021-03-04T05:06:07Z' \
		GIT_COMMITTER_NAME='memfs test' GIT_COMMITTER_EMAIL=test@memfs.invalid GIT_COMMITTER_DATE='2021-03-04T05:06:07Z' \
		timeout 60 "$@")
}

# The unprivileged user's operations in a sticky 01777 directory holding a
# root-owned file and a root-owned empty directory, in order, as
# "DESCRIPTION|EXPECTED|COMMAND"; EXPECTED is what a native filesystem gives
# (checked), the mount must give the same exit status and error.
lossless_sticky_ops=(
	"create a file of its own|ok|printf 'mine\n' > sticky/mine"
	"unlink root's file|Operation not permitted|rm -f sticky/root-file"
	"rename its own file over root's file|Operation not permitted|mv -f sticky/mine sticky/root-file"
	"rename root's file away|Operation not permitted|mv -f sticky/root-file sticky/moved"
	"rmdir root's empty directory|Operation not permitted|rmdir sticky/root-dir"
	"append to root's 0644 file|Permission denied|printf x >> sticky/root-file"
	"unlink its own file|ok|rm -f sticky/mine"
	"read root's mode-0 file|Permission denied|cat zero"
)
# Two of each: one checked in the session, one after remount.
lossless_setup='for d in session remount; do
	mkdir -p "$d/sticky/root-dir"
	chmod 1777 "$d/sticky"
	printf "root\n" > "$d/sticky/root-file"
	printf "nobody may read this\n" > "$d/zero"
	chmod 0 "$d/zero"
done'

as_nobody() { # DIR COMMAND: bash -c COMMAND in DIR as uid/gid 65534, no groups
	timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups -- bash -c 'cd "$1" && eval "$2"' _ "$1" "$2"
}

# as_nobody_result DIR COMMAND: "ok (exit 0)", or the error of the last
# line of its output (the text after the last ": ") and the exit status.
as_nobody_result() {
	local rc=0 out
	out=$(as_nobody "$1" "$2" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		out=ok
	else
		out=$(printf '%s\n' "$out" | tail -n 1)
		out=${out##*: }
	fi
	printf '%s (exit %s)' "$out" "$rc"
}

lossless() {
	local kind=$1 section_start rc out src native m
	section_start=$(date +%s.%N)
	label="[$kind] lossless: "
	spec=$(store_spec "$kind" lossless)
	mnt=$tmp/$kind-lossless-mnt
	m=$mnt
	src=$tmp/$kind-lossless-src
	native=$tmp/$kind-lossless-native
	local log1=$tmp/$kind-lossless-mount1.log log2=$tmp/$kind-lossless-mount2.log
	echo "== backend $kind, section lossless (store $spec, mountpoint $mnt)"
	mkdir -p "$mnt" "$native" "$tmp/git-home"
	mnts+=("$mnt")
	# The unprivileged user must reach the mount and the native reference.
	chmod 0711 "$tmp"

	if ! out=$( (set -euo pipefail && lossless_source "$src") 2>&1); then
		fail "building the source tree natively (test bug)" "$out"
		return
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "note: not root: no device node, no chown, no unprivileged checks"
	fi
	lossless_atimes "$src" >"$tmp/$kind-lossless-src.atimes"
	# Controls: what the checks below demand of memfs holds natively.
	rm -rf "$native/cp"
	if ! out=$(cp -a "$src" "$native/cp" 2>&1); then
		fail "cp -a of the source tree natively (test bug)" "$out"
		return
	fi
	lossless_same_tree "native control: a cp -a copy compares equal to its source" "$src" "$native/cp"
	out=$(lossless_dir_nlinks "$src")
	[ -z "$out" ] || fail "native control: directory link counts (test bug)" "$out"
	mkdir -p "$native/git"
	if ! out=$(lossless_git "$native/git" git config --global safe.directory '*' 2>&1 &&
		lossless_git "$native/git" git config --global gc.autoDetach false 2>&1 &&
		lossless_git "$native/git" git config --global maintenance.auto false 2>&1 &&
		lossless_git "$native/git" bash -euo pipefail -c "$lossless_git_build" 2>&1); then
		fail "git: building the repository natively (test bug)" "$out"
		return
	fi
	if ! out=$(cd "$native" && bash -euo pipefail -c "$lossless_setup" 2>&1); then
		fail "sticky directory and mode-0 file natively (test bug)" "$out"
		return
	fi

	if ! start_mount "$log1" --allow-other; then
		fail "mount --allow-other: .memfs/status not readable within 10 s" "$(tail -n 20 "$log1")"
		return
	fi
	pass "mount --allow-other on a new store"

	# Into the mount. The source's atimes again: the native copy above read
	# its files, which moved them (relatime); cp -a keeps what it finds now.
	lossless_atimes "$src" >"$tmp/$kind-lossless-src.atimes"
	rc=0
	out=$(timeout 120 cp -a "$src" "$m/cp" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then pass "cp -a of the tree into the mount exits 0"; else fail "cp -a of the tree into the mount exits $rc" "$(head -n 20 <<<"$out")"; fi
	rc=0
	out=$(timeout 120 rsync -aHAX "${rsync_x[@]}" "$src/" "$m/rsync/" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then pass "rsync -aHAX of the tree into the mount exits 0"; else fail "rsync -aHAX of the tree into the mount exits $rc" "$(head -n 20 <<<"$out")"; fi

	local git_built=no
	mkdir -p "$m/git" 2>/dev/null || true
	rc=0
	out=$(lossless_git "$m/git" bash -x -euo pipefail -c "$lossless_git_build" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		git_built=yes
		pass "git: init, a file, an executable, a symlink, .gitignore, two commits, a branch, gc in the mount"
	else
		fail "git: building the repository in the mount exits $rc (git checks after remount skipped)" "$(tail -n 12 <<<"$out")"
	fi

	rc=0
	out=$(cd "$m" && bash -euo pipefail -c 'mkdir -p dirs/parent/a dirs/parent/b dirs/parent/c/deeper dirs/empty
		mkdir -m 0700 dirs/private
		printf "x\n" > dirs/parent/file' 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || fail "mkdir -p, mkdir -m 0700 in the mount exit $rc" "$out"
	rc=0
	out=$(cd "$m" && bash -euo pipefail -c "$lossless_setup" 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || fail "a sticky directory with root's file and directory, a mode-0 file in the mount: exit $rc" "$out"
	# Enforcement in the session, apart from persistence (checked after remount).
	if [ "$(id -u)" = 0 ]; then
		lossless_unprivileged "$native/session" "$m/session" "in the session"
	fi

	: >"$native/mode1621" && chmod 01621 "$native/mode1621"
	out=$({ : >"$m/mode1621" && chmod 01621 "$m/mode1621" && stat -c %a "$m/mode1621"; } 2>&1) || true
	if [ "$(stat -c %a "$native/mode1621")" != 1621 ]; then
		fail "chmod 01621 natively gives $(stat -c %a "$native/mode1621") (test bug)"
	elif [ "$out" = 1621 ]; then
		pass "chmod 01621 on a file reads back 1621 (stat -c %a)"
	else
		fail "chmod 01621 on a file reads back '$out' (stat -c %a), want 1621"
	fi

	stop_mount "unmount" "$log1"
	if ! start_mount "$log2" --allow-other; then
		fail "remount: .memfs/status not readable within 10 s" "$(tail -n 20 "$log2")"
		return
	fi
	pass "remount --allow-other"

	# First, before anything reads a file of the copy (a read may set atime).
	lossless_atimes "$m/cp" >"$tmp/$kind-lossless-cp.atimes" 2>&1 || true
	same "cp -a copy after remount: the atime of every non-directory as in the source" \
		"$tmp/$kind-lossless-src.atimes" "$tmp/$kind-lossless-cp.atimes"

	local copy
	for copy in cp rsync; do
		lossless_same_tree "$copy copy after remount: equal to the source (names, types, contents, modes, owners, times, hard links, xattrs, devices)" "$src" "$m/$copy"
		out=$(stat -c '%h %i' "$m/$copy/hard1" "$m/$copy/sub/hard2" 2>&1) || true
		if [ "$(wc -l <<<"$out")" = 2 ] && [ "$(sort -u <<<"$out" | wc -l)" = 1 ] && [[ $out == "2 "* ]]; then
			pass "$copy copy after remount: hard1 and sub/hard2 have 2 links and one inode"
		else
			fail "$copy copy after remount: hard1 and sub/hard2 (stat -c '%h %i'), want 2 links and one inode" "$out"
		fi
		rm -rf "$tmp/$kind-lossless-out-$copy"
		rc=0
		out=$(timeout 120 rsync -aHAX "${rsync_x[@]}" "$m/$copy/" "$tmp/$kind-lossless-out-$copy/" 2>&1) || rc=$?
		if [ "$rc" -ne 0 ]; then
			fail "$copy copy: rsync -aHAX out of the mount exits $rc" "$(head -n 20 <<<"$out")"
		else
			lossless_same_tree "$copy copy: rsync -aHAX back out of the mount gives the source again" "$src" "$tmp/$kind-lossless-out-$copy"
		fi
	done

	out=$(stat -c %a "$m/dirs/private" 2>&1) || true
	if [ "$out" = 700 ]; then pass "a 0700 directory is still 0700 after remount"; else fail "a 0700 directory after remount: stat -c %a gives '$out', want 700"; fi
	if [ -d "$m/dirs/empty" ] && out=$(ls -A "$m/dirs/empty" 2>&1) && [ -z "$out" ]; then
		pass "an empty directory still exists after remount"
	else
		fail "an empty directory after remount: gone or not empty" "$(ls -la "$m/dirs" 2>&1)"
	fi
	out=$(stat -c %h "$m/dirs/parent" 2>&1) || true
	out=$( (
		[ "$out" = 5 ] || echo "dirs/parent: nlink $out, want 5 (3 subdirectories)"
		lossless_dir_nlinks "$m"
	) 2>&1)
	if [ -z "$out" ]; then
		pass "after remount: every directory's link count is 2 + its subdirectories (dirs/parent: 5)"
	else
		fail "after remount: directory link counts" "$(head -n 20 <<<"$out")"
	fi

	out=$(stat -c %a "$m/mode1621" 2>&1) || true
	if [ "$out" = 1621 ]; then pass "chmod 01621: still 1621 after remount"; else fail "chmod 01621: stat -c %a gives '$out' after remount, want 1621"; fi

	if [ "$git_built" = yes ]; then
		lossless_git_checks "$native/git" "$m/git"
	fi

	if [ "$(id -u)" = 0 ]; then
		lossless_unprivileged "$native/remount" "$m/remount" "after remount"
	fi

	stop_mount "unmount after remount" "$log2"
	out=$(grep -hE 'level=(WARN|ERROR)' "$log1" "$log2" || true)
	if [ -z "$out" ]; then
		pass "memfs logs: no WARN or ERROR"
	else
		fail "memfs logs: WARN or ERROR lines" "$(head -n 20 <<<"$out")"
	fi
	echo "== backend $kind, section lossless: $(awk -v a="$section_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
}

# lossless_git_checks NATIVE MOUNTED: the remounted repository is intact
# and says what the native one says.
lossless_git_checks() {
	local n=$1 g=$2 rc=0 out want
	want=$(lossless_git "$n" git fsck --full 2>&1) || true
	out=$(lossless_git "$g" git fsck --full 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] && [ "$out" = "$want" ]; then
		pass "git: fsck --full is clean after remount"
	else
		fail "git: fsck --full after remount exits $rc" "$(head -n 20 <<<"$out")"
	fi
	rc=0
	out=$(lossless_git "$g" git status --porcelain 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] && [ -z "$out" ] &&
		[ "$(lossless_git "$g" git status --porcelain --ignored 2>&1)" = "!! debug.log" ]; then
		pass "git: status --porcelain is empty after remount (debug.log ignored through .gitignore)"
	else
		fail "git: status --porcelain after remount exits $rc, want no output" "$out" \
			"with --ignored: $(lossless_git "$g" git status --porcelain --ignored 2>&1)"
	fi
	lossless_git "$n" git log --format='%H %s' >"$tmp/git-log.want" 2>&1 || true
	lossless_git "$g" git log --format='%H %s' >"$tmp/git-log.got" 2>&1 || true
	same "git: log shows both commits after remount (the native commit ids)" "$tmp/git-log.want" "$tmp/git-log.got"
	want=$(lossless_git "$n" git rev-parse --verify -q refs/heads/feature 2>&1) || true
	out=$(lossless_git "$g" git rev-parse --verify -q refs/heads/feature 2>&1) || true
	if [ -n "$want" ] && [ "$out" = "$want" ]; then
		pass "git: branch feature exists after remount, at the first commit"
	else
		fail "git: branch feature after remount: '$out', want '$want'" "$(lossless_git "$g" git branch -a 2>&1)"
	fi
	if [ -L "$g/link" ] && [ "$(readlink "$g/link")" = notes.md ]; then
		pass "git: link is a symlink to notes.md after remount"
	else
		fail "git: link after remount is not a symlink to notes.md" "$(ls -la "$g" 2>&1)"
	fi
	out=$(stat -c %a "$g/run.sh" 2>&1) || true
	want=$(lossless_git "$g" git ls-files -s run.sh 2>&1) || true
	if [ "$out" = 755 ] && [[ $want == "100755 "* ]]; then
		pass "git: run.sh keeps its executable bit after remount (755, 100755 in the index)"
	else
		fail "git: run.sh after remount: mode '$out', index '$want'; want 755 and 100755"
	fi
}

# lossless_unprivileged NATIVE MOUNTED WHEN: in each, as uid 65534, the
# same commands in a sticky directory and on a mode-0 file; the mount must
# refuse what the native filesystem refuses, with the same error. NATIVE is
# under the work directory (/var/tmp, not a tmpfs /tmp, so that it is a
# disk filesystem like ext4); its type is named in each check.
lossless_unprivileged() {
	local n=$1 g=$2 when=$3 op desc expect cmd got want fstype out
	fstype=$(stat -f -c %T "$n")
	out=$(stat -c '%a %U:%G' "$g/sticky" 2>&1) || true
	if [ "$out" = "1777 root:root" ]; then
		pass "$when: the sticky directory is 1777 root:root"
	else
		fail "$when: the sticky directory: '$out', want '1777 root:root'"
	fi
	for op in "${lossless_sticky_ops[@]}"; do
		desc=${op%%|*}
		cmd=${op#*|}
		expect=${cmd%%|*}
		cmd=${cmd#*|}
		want=$(as_nobody_result "$n" "$cmd")
		got=$(as_nobody_result "$g" "$cmd")
		if [[ $want != "$expect (exit "* ]]; then
			fail "$when, as uid 65534: $desc: native $fstype gives '$want', want '$expect' (test bug)"
		elif [ "$got" = "$want" ]; then
			pass "$when, as uid 65534 (--allow-other): $desc: $got, as on native $fstype"
		else
			fail "$when, as uid 65534 (--allow-other): $desc: '$got' on the mount, '$want' on native $fstype" "\$ $cmd"
		fi
	done
	want=$(cd "$n" && find sticky -printf '%p %U:%G %m\n' | sort)
	got=$(cd "$g" && find sticky -printf '%p %U:%G %m\n' 2>&1 | sort)
	if [ "$got" = "$want" ]; then
		pass "$when: the sticky directory holds what the native one holds afterwards"
	else
		fail "$when: the sticky directory afterwards differs from the native one" \
			"$(diff -u --label native --label mount <(printf '%s\n' "$want") <(printf '%s\n' "$got"))"
	fi
	out=$(as_nobody "$g" 'stat -c "%04a %A %U" zero' 2>&1) || true
	if [ "$out" = "0000 ---------- root" ]; then
		pass "$when, as uid 65534: stat of root's mode-0 file shows 0000 ----------"
	else
		fail "$when, as uid 65534: stat of root's mode-0 file: '$out', want '0000 ---------- root'"
	fi
}

# ============================================ first hour: the root (issue 30)
# Section "rootdir" (MEMFS_MT_ONLY=rootdir), on every backend: the mount's
# root is a directory like any other (cp -a, rsync -a, tar -x and touch
# into it exit 0; a chmod 700 of it holds after a remount), .memfs stays
# out of tree walks (ls, grep -r, cp -a, git add -A) but opens by name,
# ls -a lists . and .., .memfs/status reports its size (rsync copies it
# whole), and df reports the store's room, not a made-up 4 TiB.
# same_text NAME WANT GOT: pass when the two strings are equal.
same_text() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "want: $2" "got:  $3"
	fi
}

first_hour_root() {
	local kind=$1 rc out src tarball want got copy
	label="[$kind] first hour, the root: "
	spec=$(store_spec "$kind" rootdir)
	mnt=$tmp/$kind-rootdir-mnt
	local log1=$tmp/$kind-rootdir-mount1.log log2=$tmp/$kind-rootdir-mount2.log
	echo "== backend $kind, section rootdir (store $spec, mountpoint $mnt)"
	mkdir -p "$mnt"
	mnts+=("$mnt")
	src=$tmp/$kind-rootdir-src
	mkdir -p "$src/memory/project"
	printf 'the root is a directory\n' >"$src/memory/project/root.md"
	chmod 750 "$src"
	touch -d '2020-02-02 02:02:02' "$src"
	tarball=$tmp/$kind-rootdir.tar
	tar -c -f "$tarball" -C "$src" .
	if ! start_mount "$log1"; then
		fail "mount: .memfs/status not readable within 10 s" "$(tail -n 20 "$log1")"
		return
	fi
	for cmd in "cp -a $src/. $mnt" "rsync -a $src/ $mnt/" "tar -x -f $tarball -C $mnt" "touch $mnt"; do
		rc=0
		out=$(timeout 30 $cmd 2>&1) || rc=$?
		if [ "$rc" -eq 0 ]; then
			pass "$cmd exits 0"
		else
			fail "$cmd exits $rc" "$out"
		fi
	done
	same_text "the copied file reads back" "the root is a directory" "$(cat "$mnt/memory/project/root.md" 2>&1)"
	chmod 700 "$mnt"
	printf 'git\n' >"$mnt/memory/git.md"
	if ls -a "$mnt" | grep -qx '\.memfs'; then
		fail "ls -a of the root lists .memfs" "$(ls -a "$mnt")"
	else
		pass "ls -a of the root does not list .memfs"
	fi
	same_text "ls -a lists . and .." ". .." "$(ls -a "$mnt" | head -n 2 | tr '\n' ' ' | sed 's/ $//')"
	if [ -r "$mnt/.memfs/status" ]; then
		pass ".memfs/status opens by name"
	else
		fail ".memfs/status does not open by name"
	fi
	out=$(grep -r -l . "$mnt" 2>&1 || true)
	if [[ $out == *"/.memfs/"* ]]; then
		fail "grep -r over the mount reads .memfs" "$out"
	else
		pass "grep -r over the mount reads no .memfs"
	fi
	copy=$tmp/$kind-rootdir-copy
	rc=0
	out=$(cp -a "$mnt" "$copy" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] && [ ! -e "$copy/.memfs" ]; then
		pass "cp -a of the mount exits 0 and copies no .memfs"
	else
		fail "cp -a of the mount: exit $rc, .memfs copied: $([ -e "$copy/.memfs" ] && echo yes || echo no)" "$out"
	fi
	out=$(cd "$mnt" && git init -q && git add -A && git status --porcelain 2>&1)
	if [[ $out == *".memfs"* ]]; then
		fail "git add -A in the mount takes .memfs" "$out"
	else
		pass "git add -A in the mount takes no .memfs"
	fi
	rsync "$mnt/.memfs/status" "$tmp/$kind-rootdir-status" 2>/dev/null || true
	same_text "rsync copies .memfs/status whole (its size is real)" "$(stat -c %s "$mnt/.memfs/status")" "$(stat -c %s "$tmp/$kind-rootdir-status" 2>&1)"
	out=$(df -h "$mnt" | tail -n 1)
	if [[ $out == *" 4.0T "* ]]; then
		fail "df shows the made-up 4.0T" "$out"
	elif [ "$kind" != etcd ]; then
		# dir and badger: the room is the free space of the store's filesystem.
		want=$(df --output=avail -B1M "${spec#*:}" | tail -n 1)
		got=$(df --output=avail -B1M "$mnt" | tail -n 1)
		if [ $((want - got)) -lt 512 ] && [ $((got - want)) -lt 512 ]; then
			pass "df: ${got} MiB available, as on the store's filesystem (${want} MiB)"
		else
			fail "df: ${got} MiB available, the store's filesystem has ${want} MiB" "$out"
		fi
	else
		pass "df: $out"
	fi
	local mtime
	mtime=$(stat -c %Y "$mnt")
	stop_mount "rootdir" "$log1"
	if ! start_mount "$log2"; then
		fail "remount: .memfs/status not readable within 10 s" "$(tail -n 20 "$log2")"
		return
	fi
	same_text "a chmod 700 of the root holds after a remount" "700" "$(stat -c %a "$mnt")"
	same_text "the root's mtime after a remount" "$mtime" "$(stat -c %Y "$mnt")"
	same_text "what was copied in is there after a remount" "the root is a directory" "$(cat "$mnt/memory/project/root.md" 2>&1)"
	stop_mount "rootdir remount" "$log2"
}
# ======================================== end of first hour: the root

# ============================================ first hour: the tour (issue 30)
# Section "firsthour" (MEMFS_MT_ONLY=firsthour), on every backend: what a
# person and an agent meet in the first hour. The README's five-minute tour
# run literally (its two sh blocks, taken from the README so that they
# cannot drift), in a fresh HOME with memfs on PATH, against this
# backend's store; then, on a store of its own: git init and a commit in
# the mount with search and the context pack free of .git, a virtual file's
# error read by cat (and its errno in user.memfs.error), flags after
# arguments, and the rootdir checks above (cp -a, rsync -a, tar -x into the
# root, grep -r without .memfs hits, df).

# readme_block SECTION N: the Nth ```sh block under "## SECTION" of README.md.
readme_block() {
	awk -v s="## $1" -v n="$2" '
		/^## / { q = ($0 == s) }
		q && /^```sh$/ { b++; if (b == n) { p = 1; next } }
		p && /^```$/ { exit }
		p { print }
	' "$repo/README.md"
}

# tour_mount LOG: the tour's first terminal, memfs mount ~/memory, against
# this backend's store (--store: the tour runs on every store). Waits (120 s
# at most) until .memfs/status names the process; sets mount_pid.
tour_mount() {
	local log=$1 i status
	"${tenv[@]}" "$memfs" mount --store "$spec" "$mnt" >"$log" 2>&1 &
	mount_pid=$!
	mount_pids+=("$mount_pid")
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$mount_pid" 2>/dev/null || return 1
		if status=$(timeout 2 cat "$mnt/.memfs/status" 2>/dev/null) && [[ $status == *"pid: $mount_pid"* ]]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# want_out NAME WANT OUT: pass when OUT holds WANT.
want_out() {
	if [[ $3 == *"$2"* ]]; then
		pass "$1"
	else
		fail "$1: want output with '$2'" "$(printf '%s\n' "$3" | tail -n 30)"
	fi
}

first_hour_tour() {
	local kind=$1 home tour1 tour2 rc out prc bin
	label="[$kind] first hour, the README's tour: "
	spec=$(store_spec "$kind" tour)
	home=$(mktemp -d "$tmp/$kind-tour-home.XXXXXX")
	mnt=$home/memory
	mnts+=("$mnt")
	bin=$tmp/bin
	mkdir -p "$bin"
	ln -sf "$memfs" "$bin/memfs"
	echo "== backend $kind, section firsthour: the tour (store $spec, HOME $home)"
	tour1=$(readme_block "A five-minute tour" 1)
	tour2=$(readme_block "A five-minute tour" 2)
	if [ -z "$tour1" ] || [ -z "$tour2" ] || [[ $tour1 != *"cd ~/memory"* ]]; then
		fail "the README has a five-minute tour of two sh blocks, the first starting in ~/memory" "$tour1" "$tour2"
		return
	fi
	tenv=(env -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u MEMFS_STORE -u MEMFS_AGENT
		HOME="$home" PATH="$bin:$PATH" MEMFS_MODEL_DIR="${MEMFS_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memfs/models}")
	if ! tour_mount "$tmp/$kind-tour-mount1.log"; then
		fail "memfs mount ~/memory: not serving within 120 s" "$(tail -n 20 "$tmp/$kind-tour-mount1.log")"
		return
	fi
	pass "memfs mount ~/memory serves (made the mountpoint)"
	rc=0
	out=$(cd "$home" && timeout 120 "${tenv[@]}" bash -euo pipefail -c "$tour1" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "the tour's first block exits 0"
	else
		fail "the tour's first block exits $rc" "$(printf '%s\n' "$out" | tail -n 30)" "$(tail -n 10 "$tmp/$kind-tour-mount1.log")"
	fi
	want_out "ls -l and grep -r show the note" "./memory/style.md:Always run gofmt" "$out"
	if grep -q '^\./\.memfs' <<<"$out"; then
		fail "grep -r over the mount reads .memfs" "$out"
	else
		pass "grep -r over the mount reads no .memfs"
	fi
	want_out "memfs search and .memfs/search find the note" "memory/style.md  score" "$out"
	want_out ".memfs/context.md is a context pack" "<!-- memfs context pack sha256:" "$out"
	want_out "the history log lists the note's versions" " write " "$out"
	want_out "memfs unmount detaches the killed mount" "detached the dead mount" "$out"
	prc=0
	wait "$mount_pid" 2>/dev/null || prc=$?
	forget_mount_pid "$mount_pid"
	same_text "kill -9 ended the mount (exit 137)" 137 "$prc"
	if is_mounted "$mnt"; then
		fail "the dead mount is still in the mount table"
		return
	fi
	if ! tour_mount "$tmp/$kind-tour-mount2.log"; then
		fail "memfs mount ~/memory again: not serving within 120 s" "$(tail -n 20 "$tmp/$kind-tour-mount2.log")"
		return
	fi
	rc=0
	out=$(cd "$home" && timeout 120 "${tenv[@]}" bash -euo pipefail -c "$tour2" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "the tour's second block exits 0"
	else
		fail "the tour's second block exits $rc" "$out" "$(tail -n 10 "$tmp/$kind-tour-mount2.log")"
	fi
	want_out "the file closed before kill -9 came back" "closed before the crash" "$out"
	prc=0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$mount_pid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$mount_pid" 2>/dev/null || prc=$?
	forget_mount_pid "$mount_pid"
	same_text "the remount exits 0 after the tour's memfs unmount" 0 "$prc"
}

# first_hour_agent: git, search, packs, a virtual file's error and flags
# after arguments, on a store of its own, mounted with its flags after the
# mountpoint (memfs mount DIR --store S, as people type it).
first_hour_agent() {
	local kind=$1 rc out log=$tmp/$kind-agent-mount.log i status
	label="[$kind] first hour, an agent's tools: "
	spec=$(store_spec "$kind" agent)
	mnt=$tmp/$kind-agent-mnt
	mkdir -p "$mnt"
	mnts+=("$mnt")
	echo "== backend $kind, section firsthour: git, search, packs, errors (store $spec)"
	"$memfs" mount "$mnt" --store "$spec" --flush-interval 0 >"$log" 2>&1 &
	mount_pid=$!
	mount_pids+=("$mount_pid")
	for ((i = 0; i < 300; i++)); do
		kill -0 "$mount_pid" 2>/dev/null || break
		if status=$(timeout 2 cat "$mnt/.memfs/status" 2>/dev/null) && [[ $status == *"pid: $mount_pid"* ]]; then
			break
		fi
		sleep 0.1
	done
	if [[ ${status:-} != *"pid: $mount_pid"* ]]; then
		fail "memfs mount DIR --store S --flush-interval 0 (flags after the mountpoint): not serving" "$(tail -n 20 "$log")"
		return
	fi
	pass "memfs mount DIR --store S --flush-interval 0 (flags after the mountpoint) serves"
	mkdir -p "$mnt/memory/proj"
	printf 'The zebrafinch deploy runs on Tuesdays.\n' >"$mnt/memory/proj/deploy.md"
	printf 'Notes on zebrafinch tooling.\n' >"$mnt/memory/proj/tools.md"
	rc=0
	out=$(lossless_git "$mnt/memory" git init -q 2>&1 && lossless_git "$mnt/memory" git add -A 2>&1 &&
		lossless_git "$mnt/memory" git commit -q -m "zebrafinch: first notes" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "git init, add -A and commit in the mount exit 0"
	else
		fail "git init/add/commit in the mount: exit $rc" "$out"
	fi
	out=$(lossless_git "$mnt/memory" git status --porcelain 2>&1)
	same_text "git status is clean after the commit (nothing of .memfs)" "" "$out"
	sync "$mnt/memory/proj/deploy.md"
	for q in "search --mount $mnt zebrafinch" "search zebrafinch --mount $mnt --top-k 50" "context --mount $mnt --manifest"; do
		rc=0
		# shellcheck disable=SC2086 # q is split into words on purpose
		out=$(timeout 60 "$memfs" $q 2>&1) || rc=$?
		if [ "$rc" -ne 0 ]; then
			fail "memfs $q exits $rc" "$out"
		elif [[ $out == *".git/"* ]]; then
			fail "memfs $q names .git/" "$(grep -F .git/ <<<"$out" | head -n 10)"
		elif [[ $out != *"memory/proj/deploy.md"* ]]; then
			fail "memfs $q: the note is missing" "$out"
		else
			pass "memfs $q: the note, and nothing under .git/"
		fi
	done
	out=$(timeout 30 cat "$mnt/.memfs/search/zebrafinch top:50" 2>&1)
	if [[ $out == *".git/"* ]] || [[ $out != *"memory/proj/deploy.md"* ]]; then
		fail ".memfs/search/zebrafinch: want the note and nothing under .git/" "$out"
	else
		pass ".memfs/search/zebrafinch: the note, and nothing under .git/"
	fi
	out=$(timeout 30 cat "$mnt/.memfs/context.md" 2>&1)
	if [[ $out == *".git/"* ]] || [[ $out != *"zebrafinch deploy"* ]]; then
		fail ".memfs/context.md: want the note and nothing of .git/" "$out"
	else
		pass ".memfs/context.md: the note, and nothing of .git/"
	fi
	# A virtual file that cannot be answered says why, to cat and to getfattr.
	rc=0
	out=$(timeout 30 cat "$mnt/.memfs/search/zebrafinch importance:lots" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] && [ -n "$out" ] && [[ $out != *"No such file"* ]]; then
		pass "cat of a search with a bad filter exits 0 and says why: $(head -n 1 <<<"$out")"
	else
		fail "cat of a search with a bad filter: exit $rc, want the reason" "$out"
	fi
	out=$(getfattr --absolute-names --only-values -n user.memfs.error "$mnt/.memfs/search/zebrafinch importance:lots" 2>&1)
	same_text "its user.memfs.error is EINVAL" EINVAL "$out"
	out=$(timeout 30 cat "$mnt/.memfs/search/nothing-matches-qqxyzzy" 2>&1)
	want_out "a search with no hit reads 'no match'" "no match" "$out"
	# Flags after arguments, as git and rclone take them.
	for q in "ls memory/ -l --mount $mnt" "cat memory/proj/deploy.md -q" "log --json --limit 3 --mount $mnt" "hint claude --mount $mnt"; do
		rc=0
		# shellcheck disable=SC2086 # q is split into words on purpose
		out=$(cd "$mnt" && timeout 60 "$memfs" $q 2>&1) || rc=$?
		if [ "$rc" -eq 0 ]; then
			pass "memfs $q exits 0"
		else
			fail "memfs $q exits $rc" "$out"
		fi
	done
	stop_mount "agent" "$log"
}
# ======================================== end of first hour: the tour

# ================================ memory per repository (issue 33)
# Section "repo" (MEMFS_MT_ONLY=repo), on every backend: the memory of the
# repository an agent works in, through the mount. A clone of the
# repository this script is in (a local clone, never the network) gets
# its memory with memfs repo init; a convention and a decision are
# written with printf and cat, a broken record's close fails (cp says so)
# and memfs repo check names it until it is fixed; the repository's
# context pack (memfs context --repo, .memfs/context/repo:ID) holds the
# rules and then a step summary; the map is served from the cache the
# second time; a new branch's memory starts from its parent's at its
# first write and what it adds stays on it; a second repository's memory
# never reaches the first one's pack or search --repo. Git runs with no
# configuration of the machine's or the user's.

# repo_git DIR ARGS...: git ARGS in DIR, with the test's identity and no
# configuration of the machine's or the user's (safe.directory: in CI the
# checkout may belong to another user).
repo_git() {
	local d=$1
	shift
	(cd "$d" && env HOME="$tmp/repo-git-home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		timeout 60 git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main \
		-c safe.directory='*' -c advice.detachedHead=false "$@")
}

# repo_memfs DIR ARGS...: memfs ARGS --mount $mnt, run in DIR. Sets rout
# (its standard output) and rrc (its exit status); its standard error goes
# to $tmp/repo.err.
repo_memfs() {
	local d=$1
	shift
	rrc=0
	rout=$(cd "$d" && timeout 60 "$memfs" "$@" --mount "$mnt" 2>"$tmp/repo.err") || rrc=$?
}

# repo_has NAME TEXT WANT...: pass when TEXT holds every WANT.
repo_has() {
	local name=$1 text=$2 w miss=()
	shift 2
	for w in "$@"; do
		[[ $text == *"$w"* ]] || miss+=("'$w'")
	done
	if [ ${#miss[@]} -eq 0 ]; then
		pass "$name"
	else
		fail "$name: lacks ${miss[*]}" "$(printf '%s\n' "$text" | head -n 40)"
	fi
}

# repo_lacks NAME TEXT UNWANTED...: pass when TEXT holds none of UNWANTED.
repo_lacks() {
	local name=$1 text=$2 w found=() lines=()
	shift 2
	for w in "$@"; do
		[[ $text != *"$w"* ]] || { found+=("'$w'") && lines+=(-e "$w"); }
	done
	if [ ${#found[@]} -eq 0 ]; then
		pass "$name"
	else
		fail "$name: holds ${found[*]}" "$(printf '%s\n' "$text" | grep -F "${lines[@]}" | head -n 20)"
	fi
}

# repo_ran DESC: fail (with its output) when the last repo_memfs did not
# exit 0; returns 1 then.
repo_ran() {
	[ "$rrc" -eq 0 ] && return 0
	fail "$1: exit $rrc" "$rout" "$(cat "$tmp/repo.err")"
	return 1
}

repo_memory() {
	local kind=$1 section_start log top clone other rec id fid oid dir fdir odir pack out rc map1 t1
	section_start=$(date +%s.%N)
	label="[$kind] repo: "
	spec=$(store_spec "$kind" repo)
	mnt=$tmp/$kind-repo-mnt
	log=$tmp/$kind-repo-mount.log
	clone=$tmp/$kind-repo-clone
	other=$tmp/$kind-repo-other
	rec=$tmp/$kind-repo-records
	echo "== backend $kind, section repo (store $spec, mountpoint $mnt)"
	mkdir -p "$mnt" "$other" "$rec" "$tmp/repo-git-home"
	mnts+=("$mnt")

	# The repository this script is in, cloned locally. Its branch is named
	# main whatever the checkout had (CI may check out a detached HEAD), so
	# that feature's parent is a branch.
	rc=0
	out=$({ top=$(repo_git "$repo" rev-parse --show-toplevel) && repo_git "$tmp" clone -q "$top" "$clone" &&
		repo_git "$clone" checkout -q -B main; } 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "git clone of the repository this script is in ($repo): exit $rc" "$out"
		return
	fi
	pass "git clone -q of the repository this script is in: $(repo_git "$clone" ls-files | wc -l) files, branch main"
	# A second repository: one commit, another remote.
	rc=0
	out=$({ repo_git "$other" init -q && repo_git "$other" remote add origin https://example.com/memfs-mt/other.git &&
		printf 'package other\n\nfunc Zanzibar() {}\n' >"$other/other.go" && repo_git "$other" add -A &&
		repo_git "$other" commit -q -m one; } 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "git init and a commit in a second repository: exit $rc" "$out"
		return
	fi

	if ! start_mount "$log"; then
		fail "mount: .memfs/status not readable within 10 s" "$(tail -n 20 "$log")"
		return
	fi

	# memfs repo init, in the clone.
	id=$(cd "$clone" && "$memfs" repo id 2>&1) || true
	repo_memfs "$clone" repo init
	dir=$rout
	if [ "$rrc" -eq 0 ] && [[ $id =~ ^[0-9a-f]{16}$ ]] && [ "$dir" = "$mnt/repos/$id" ] &&
		[ -d "$dir/conventions" ] && [ -d "$dir/decisions" ] && [ -f "$dir/repo.json" ]; then
		pass "memfs repo init in the clone exits 0 and prints MNT/repos/ID (the ID of memfs repo id), made"
	else
		fail "memfs repo init in the clone: exit $rrc, printed '$dir', want $mnt/repos/ID (memfs repo id: '$id') with conventions/, decisions/, repo.json" \
			"$(cat "$tmp/repo.err")" "$(ls -la "$dir" 2>&1)"
		stop_mount "at the end" "$log"
		return
	fi
	if [ "$kind" != etcd ]; then
		out=$(cd "$clone" && MEMFS_STORE=$spec timeout 60 "$memfs" repo path 2>&1) || true
		same_text "memfs repo path given the store (MEMFS_STORE), not the mount, finds the mount that serves it" "$dir" "$out"
	fi

	# Records written with shell tools; a broken one's close fails.
	local conv=(--- 'id: errors' 'title: Wrap errors with errors.Join' 'tags: [go, errors]'
		'createdAt: 2026-12-01T10:00:00Z' 'updatedAt: 2026-12-01T10:00:00Z' --- 'Never pkg/errors.')
	printf '%s\n' "${conv[@]}" >"$rec/errors.md"
	printf '%s\n' --- 'id: etcd' 'summary: etcd over Consul for the shared store' 'rationale: one namespace for many agents' \
		'impactedPaths: [backend/etcdstore, scripts/mount-test.sh]' 'createdAt: 2026-12-01T10:00:00Z' --- >"$rec/etcd.md"
	printf '%s\n' --- 'id: vet' 'title: Run go vet before each commit' 'tags: [go]' \
		'createdAt: yesterday' 'updatedAt: 2026-12-01T10:00:00Z' --- >"$rec/vet-broken.md"
	printf '%s\n' --- 'id: vet' 'title: Run go vet before each commit' 'tags: [go]' \
		'createdAt: 2026-12-01T10:00:00Z' 'updatedAt: 2026-12-01T10:00:00Z' --- >"$rec/vet.md"
	rc=0
	out=$( (printf '%s\n' "${conv[@]}" >"$dir/conventions/errors.md" && cat "$rec/etcd.md" >"$dir/decisions/etcd.md") 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] && cmp -s "$rec/errors.md" "$dir/conventions/errors.md" && cmp -s "$rec/etcd.md" "$dir/decisions/etcd.md"; then
		pass "printf > conventions/errors.md and cat > decisions/etcd.md exit 0 and read back"
	else
		fail "printf > conventions/errors.md, cat > decisions/etcd.md: exit $rc, or they read back otherwise" "$out" \
			"$(cat "$dir/conventions/errors.md" "$dir/decisions/etcd.md" 2>&1)"
	fi
	rc=0
	out=$(cp "$rec/vet-broken.md" "$dir/conventions/vet.md" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ] && [[ $out == *"Invalid argument"* ]]; then
		pass "cp of a broken convention (createdAt: yesterday) into the mount exits $rc: $out"
	else
		fail "cp of a broken convention into the mount: exit $rc, want non-zero with Invalid argument (its close fails)" "$out"
	fi
	repo_memfs "$clone" repo check
	if [ "$rrc" -eq 1 ] && [[ $rout == *"repos/$id/conventions/vet.md"*createdAt* ]]; then
		pass "memfs repo check exits 1 naming conventions/vet.md and its createdAt"
	else
		fail "memfs repo check with a broken record: exit $rrc, want 1 naming conventions/vet.md and createdAt" "$rout" "$(cat "$tmp/repo.err")"
	fi
	rc=0
	out=$(cp "$rec/vet.md" "$dir/conventions/vet.md" 2>&1) || rc=$?
	repo_memfs "$clone" repo check
	if [ "$rc" -eq 0 ] && [ "$rrc" -eq 0 ]; then
		pass "cp of the fixed record over it exits 0, and memfs repo check then exits 0"
	else
		fail "the fixed record: cp exits $rc, memfs repo check exits $rrc (want 0 and 0)" "$out" "$rout" "$(cat "$tmp/repo.err")"
	fi

	# The repository's pack.
	repo_memfs "$clone" context --repo
	pack=$rout
	if repo_ran "memfs context --repo"; then
		repo_has "memfs context --repo holds the convention, the decision and the fixed record" "$pack" \
			"repos/$id/conventions/errors.md" "Wrap errors with errors.Join" "Never pkg/errors." \
			"repos/$id/decisions/etcd.md" "etcd over Consul for the shared store" "Run go vet before each commit"
	fi
	out=$(timeout 30 cat "$mnt/.memfs/context/repo:$id" 2>&1)
	same_text "cat .memfs/context/repo:ID gives the pack memfs context --repo printed" "$pack" "$out"
	repo_memfs "$clone" repo summary --run r1 --step s1 "step one mapped the zebrafinch loader"
	if repo_ran "memfs repo summary --run r1 --step s1 TEXT"; then
		out=$(timeout 30 cat "$mnt/.memfs/context/repo:$id" 2>&1)
		repo_has "memfs repo summary exits 0; the next pack (.memfs/context/repo:ID) holds it" "$out" \
			"run r1 step s1: step one mapped the zebrafinch loader" "Wrap errors with errors.Join"
	fi

	# The map, then the map from the cache.
	repo_memfs "$clone" repo cache get map.md
	same_text "memfs repo cache get map.md before any map exits 1 (none)" 1 "$rrc"
	repo_memfs "$clone" repo map
	map1=$rout
	if repo_ran "memfs repo map"; then
		repo_has "memfs repo map exits 0 and lists the clone's files" "$map1" "repository map:" '`scripts/mount-test.sh`' '`cmd/memfs/repo.go`'
	fi
	t1=$(stat -c %y "$dir/indexes/map.md" 2>&1)
	repo_memfs "$clone" repo map
	if [ "$rrc" -eq 0 ] && [ "$rout" = "$map1" ] && [ "$(stat -c %y "$dir/indexes/map.md" 2>&1)" = "$t1" ]; then
		pass "a second memfs repo map prints the same map, indexes/map.md not rewritten"
	else
		fail "the second memfs repo map: exit $rrc, same output: $([ "$rout" = "$map1" ] && echo yes || echo no), map.md's mtime $t1 then $(stat -c %y "$dir/indexes/map.md" 2>&1)" \
			"$(cat "$tmp/repo.err")"
	fi
	repo_memfs "$clone" repo cache get map.md
	if [ "$rrc" -eq 0 ] && [ "$rout" = "$map1" ]; then
		pass "memfs repo cache get map.md exits 0 with the map (fresh: the tree has not changed)"
	else
		fail "memfs repo cache get map.md: exit $rrc (want 0), same as the map: $([ "$rout" = "$map1" ] && echo yes || echo no)" "$(cat "$tmp/repo.err")"
	fi

	# A new branch: its memory starts from main's at its first write.
	if ! out=$(repo_git "$clone" checkout -q -b feature 2>&1); then
		fail "git checkout -q -b feature" "$out"
		stop_mount "at the end" "$log"
		return
	fi
	fid=$(cd "$clone" && "$memfs" repo id 2>&1) || true
	if [[ $fid =~ ^[0-9a-f]{16}$ ]] && [ "$fid" != "$id" ]; then
		pass "after git checkout -q -b feature, memfs repo id changes ($id, then $fid)"
	else
		fail "after git checkout -q -b feature, memfs repo id: '$fid' (main's: $id)"
	fi
	repo_memfs "$clone" repo add note --source agent "the feature branch reworks the loader"
	if repo_ran "memfs repo add note --source agent TEXT on feature"; then
		repo_has "memfs repo add note on feature exits 0 and prints the note under MNT/repos/FEATURE-ID/notes/" "$rout" "$mnt/repos/$fid/notes/"
	fi
	repo_memfs "$clone" repo path
	fdir=$rout
	if [ "$fdir" = "$mnt/repos/$fid" ] && cmp -s "$rec/errors.md" "$fdir/conventions/errors.md" && cmp -s "$rec/etcd.md" "$fdir/decisions/etcd.md"; then
		pass "the first write on feature started its memory from main's (its conventions/errors.md and decisions/etcd.md)"
	else
		fail "feature's memory ($fdir, want $mnt/repos/$fid) lacks main's records" "$(ls -lR "$fdir" 2>&1 | head -n 30)"
	fi
	rc=0
	out=$( (printf '%s\n' --- 'id: quokka' 'title: "Only on feature: quokka loader"' 'createdAt: 2026-12-02T10:00:00Z' \
		'updatedAt: 2026-12-02T10:00:00Z' --- >"$fdir/conventions/quokka.md") 2>&1) || rc=$?
	repo_memfs "$clone" context --repo
	if [ "$rc" -eq 0 ] && repo_ran "memfs context --repo on feature"; then
		repo_has "a convention added on feature is in feature's pack, with main's" "$rout" "Only on feature: quokka loader" "Wrap errors with errors.Join"
	elif [ "$rc" -ne 0 ]; then
		fail "printf > conventions/quokka.md on feature: exit $rc" "$out"
	fi
	if ! out=$(repo_git "$clone" checkout -q - 2>&1); then
		fail "git checkout -q - (back to main)" "$out"
	fi
	out=$(cd "$clone" && "$memfs" repo id 2>&1) || true
	same_text "after git checkout -q -, memfs repo id is main's again" "$id" "$out"
	repo_memfs "$clone" context --repo
	if repo_ran "memfs context --repo back on main"; then
		repo_lacks "main's pack holds nothing added on feature" "$rout" "quokka" "the feature branch reworks the loader"
	fi

	# Another repository: its memory stays its own.
	repo_memfs "$other" repo init
	odir=$rout
	oid=${odir##*/}
	if [ "$rrc" -eq 0 ] && [ "$odir" = "$mnt/repos/$oid" ] && [[ $oid =~ ^[0-9a-f]{16}$ ]] && [ "$oid" != "$id" ] && [ "$oid" != "$fid" ]; then
		pass "memfs repo init in a second repository prints a memory of its own (MNT/repos/$oid)"
	else
		fail "memfs repo init in the second repository: exit $rrc, printed '$odir'" "$(cat "$tmp/repo.err")"
		stop_mount "at the end" "$log"
		return
	fi
	rc=0
	out=$( (printf '%s\n' --- 'id: tabs' 'title: Indent the zanzibar server with tabs' 'tags: [style]' \
		'createdAt: 2026-12-01T10:00:00Z' 'updatedAt: 2026-12-01T10:00:00Z' --- 'Tabs in the zanzibar server.' >"$odir/conventions/tabs.md") 2>&1) || rc=$?
	repo_memfs "$other" context --repo
	if [ "$rc" -eq 0 ] && repo_ran "memfs context --repo in the second repository"; then
		repo_has "the second repository's pack holds its convention" "$rout" "Indent the zanzibar server with tabs"
		repo_lacks "the second repository's pack holds nothing of the first's" "$rout" "errors.Join" "repos/$id/" "zebrafinch"
	elif [ "$rc" -ne 0 ]; then
		fail "printf > conventions/tabs.md in the second repository: exit $rc" "$out"
	fi
	repo_memfs "$clone" context --repo --query zanzibar
	if repo_ran "memfs context --repo --query zanzibar in the clone"; then
		repo_lacks "the clone's pack (--query zanzibar) holds nothing of the second repository" "$rout" "zanzibar" "repos/$oid/"
	fi
	repo_memfs "$clone" search zanzibar
	if repo_ran "memfs search zanzibar (all the store) in the clone"; then
		repo_has "memfs search zanzibar without --repo finds the second repository's convention (the search sees it)" "$rout" "repos/$oid/conventions/tabs.md"
	fi
	repo_memfs "$clone" search --repo zanzibar
	if repo_ran "memfs search --repo zanzibar in the clone"; then
		repo_lacks "memfs search --repo zanzibar in the clone finds nothing of the second repository" "$rout" "repos/$oid/"
	fi
	repo_memfs "$clone" repo ls
	if repo_ran "memfs repo ls"; then
		repo_has "memfs repo ls lists main's, feature's and the second repository's memory" "$rout" \
			"$id main $clone " "$fid feature $clone " "$oid main $other "
	fi
	stop_mount "at the end" "$log"
	echo "== backend $kind, section repo: $(awk -v a="$section_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
}
# ============================ end of memory per repository

# ============================================== routes: one mount, three stores
# Section "routes" (MEMFS_MT_ONLY=routes), on every backend as the default
# route: memfs mount --route skills/=dir:TEAM:ro --route scratch/=mem:.
# skills/ is a team's plain directory, read-only: cat reads it; echo >, rm,
# chmod and mkdir fail with "Read-only file system" and leave it as it
# was; a file its owner writes there shows in the mount, and to a watcher
# on it. Across routes rename(2) and ln fail with "Invalid cross-device
# link" and mv copies; rmdir of a route's directory and mv of it fail with
# "Device or resource busy". scratch/ is working memory: memfs search
# finds a word written only there, no file of the store (etcd's data for
# etcd) or of the state directory holds it after the unmount, and scratch/
# is empty after a remount, while memory/ kept its note.

# routes_refused DESC WANT CMD...: CMD fails, saying WANT.
routes_refused() {
	local desc=$1 want=$2 rc=0 out
	shift 2
	out=$(timeout 30 "$@" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ] && [[ $out == *"$want"* ]]; then
		pass "$desc fails: $want"
	else
		fail "$desc: exit $rc, want a failure saying '$want'" "$out"
	fi
}

# routes_wait DESC CMD: CMD (bash) succeeds within 10 s.
routes_wait() {
	local i
	for ((i = 0; i < 100; i++)); do
		if bash -c "$2" 2>/dev/null; then
			pass "$1"
			return 0
		fi
		sleep 0.1
	done
	fail "$1 (not within 10 s)"
}

routes() {
	local kind=$1 section_start team disk rc out w
	local log1=$tmp/$kind-routes-mount1.log log2=$tmp/$kind-routes-mount2.log ev=$tmp/$kind-routes.events
	section_start=$(date +%s.%N)
	label="[$kind] routes: "
	spec=$(store_spec "$kind" routes)
	mnt=$tmp/$kind-routes-mnt
	team=$tmp/$kind-routes-team
	echo "== backend $kind, section routes (store $spec, mountpoint $mnt)"
	mkdir -p "$mnt" "$team/git"
	mnts+=("$mnt")
	printf -- '---\nname: git\n---\nthe team'\''s git skill\n' >"$team/git/SKILL.md"
	local routes=(--route "skills/=dir:$team:ro" --route scratch/=mem:)
	team_tree() { (cd "$team" && find . -printf '%y %m %s %T@ %p\n' | sort); }
	team_tree >"$tmp/routes-team.want"
	if ! start_mount "$log1" "${routes[@]}"; then
		fail "memfs mount --route skills/=dir:TEAM:ro --route scratch/=mem:: not serving within 10 s" "$(tail -n 20 "$log1")"
		return
	fi

	# The read-only route.
	same_text "cat skills/git/SKILL.md reads the team's file" "$(cat "$team/git/SKILL.md")" "$(cat "$mnt/skills/git/SKILL.md" 2>&1)"
	routes_refused "echo x > skills/new.md" "Read-only file system" bash -c 'echo x >"$1"' _ "$mnt/skills/new.md"
	routes_refused "rm skills/git/SKILL.md" "Read-only file system" rm "$mnt/skills/git/SKILL.md"
	routes_refused "chmod 600 skills/git/SKILL.md" "Read-only file system" chmod 600 "$mnt/skills/git/SKILL.md"
	routes_refused "mkdir skills/new" "Read-only file system" mkdir "$mnt/skills/new"
	team_tree >"$tmp/routes-team.got"
	same "the team's directory is unchanged (find -printf '%y %m %s %T@ %p')" "$tmp/routes-team.want" "$tmp/routes-team.got"
	if grep -q 'route skills/ is read-only' "$log1"; then
		pass "the mount's log names the read-only route"
	else
		fail "the mount's log does not say 'route skills/ is read-only'" "$(tail -n 10 "$log1")"
	fi
	if start_watch "$mnt" "$ev"; then
		w=$watch_pid
		printf 'the team adds a skill\n' >"$team/git/extra.md"
		routes_wait "a file the owner writes into the team's directory shows in the mount" \
			"[ \"\$(cat '$mnt/skills/git/extra.md')\" = 'the team adds a skill' ]"
		stop_watch "$mnt" "$ev" "$w"
		if grep -qxF "CREATE skills/git/extra.md" "$ev.rel"; then
			pass "a watcher on the mount (inotifywait -m -r) got CREATE skills/git/extra.md"
		else
			fail "the watcher on the mount got no 'CREATE skills/git/extra.md'" "$(cat "$ev.rel")"
		fi
	else
		fail "inotifywait on the mount" "$(cat "$ev.err")"
	fi

	# Across routes.
	routes_refused "rmdir scratch (empty)" "Device or resource busy" rmdir "$mnt/scratch"
	routes_refused "mv skills x" "Device or resource busy" mv "$mnt/skills" "$mnt/x"
	printf 'a note to move\n' >"$mnt/memory/a.md"
	routes_refused "rename(2) of memory/a.md to scratch/a.md (python3 os.rename)" "Invalid cross-device link" \
		python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$mnt/memory/a.md" "$mnt/scratch/a.md"
	routes_refused "ln memory/a.md scratch/l.md" "Invalid cross-device link" ln "$mnt/memory/a.md" "$mnt/scratch/l.md"
	rc=0
	out=$(timeout 30 mv "$mnt/memory/a.md" "$mnt/scratch/a.md" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] && [ "$(cat "$mnt/scratch/a.md" 2>&1)" = "a note to move" ] && [ ! -e "$mnt/memory/a.md" ]; then
		pass "mv memory/a.md scratch/a.md exits 0 (it copies); the note is in scratch/ only"
	else
		fail "mv memory/a.md scratch/a.md: exit $rc, want 0 and the note in scratch/ only" "$out" "$(ls -l "$mnt/memory" "$mnt/scratch" 2>&1)"
	fi

	# Working memory.
	printf 'the quasarzebra plan\n' >"$mnt/scratch/plan.md"
	printf 'the nebulaotter note\n' >"$mnt/memory/kept.md"
	sync "$mnt/scratch/plan.md" "$mnt/memory/kept.md"
	rc=0
	out=$(timeout 60 "$memfs" search --mount "$mnt" --mode keyword quasarzebra 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] && [[ $out == *"scratch/plan.md"* ]]; then
		pass "memfs search --mount MNT --mode keyword finds the word of scratch/plan.md"
	else
		fail "memfs search --mount MNT --mode keyword quasarzebra: exit $rc, want scratch/plan.md" "$out"
	fi
	stop_mount "the first mount" "$log1"
	disk=${spec#*:}
	[ "$kind" != etcd ] || disk=$tmp/etcd-data
	out=$(grep -rl nebulaotter "$disk" "$XDG_STATE_HOME" 2>&1 || true)
	if [ -z "$out" ]; then
		fail "the control: memory/kept.md's word is in no file of $disk (test bug)"
	fi
	out=$(grep -rl quasarzebra "$disk" "$XDG_STATE_HOME" 2>&1 || true)
	same_text "after the unmount, grep -rl finds scratch/plan.md's word in no file of $disk or of the state directory" "" "$out"
	if ! start_mount "$log2" "${routes[@]}"; then
		fail "remount: .memfs/status not readable within 10 s" "$(tail -n 20 "$log2")"
		return
	fi
	same_text "ls -A scratch after a remount: empty" "" "$(ls -A "$mnt/scratch" 2>&1)"
	same_text "memory/kept.md after a remount" "the nebulaotter note" "$(cat "$mnt/memory/kept.md" 2>&1)"
	stop_mount "the remount" "$log2"
	echo "== backend $kind, section routes: $(awk -v a="$section_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
}
# ========================================== end of routes

# ----------------------------------------------------------- quickstart

# The README's quick start, literally, in a fresh HOME: its first line (go
# run ... mount ~/memory) serves the default store at a mountpoint memfs
# makes; memfs ls, search and log, given neither --mount nor --store, find
# the mount that serves the store and go through it, from outside the
# mount and from inside; memfs unmount stops it, and the store then holds
# what was written. Nothing of the user's own HOME or XDG directories is
# used: Go's caches are passed on explicitly.
quickstart() {
	label="quickstart: "
	local home block cmd mnt qlog pid mpid="" status i rc out
	home=$(mktemp -d "$tmp/home.XXXXXX")
	mnt=$home/memory
	qlog=$tmp/quickstart.log
	block=$(awk '/^## / { q = ($0 == "## Quick start") } q && /^```sh$/ { b = 1; next } b && /^```$/ { exit } b { print }' README.md)
	cmd=$(printf '%s\n' "$block" | sed -n 1p | sed 's/[[:space:]]*#.*$//')
	if [ "$(printf '%s\n' "$block" | wc -l)" -ne 2 ] || [[ $cmd != "go run ./cmd/memfs mount "* ]] ||
		[[ $(printf '%s\n' "$block" | sed -n 2p) != "scripts/test.sh"* ]]; then
		fail "the README's quick start is two commands: go run ./cmd/memfs mount ..., then scripts/test.sh" "$block"
		return
	fi
	local qenv=(env -u XDG_DATA_HOME -u XDG_STATE_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u MEMFS_STORE -u MEMFS_AGENT
		HOME="$home" GOPATH="$(go env GOPATH)" GOCACHE="$(go env GOCACHE)" GOMODCACHE="$(go env GOMODCACHE)"
		GOPROXY="$(go env GOPROXY)" GOSUMDB="$(go env GOSUMDB)" GOFLAGS="$(go env GOFLAGS)" GOTOOLCHAIN="$(go env GOTOOLCHAIN)")
	if [ -e "$mnt" ]; then
		fail "the fresh HOME already has memory/ (test bug)"
		return
	fi
	mnts+=("$mnt")
	"${qenv[@]}" bash -c "exec $cmd" >"$qlog" 2>&1 &
	pid=$!
	mount_pids+=("$pid")
	# go run builds first: up to 120 s on a busy machine.
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		if status=$(timeout 2 cat "$mnt/.memfs/status" 2>/dev/null) && [[ $status == *"pid: "* ]]; then
			mpid=${status##*pid: }
			mpid=${mpid%%$'\n'*}
			mount_pids+=("$mpid") # the memfs process go run started
			break
		fi
		sleep 0.1
	done
	if [ -z "$mpid" ]; then
		fail "\$ $cmd: the mount did not come up" "$(tail -n 20 "$qlog")"
		return
	fi
	pass "\$ $cmd: mounted, served by memfs process $mpid"
	if grep -q 'created mountpoint' "$qlog"; then
		pass "memfs made the missing mountpoint ~/memory, and said so"
	else
		fail "memfs did not log that it made ~/memory" "$(tail -n 20 "$qlog")"
	fi
	mkdir -p "$mnt/memory"
	printf 'Always run gofmt before committing.\n' >"$mnt/memory/style.md"
	sync "$mnt/memory/style.md" # fsync: the event log shows flushed changes
	qcheck() { # DESC WANT DIR ARGS...: memfs ARGS run in DIR exits 0 and prints WANT
		local desc=$1 want=$2 dir=$3 rc=0 out
		shift 3
		out=$(cd "$dir" && timeout 60 "${qenv[@]}" "$memfs" "$@" 2>&1) || rc=$?
		if [ "$rc" -eq 0 ] && [[ $out == *"$want"* ]]; then
			pass "$desc"
		else
			fail "$desc: exit $rc, want output with '$want'" "$out"
		fi
	}
	qcheck "memfs ls, while mounted, without --mount, lists the file" memory/style.md "$repo" ls
	qcheck "memfs search gofmt, while mounted, without --mount, finds it" memory/style.md "$repo" search gofmt
	qcheck "memfs log, while mounted, without --mount, shows its write" memory/style.md "$repo" log
	qcheck "memfs ls inside the mount uses that mount" memory/style.md "$mnt/memory" ls
	qcheck "memfs cat, while mounted, reads through the mount" "Always run gofmt" "$repo" cat memory/style.md
	rc=0
	out=$(timeout 60 "${qenv[@]}" "$memfs" unmount --timeout 30s "$mnt" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "memfs unmount ~/memory exits 0"
	else
		fail "memfs unmount ~/memory exits $rc" "$out"
	fi
	rc=0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		fail "go run still runs 10 s after memfs unmount" "$(tail -n 20 "$qlog")"
		return # stop_all ends it
	fi
	wait "$pid" || rc=$?
	forget_mount_pid "$pid"
	forget_mount_pid "$mpid"
	if [ "$rc" -eq 0 ]; then
		pass "\$ $cmd exits 0 after memfs unmount"
	else
		fail "\$ $cmd exits $rc after memfs unmount" "$(tail -n 20 "$qlog")"
	fi
	if is_mounted "$mnt"; then
		fail "the mountpoint is still mounted: $mnt"
	else
		pass "the mountpoint is unmounted"
	fi
	qcheck "memfs ls after the unmount reads the default store: the file was saved" memory/style.md "$repo" ls
	if [ -d "$home/.local/share/memfs/store" ]; then
		pass "the default store is under the fresh HOME (~/.local/share/memfs/store)"
	else
		fail "no store at ~/.local/share/memfs/store in the fresh HOME"
	fi
}

# ------------------------------------------------- MCP Inspector (issue 32)

# A client nobody here wrote: the MCP Inspector's command-line mode lists
# memfs mcp's tools and calls view, create and search over stdio. It is
# installed into the work directory at a pinned version: 0.15.0, the newest
# that runs on the node (20) the distribution ships; later ones ask for
# node >= 22.7.5.
inspector_version=0.15.0
mcp_inspector() {
	label="mcp: "
	if ! command -v npm >/dev/null; then
		echo "SKIP  mcp: the MCP Inspector needs npm, which is not installed (scripts/install-deps.sh installs it)"
		return 0
	fi
	local dir=$tmp/inspector out store=dir:$tmp/mcp-store
	mkdir -p "$dir"
	if ! out=$(cd "$dir" && timeout 600 npm install --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector@$inspector_version" 2>&1); then
		fail "npm install @modelcontextprotocol/inspector@$inspector_version" "$out"
		return 0
	fi
	# Its own binary, not npx, which may ask the registry first.
	insp() { (cd "$dir" && timeout 300 node_modules/.bin/mcp-inspector --cli "$memfs" mcp --store "$store" "$@" 2>&1); }
	out=$(insp --method tools/list) || out+=" (exit $?)"
	if [[ $out == *'"name": "view"'* && $out == *'"name": "search"'* && $out == *'"name": "create"'* ]]; then
		pass "the Inspector lists the tools (view, create, search among them)"
	else
		fail "the Inspector's tools/list" "$out"
	fi
	out=$(insp --method tools/call --tool-name create --tool-arg path=/memories/inspector.md --tool-arg 'file_text=written by the inspector') || out+=" (exit $?)"
	if [[ $out == *'File created successfully at: /memories/inspector.md'* ]] && [ "$("$memfs" cat --store "$store" memory/inspector.md)" = "written by the inspector" ]; then
		pass "the Inspector's create is in the store (memfs cat)"
	else
		fail "the Inspector's create" "$out"
	fi
	out=$(insp --method tools/call --tool-name view --tool-arg path=/memories/inspector.md) || out+=" (exit $?)"
	if [[ $out == *'1\twritten by the inspector'* ]]; then
		pass "the Inspector's view shows the note with line numbers"
	else
		fail "the Inspector's view" "$out"
	fi
	out=$(insp --method tools/call --tool-name search --tool-arg query=inspector --tool-arg mode=keyword) || out+=" (exit $?)"
	if [[ $out == *'memory/inspector.md'* ]]; then
		pass "the Inspector's search finds the note"
	else
		fail "the Inspector's search" "$out"
	fi
	label=""
}

if want_section mcp; then
	mcp_inspector
fi

if want_section quickstart; then
	quickstart
	# Whatever happened, nothing of it stays running or mounted.
	stop_all
	label=""
fi
for kind in "${backends[@]}"; do
	if want_section tools; then
		section_start=$(date +%s.%N)
		run_backend "$kind"
		echo "== backend $kind, section tools: $(awk -v a="$section_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
		# Whatever happened, nothing of this backend stays running or mounted.
		stop_all
	fi
	if want_section lossless; then
		lossless "$kind"
		stop_all
	fi
	if want_section firsthour; then
		first_hour_tour "$kind"
		stop_all
		first_hour_agent "$kind"
		stop_all
	fi
	if want_section rootdir || [ "$only" = firsthour ]; then
		first_hour_root "$kind"
		stop_all
	fi
	if want_section repo; then
		repo_memory "$kind"
		stop_all
	fi
	if want_section routes; then
		routes "$kind"
		stop_all
	fi
done
label=""

elapsed=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "== summary: $((checks - failures)) of $checks checks passed, $failures failed, in $elapsed s"
if [ "$failures" -gt 0 ]; then
	printf '   failed: %s\n' "${failed[@]}"
	exit 1
fi
echo "PASS"
