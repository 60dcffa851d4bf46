#!/usr/bin/env bash
# Mount time and resident memory of a badger store of many keys, right after
# `memfs import` (issue 31: mount of 100,000 keys <= 1 s, VmRSS <= 100 MiB,
# VmHWM <= 150 MiB, on each of the first mounts after an import).
#
# Writes a tree of KEYS files of 1-4 KiB of text in KEYS/100 directories
# (as bench.sh's mount phase does), imports it with `memfs import` into a
# fresh badger store, then mounts the store MOUNTS times in a row
# (--flush-interval 0; the kernel's caches dropped before each mount when
# run as root). For each mount it prints:
#   mount_s    time from start until .memfs/status answers with the PID
#   rss/hwm    VmRSS and VmHWM (MiB) at that moment
#   anon/file  RssAnon and RssFile (MiB) at that moment
#   rss_late, hwm_late, anon_late, file_late: the same SETTLE seconds later
#              (badger compacts a freshly imported store in the background
#              after the mount is ready: the late figures catch that)
# then unmounts with SIGTERM (memfs flushes and exits 0).
#
#   cpu_s      the process's user + system CPU time until then (the
#              machine is shared: wall time waits for the CPU, cpu_s does not)
# Usage: [KEYS=100000] [MOUNTS=3] [SETTLE=5] [TREE=dir] [KEEP=1] [SAVE=dir] [FROM=dir]
#        scripts/bench-mount.sh [extra mount flags...]
# TREE reuses a tree written by an earlier run (it is kept under $TMPDIR
# as memfs-mount-tree-KEYS otherwise, and reused). MEMFS_BIN picks the
# binary (default: built from this tree). KEEP=1 keeps the store. SAVE
# copies the store right after the import to dir; FROM copies dir instead of
# importing (to compare builds or mount options on one imported store).
# Only processes this script starts are stopped, by PID; the mountpoint is
# unmounted on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${MEMFS_BIN:-$(cd "$here" && go build -o /tmp/memfs-bench-mount ./cmd/memfs && echo /tmp/memfs-bench-mount)}
keys=${KEYS:-100000}
mounts=${MOUNTS:-3}
settle=${SETTLE:-5}
tree=${TREE:-${TMPDIR:-/tmp}/memfs-mount-tree-$keys}
extra=("$@")

base=$(mktemp -d)
mnt=$base/mnt
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" || true
		wait "$pid" || true
	fi
	if mountpoint -q "$mnt" 2>/dev/null; then fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" || true; fi
	if [ "${KEEP:-}" = 1 ]; then echo "store kept: $base/store" >&2; else rm -rf "$base"; fi
}
trap cleanup EXIT
mkdir "$mnt"

if [ ! -e "$tree.done" ]; then
	rm -rf "$tree"
	python3 - "$tree" "$keys" <<'EOF'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
dirs = max(1, n // 100)
r = random.Random(4)
words = "the a memory note agent tool file key value store mount write read flush event log history".split()
for d in range(dirs):
    os.makedirs(os.path.join(root, "m%04d" % d), exist_ok=True)
for i in range(n):
    size = 1024 + r.randrange(3073)
    out, l = [], 0
    while l < size:
        w = r.choice(words)
        out.append(w)
        l += len(w) + 1
    data = (" ".join(out)[:size - 1] + "\n").encode()
    with open(os.path.join(root, "m%04d" % (i % dirs), "k%06d.md" % i), "wb") as f:
        f.write(data)
open(root + ".done", "w").close()
EOF
	echo "wrote $keys files under $tree" >&2
fi

mem() { awk -v k="$2:" '$1 == k { printf "%.1f", $2 / 1024 }' /proc/$1/status; }

cpu() { awk '{ printf "%.2f", ($14 + $15) / 100 }' /proc/$1/stat; }

if [ -n "${FROM:-}" ]; then
	cp -a "$FROM" "$base/store"
	echo "store copied from $FROM"
else
	mkdir "$base/store"
	t0=$(date +%s.%N)
	"$bin" import --store "badger:$base/store" "$tree" >"$base/import.log" 2>&1 || { cat "$base/import.log" >&2; exit 1; }
	t1=$(date +%s.%N)
	printf 'import %d keys: %.1f s, store %s\n' "$keys" "$(echo "$t1 - $t0" | bc)" "$(du -sh "$base/store" | cut -f1)"
	if [ -n "${SAVE:-}" ]; then rm -rf "$SAVE"; cp -a "$base/store" "$SAVE"; fi
fi

for i in $(seq "$mounts"); do
	sync
	if [ "$(id -u)" = 0 ]; then echo 3 >/proc/sys/vm/drop_caches; fi
	t0=$(date +%s.%N)
	"$bin" mount --store "badger:$base/store" --flush-interval 0 "${extra[@]}" "$mnt" >"$base/mount$i.log" 2>&1 &
	pid=$!
	until grep -qs "^pid: $pid\$" "$mnt/.memfs/status"; do
		kill -0 "$pid" 2>/dev/null || { cat "$base/mount$i.log" >&2; exit 1; }
		sleep 0.01
	done
	t1=$(date +%s.%N)
	line=$(printf 'mount %d: mount_s=%.3f cpu_s=%s rss=%s hwm=%s anon=%s file=%s' "$i" "$(echo "$t1 - $t0" | bc)" "$(cpu $pid)" \
		"$(mem $pid VmRSS)" "$(mem $pid VmHWM)" "$(mem $pid RssAnon)" "$(mem $pid RssFile)")
	sleep "$settle"
	printf '%s rss_late=%s hwm_late=%s anon_late=%s file_late=%s\n' "$line" \
		"$(mem $pid VmRSS)" "$(mem $pid VmHWM)" "$(mem $pid RssAnon)" "$(mem $pid RssFile)"
	n=$(find "$mnt" -name '*.md' | wc -l)
	[ "$n" = "$keys" ] || { echo "mount $i: $n keys listed, want $keys" >&2; exit 1; }
	kill -TERM "$pid"
	wait "$pid" || { echo "mount $i: memfs exited $?" >&2; cat "$base/mount$i.log" >&2; exit 1; }
	pid=
done
