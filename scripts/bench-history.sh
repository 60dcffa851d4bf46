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
# The snapshot's time is the mkdir(2) call's alone, timed inside one
# python3 process: timing `mkdir` between two `date` forks measured the
# forks (100-370 ms each at a load of 20-30) more than the snapshot.
# Usage: [ROUNDS=3] scripts/bench-history.sh [BIN=]STOREDIR...
# MEMFS_BIN picks the binary (default: built from this tree); BIN= before
# a store picks one for that store (e.g. a build from before history, for
# which no snapshot is timed: it has no .memfs/snapshots).
set -euo pipefail
bin=${MEMFS_BIN:-$(cd "$(dirname "$0")/.." && go build -o /tmp/memfs-bench-hist ./cmd/memfs && echo /tmp/memfs-bench-hist)}
rounds=${ROUNDS:-3}
ms() { echo $(( ($2 - $1) / 1000000 )); }
rss() { awk -v k="$2:" '$1 == k { print int($2 / 1024) }' /proc/$1/status; }
for r in $(seq $rounds); do
  for arg in "$@"; do
    b=$bin s=$arg
    case $arg in *=*) b=${arg%%=*} s=${arg#*=} ;; esac
    mnt=$(mktemp -d)
    t0=$(date +%s%N)
    $b mount --store badger:$s --flush-interval 0 $mnt >$mnt.log 2>&1 &
    pid=$!
    until [ -e $mnt/.memfs/status ]; do sleep 0.01; done
    t1=$(date +%s%N)
    echo "round $r $(basename $s) mount_ms=$(ms $t0 $t1) rss_MiB=$(rss $pid VmRSS) hwm_MiB=$(rss $pid VmHWM) anon_MiB=$(rss $pid RssAnon)"
    if [ -d $mnt/.memfs/snapshots ]; then
      python3 - $mnt $r $(basename $s) <<'PY'
import os, sys, time
mnt, r, name = sys.argv[1:]
snaps = os.path.join(mnt, ".memfs/snapshots")
def mkdir(n):
    t = time.perf_counter(); os.mkdir(os.path.join(snaps, n)); return (time.perf_counter() - t) * 1000
for i in range(1, 4):
    print(f"round {r} {name} snapshot_ms={mkdir(f'bench-r{r}-{i}'):.1f} pending=0")
with open(os.path.join(mnt, "notes/d000/n000000.md"), "a") as f:
    f.write("one more line\n")
print(f"round {r} {name} snapshot_ms={mkdir(f'bench-r{r}-p'):.1f} pending=1")
for n in [f"bench-r{r}-{i}" for i in (1, 2, 3)] + [f"bench-r{r}-p"]:
    os.rmdir(os.path.join(snaps, n))
PY
    fi
    echo "round $r $(basename $s) load=$(cut -d' ' -f1 /proc/loadavg)"
    kill -TERM $pid; wait $pid || true
    rmdir $mnt; rm -f $mnt.log
  done
done
