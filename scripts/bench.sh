#!/usr/bin/env bash
# Whole-filesystem benchmark: the same workloads (ls -lR, find, cold and
# warm reads, grep -r, sed -i, one large file written + fsync and read,
# creating files, flushing them and making them durable, mount time and
# memory with many keys) on a native directory, on memfs with the dir and
# the badger store and on peer FUSE filesystems (go-fuse loopback, bindfs,
# rclone mount), targets interleaved over N rounds; prints a markdown table
# of medians, min-max and the ratios to native and to the best peer. The
# work is done by the Go program in bench/ (see bench/main.go).
#
#   scripts/bench.sh [--quick] [-rounds N] [-files N] [-o FILE]
#                    [-targets native,dir,badger,loopback,bindfs,rclone]
#                    [-edits N] [-big BYTES] [-mount-keys N] [-mount-reps N]
#                    [-memfs-args '--debug'] [-memfs PATH] [-memfs-base PATH] [-keep]
#
# --quick: 2 rounds of 2,000 files, 200 edits, a 32 MiB file, a 10,000-key
# mount phase (under two minutes with the default targets). Default: 5
# rounds of 10,000 files, 1,000 edits, 256 MiB, 100,000 keys (the mount
# phase writes that tree once: some minutes on a slow disk).
# -memfs PATH runs that memfs binary instead of building ./cmd/memfs.
# Needs root (the cold read drops the kernel caches). Every mount it makes
# is unmounted, also on failure or interrupt; only the processes it started
# are stopped, by pid.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd) # -o FILE stays relative to where we were started

if [ "$(id -u)" -ne 0 ]; then
	echo "bench.sh needs root (it drops the kernel caches: echo 3 > /proc/sys/vm/drop_caches)" >&2
	exit 1
fi
command -v go >/dev/null || { echo "bench.sh: go is not installed" >&2; exit 1; }

# The programs the workloads run, and fusermount3 (go-fuse's fallback when a
# direct mount is refused).
need=()
command -v ls >/dev/null || need+=(coreutils)
command -v find >/dev/null || need+=(findutils)
command -v grep >/dev/null || need+=(grep)
command -v findmnt >/dev/null || need+=(util-linux)
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v bindfs >/dev/null || need+=(bindfs) # peer targets
command -v rclone >/dev/null || need+=(rclone)
if [ ${#need[@]} -gt 0 ]; then
	echo "bench.sh: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

work=$(mktemp -d /var/tmp/memfs-bench.XXXXXX)
keep=0
# Safety net if the bench program itself dies: stop the serving processes
# it recorded (only those still running one of the binaries it starts:
# memfs, loopback, bindfs, rclone), detach mounts left under $work, then
# remove $work (never while something is still mounted there).
ours() { # ours PID: is PID running one of our serving binaries?
	local exe b
	exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
	for b in "$work/bin/memfs" "$work/bin/memfs-base" "$work/bin/loopback" "$(readlink -f "$(command -v bindfs)")" "$(readlink -f "$(command -v rclone)")"; do
		[ "$exe" = "$b" ] && return 0
	done
	return 1
}
cleanup() {
	local pid m i
	if [ -f "$work/run/pids" ]; then
		while read -r pid; do
			ours "$pid" || continue
			kill -TERM "$pid" 2>/dev/null || true
			for ((i = 0; i < 300; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			if ours "$pid"; then
				kill -KILL "$pid" 2>/dev/null || true
			fi
		done <"$work/run/pids"
	fi
	while read -r m; do
		echo "bench.sh: detaching leftover mount $m" >&2
		umount -l "$m" || true
	done < <(awk -v w="$work" '$5 == w || index($5, w "/") == 1 {print $5}' /proc/self/mountinfo | sort -r)
	if [ "$keep" = 1 ]; then
		echo "bench.sh: kept $work" >&2
	elif awk -v w="$work" '$5 == w || index($5, w "/") == 1 {found = 1} END {exit !found}' /proc/self/mountinfo; then
		echo "bench.sh: mounts remain under $work; not removing it" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# -memfs PATH (or -memfs=PATH): a prebuilt memfs, copied in; it is taken
# out of the arguments passed on. -memfs-base PATH: a baseline build (an
# earlier revision) for the targets dir-base and badger-base, copied in too.
memfs_bin=
memfs_base=
args=()
while [ $# -gt 0 ]; do
	case $1 in
	-keep | --keep)
		keep=1
		args+=("$1")
		;;
	-memfs | --memfs) memfs_bin=${2:?-memfs needs a path}; shift ;;
	-memfs=* | --memfs=*) memfs_bin=${1#*=} ;;
	-memfs-base | --memfs-base) memfs_base=${2:?-memfs-base needs a path}; shift ;;
	-memfs-base=* | --memfs-base=*) memfs_base=${1#*=} ;;
	*) args+=("$1") ;;
	esac
	shift
done

mkdir -p "$work/bin"
if [ -n "$memfs_bin" ]; then
	cp "$memfs_bin" "$work/bin/memfs"
	# the revision it was built from, as go version -m reports it
	rev=$(go version -m "$memfs_bin" | awk '$1 == "build" && $2 ~ /^vcs.revision=/ {r = substr($2, 14, 7)}
		$1 == "build" && $2 == "vcs.modified=true" {m = "+changes"} END {print (r == "" ? "unknown" : r) m}')
	rev="$rev (prebuilt)"
else
	(cd "$repo" && go build -o "$work/bin/memfs" ./cmd/memfs)
	rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
	git -C "$repo" diff --quiet HEAD 2>/dev/null || rev="$rev+changes"
fi
if [ -n "$memfs_base" ]; then
	cp "$memfs_base" "$work/bin/memfs-base"
	args+=(-memfs-base "$work/bin/memfs-base")
fi
(cd "$repo" && go build -o "$work/bin/bench" ./bench &&
	go build -o "$work/bin/loopback" github.com/hanwen/go-fuse/v2/example/loopback)

# Go's flag package takes -x and --x alike.
"$work/bin/bench" -memfs "$work/bin/memfs" -loopback "$work/bin/loopback" -work "$work/run" -rev "$rev" ${args[@]+"${args[@]}"}
