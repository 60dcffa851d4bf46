#!/usr/bin/env bash
# History at 100,000 keys (BENCHMARKS.md, "History: snapshot create and
# mount at 100,000 keys"): for each badger store given, ROUNDS times,
# interleaved: the time `memfs mount` takes until .memfs/status answers,
# the mount's RSS then (VmRSS, VmHWM, RssAnon from /proc/PID/status), and
# the time of `mkdir .memfs/snapshots/NAME` (a snapshot) with nothing
# pending and with one file written and not flushed.
# Build the stores with TestBuildHistoryBenchStore (cmd/memfs), e.g.
#   MEMFS_HISTBENCH_DIR=/tmp/s1 go test -run TestBuildHistoryBenchStore -timeout 1h ./cmd/memfs/
#   MEMFS_HISTBENCH_DIR=/tmp/s5 MEMFS_HISTBENCH_VERSIONS=5 go test -run TestBuildHistoryBenchStore -timeout 1h ./cmd/memfs/
# Usage: [ROUNDS=3] scripts/bench-history.sh STOREDIR...
# MEMFS_BIN picks the binary (default: built from this tree).
set -euo pipefail
bin=${MEMFS_BIN:-$(cd "$(dirname "$0")/.." && go build -o /tmp/memfs-bench-hist ./cmd/memfs && echo /tmp/memfs-bench-hist)}
rounds=${ROUNDS:-3}
ms() { echo $(( ($2 - $1) / 1000000 )); }
rss() { awk -v k="$2:" '$1 == k { print int($2 / 1024) }' /proc/$1/status; }
for r in $(seq $rounds); do
  for s in "$@"; do
    mnt=$(mktemp -d)
    t0=$(date +%s%N)
    $bin mount --store badger:$s --flush-interval 0 $mnt >$mnt.log 2>&1 &
    pid=$!
    until [ -e $mnt/.memfs/status ]; do sleep 0.01; done
    t1=$(date +%s%N)
    echo "round $r $(basename $s) mount_ms=$(ms $t0 $t1) rss_MiB=$(rss $pid VmRSS) hwm_MiB=$(rss $pid VmHWM) anon_MiB=$(rss $pid RssAnon)"
    for i in 1 2 3; do
      a=$(date +%s%N); mkdir $mnt/.memfs/snapshots/bench-r$r-$i; b=$(date +%s%N)
      echo "round $r $(basename $s) snapshot_ms=$(ms $a $b) pending=0"
    done
    echo "one more line" > $mnt/notes/d000/n000000.md
    a=$(date +%s%N); mkdir $mnt/.memfs/snapshots/bench-r$r-p; b=$(date +%s%N)
    echo "round $r $(basename $s) snapshot_ms=$(ms $a $b) pending=1"
    for i in 1 2 3; do rmdir $mnt/.memfs/snapshots/bench-r$r-$i; done
    rmdir $mnt/.memfs/snapshots/bench-r$r-p
    kill -TERM $pid; wait $pid || true
    rmdir $mnt; rm -f $mnt.log
  done
done
