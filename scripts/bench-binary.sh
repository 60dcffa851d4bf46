#!/usr/bin/env bash
# 256 MiB of random bytes (binary: NULs) written and fsynced through a memfs
# mount, with redaction (masking in place) and with --no-redact, 3 rounds
# interleaved; prints seconds per run.
set -euo pipefail
bin=${MEMFS_BIN:-$(cd "$(dirname "$0")/.." && go build -o /tmp/memfs-bench-bin ./cmd/memfs && echo /tmp/memfs-bench-bin)}
src=/tmp/bin256
[ -f $src ] || head -c $((256<<20)) /dev/urandom > $src
for round in 1 2 3; do
  for mode in redact no-redact; do
    store=$(mktemp -d); mnt=$(mktemp -d)
    extra=(); [ $mode = no-redact ] && extra=(--no-redact)
    $bin mount --store dir:$store --flush-interval 0 --max-file-size 300000000 "${extra[@]}" $mnt >/tmp/binbench.log 2>&1 &
    pid=$!
    for i in $(seq 50); do [ -e $mnt/.memfs/status ] && break; sleep 0.1; done
    t0=$(date +%s.%N)
    python3 - "$src" "$mnt/blob.bin" <<'PY'
import os, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, 'rb').read()
fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
off = 0
while off < len(data):
    off += os.write(fd, data[off:off + (1 << 20)])
os.fsync(fd)
os.close(fd)
PY
    t1=$(date +%s.%N)
    echo "$round $mode $(echo "$t1 - $t0" | bc)"
    kill -TERM $pid; wait $pid || true
    rm -rf $store $mnt
  done
done
