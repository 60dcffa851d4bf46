#!/usr/bin/env bash
# Whole-filesystem benchmark: the same workloads (ls -lR, find, cold and
# warm reads, grep -r, creating files until durable) on a native directory
# and on memfs with the dir and the badger store, targets interleaved over
# N rounds; prints a markdown table of medians, min-max and the ratio to
# native. The work is done by the Go program in bench/ (see bench/main.go).
#
#   scripts/bench.sh [--quick] [-rounds N] [-files N] [-o FILE] [-targets native,dir,badger]
#                    [-memfs-args '--debug'] [-keep]
#
# --quick: 2 rounds of 2,000 files (under a minute). Default: 5 rounds of
# 10,000 files. Needs root (the cold read drops the kernel caches). Every
# mount it makes is unmounted, also on failure or interrupt; only the memfs
# processes it started are stopped, by pid.
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
# Safety net if the bench program itself dies: stop the memfs processes it
# recorded (only those running our memfs binary), detach mounts left under
# $work, then remove $work (never while something is still mounted there).
cleanup() {
	local pid m i
	if [ -f "$work/run/pids" ]; then
		while read -r pid; do
			[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$work/bin/memfs" ] || continue
			kill -TERM "$pid" 2>/dev/null || true
			for ((i = 0; i < 300; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$work/bin/memfs" ]; then
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

(cd "$repo" && go build -o "$work/bin/memfs" ./cmd/memfs && go build -o "$work/bin/bench" ./bench &&
	go build -o "$work/bin/loopback" github.com/hanwen/go-fuse/v2/example/loopback)
rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$repo" diff --quiet HEAD 2>/dev/null || rev="$rev+changes"

for a in "$@"; do case $a in -keep | --keep) keep=1 ;; esac; done
# Go's flag package takes -x and --x alike.
"$work/bin/bench" -memfs "$work/bin/memfs" -loopback "$work/bin/loopback" -work "$work/run" -rev "$rev" "$@"
