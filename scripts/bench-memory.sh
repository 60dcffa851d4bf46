#!/usr/bin/env bash
# Resident memory of a memfs mount process (VmHWM: peak, VmRSS: now, from
# /proc/PID/status) for these workloads, each on a fresh store (STORE=dir, the
# default, or badger; badger refuses values over 256 MiB, so the 1 GiB
# file needs dir):
#   1GiB:      one 1 GiB file written with dd and fsynced (--max-file-size raised)
#   1GiBclose: the same, closed before its fsync (recorded in the journal)
#   16x60MB:   sixteen parallel writers of 60 MB each (the default limit), fsynced
# "idle" is VmRSS 10 s after the last fsync returned, "idle_anon" its
# RssAnon (without the store's mapped files: badger maps its value log).
# Usage: [STORE=dir|badger] [ONLY='1GiB 1GiBclose 16x60MB'] scripts/bench-memory.sh [extra mount flags...]
# MEMFS_BIN picks the binary (default: built from this tree).
set -euo pipefail
bin=${MEMFS_BIN:-$(cd "$(dirname "$0")/.." && go build -o /tmp/memfs-bench-mem ./cmd/memfs && echo /tmp/memfs-bench-mem)}
extra=("$@")
kind=${STORE:-dir}
only=${ONLY:-1GiB 16x60MB}

rss() { awk -v k="$2:" '$1 == k { print int($2 / 1024) }' /proc/$1/status; }

run() {
  local name=$1; shift
  local base; base=$(mktemp -d)
  mkdir $base/mnt
  $bin mount --store $kind:$base/store --flush-interval 0 --max-file-size $((1100 << 20)) "${extra[@]}" $base/mnt >$base/log 2>&1 &
  local pid=$!
  for _ in $(seq 300); do [ -e $base/mnt/.memfs/status ] && break; sleep 0.1; done
  "$@" $base/mnt
  local peak; peak=$(rss $pid VmHWM)
  sleep 10
  local idle; idle=$(rss $pid VmRSS)
  local anon; anon=$(rss $pid RssAnon)
  # Everything reads back (and pages the values in again, if dropped).
  local sum; sum=$(cat $base/mnt/w/* | md5sum | cut -c1-8)
  local after; after=$(rss $pid VmHWM)
  echo "$name $kind peak_MiB=$peak idle_MiB=$idle idle_anon_MiB=$anon peak_after_read_MiB=$after md5=$sum"
  kill -TERM $pid; wait $pid || true
  rm -rf $base
}

one_gib() {
  mkdir $1/w
  dd if=/dev/urandom of=$1/w/big bs=1M count=1024 conv=fsync status=none
}

# The same file closed before its fsync: the close records it in the
# crash journal first.
one_gib_close() {
  mkdir $1/w
  dd if=/dev/urandom of=$1/w/big bs=1M count=1024 status=none
  sync $1/w/big
}

sixteen() {
  mkdir $1/w
  local pids=()
  for i in $(seq 16); do
    dd if=/dev/urandom of=$1/w/f$i bs=1M count=60 conv=fsync status=none &
    pids+=($!)
  done
  wait "${pids[@]}"
}

for w in $only; do
  case $w in
  1GiB) run 1GiB one_gib ;;
  1GiBclose) run 1GiB-close one_gib_close ;;
  16x60MB) run 16x60MB sixteen ;;
  esac
done
