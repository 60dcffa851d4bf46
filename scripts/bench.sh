#!/usr/bin/env bash
# Whole-filesystem benchmark: the same workloads on a native directory and
# on memfs with each store, interleaved, N rounds; prints medians, min-max
# and the ratio to native as a markdown table.
#
#   scripts/bench.sh [--quick] [--rounds N] [--files N] [-o FILE]
#
# Needs root (to drop the page cache for the cold read). Every mount it
# makes is unmounted, also on failure; only the memfs processes it started
# are stopped.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5 files=10000 out=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) rounds=2 files=2000 ;;
	--rounds) rounds=$2; shift ;;
	--files) files=$2; shift ;;
	-o) out=$2; shift ;;
	*) echo "usage: $0 [--quick] [--rounds N] [--files N] [-o FILE]" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "bench.sh needs root (it drops the page cache)" >&2; exit 1; }
scripts/install-deps.sh

work=$(mktemp -d /var/tmp/memfs-bench.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for m in "$work"/*-mnt; do
		grep -qF " $m " /proc/self/mountinfo 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/memfs" ./cmd/memfs
memfs=$work/memfs

# The tree: $files files of 1-4 KiB of text in 100 directories.
python3 - "$work/src" "$files" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
words = "memory agent note skill tool context recall grep vector token deploy review kernel".split()
for i in range(n):
    d = os.path.join(root, "d%03d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    size = random.randint(1024, 4096)
    text = []
    while sum(map(len, text)) < size:
        text.append(" ".join(random.choice(words) for _ in range(10)) + "\n")
    open(os.path.join(d, "f%05d.md" % i), "w").write("".join(text)[:size])
PY

now() { date +%s.%N; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# mount_memfs KIND: (re)mounts the KIND store at $work/KIND-mnt; sets mpid.
mount_memfs() {
	local kind=$1 mnt=$work/$1-mnt i
	mkdir -p "$mnt"
	"$memfs" mount --store "$kind:$work/$kind-store" --flush-interval 0 "$mnt" >>"$work/$kind.log" 2>&1 &
	mpid=$!
	pids+=("$mpid")
	for ((i = 0; i < 200; i++)); do
		[ -r "$mnt/.memfs/status" ] && return 0
		sleep 0.05
	done
	echo "memfs $kind did not mount" >&2; tail "$work/$kind.log" >&2; exit 1
}
unmount_memfs() { # waits for the final flush: memfs exits after it
	kill -TERM "$mpid"; wait "$mpid" || { echo "memfs exited non-zero" >&2; exit 1; }
}

declare -A T # T[target,workload] = space-separated seconds
record() { T[$1,$2]="${T[$1,$2]:-} $3"; }
timeit() { # TARGET WORKLOAD CMD...
	local t0 t1
	t0=$(now); "${@:3}" >/dev/null; t1=$(now)
	record "$1" "$2" "$(echo "$t1 - $t0" | bc -l)"
}
readall() { find "$1" -type f -name '*.md' -print0 | xargs -0 cat; }
create() { # DIR: $files new files in 100 directories
	python3 - "$1" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 2048
for i in range(n):
    d = os.path.join(root, "c%03d" % (i % 100))
    if i < 100:
        os.makedirs(d)
    with open(os.path.join(d, "n%05d.md" % i), "wb") as f:
        f.write(data)
PY
}

cp -a "$work/src" "$work/native"
for kind in dir badger; do "$memfs" import --store "$kind:$work/$kind-store" "$work/src" >/dev/null; done

targets=(native dir badger)
for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds" >&2
	for tg in "${targets[@]}"; do
		if [ "$tg" = native ]; then
			root=$work/native
			drop_caches
		else
			drop_caches
			mount_memfs "$tg"
			root=$work/$tg-mnt
		fi
		timeit "$tg" "read every file, cold" readall "$root"
		timeit "$tg" "read every file, warm" readall "$root"
		timeit "$tg" "ls -lR" ls -lR "$root"
		timeit "$tg" "find -printf %s" find "$root" -printf '%s\n'
		timeit "$tg" "grep -r (warm)" grep -rc memory "$root"
		t0=$(now)
		create "$root/new"
		t1=$(now)
		if [ "$tg" = native ]; then sync; else unmount_memfs; fi
		t2=$(now)
		record "$tg" "create $files files" "$(echo "$t1 - $t0" | bc -l)"
		record "$tg" "create $files files + durable" "$(echo "$t2 - $t0" | bc -l)"
		if [ "$tg" = native ]; then
			rm -rf "$root/new"
		else
			"$memfs" rm -r --store "$tg:$work/$tg-store" new >/dev/null
		fi
	done
done

stats() { # prints "median min max" of the numbers given
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m = (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.3f %.3f %.3f", m, a[1], a[NR]}'
}
workloads=("ls -lR" "find -printf %s" "read every file, cold" "read every file, warm" "grep -r (warm)"
	"create $files files" "create $files files + durable")
{
	echo "$(date -u +%F), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) vCPU, kernel $(uname -r), $(go version | cut -d' ' -f3)."
	echo "$files files of 1-4 KiB in 100 directories; medians of $rounds interleaved rounds, seconds (min-max), and the ratio to native."
	echo "Durable: native = sync(1); memfs = unmount (SIGTERM, final flush, exit)."
	echo
	echo "| workload | native | memfs dir | memfs badger |"
	echo "| --- | --- | --- | --- |"
	for w in "${workloads[@]}"; do
		read -r nm nlo nhi <<<"$(stats ${T[native,$w]})"
		row="| $w | $nm ($nlo-$nhi) |"
		for tg in dir badger; do
			read -r m lo hi <<<"$(stats ${T[$tg,$w]})"
			row="$row $m ($lo-$hi) x$(echo "$m / $nm" | bc -l | xargs printf '%.1f') |"
		done
		echo "$row"
	done
} | tee "${out:-/dev/null}"
