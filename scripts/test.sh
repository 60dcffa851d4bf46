#!/usr/bin/env bash
# Runs every test of memfs: vet, the unit and conformance tests with the
# race detector, the kernel mount tests (once more with GOMAXPROCS=1, where
# some deadlocks only show), and the end-to-end script with real tools.
# Installs what the tests need (fuse3, vim, inotify-tools, python3) when
# missing. Run from anywhere: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
# The etcd store's tests fail, not skip, without an etcd server.
export MEMFS_REQUIRE_ETCD=1
# The embedding tests that need the real table fail, not skip, without it.
export MEMFS_REQUIRE_MODEL=1

echo "== go vet"
go vet ./...

echo "== staticcheck"
"$(go env GOPATH)/bin/staticcheck" ./...

echo "== go mod tidy is a no-op"
cp go.mod /tmp/memfs-go.mod.$$; cp go.sum /tmp/memfs-go.sum.$$
go mod tidy
if ! cmp -s go.mod /tmp/memfs-go.mod.$$ || ! cmp -s go.sum /tmp/memfs-go.sum.$$; then
	echo "go mod tidy changed go.mod or go.sum:"; git diff -- go.mod go.sum
	cp /tmp/memfs-go.mod.$$ go.mod; cp /tmp/memfs-go.sum.$$ go.sum; rm -f /tmp/memfs-go.*.$$
	exit 1
fi
rm -f /tmp/memfs-go.*.$$

echo "== gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "not gofmt'd:"; echo "$unformatted"; exit 1
fi

echo "== go test -race ./..."
# cmd/memfs, the slowest package, took 972 s of these 30 minutes alone on
# a quiet 2-core machine (its kernel mount tests, history's kill -9 models).
go test -race -count=1 -timeout 30m ./...

echo "== mount tests with GOMAXPROCS=1, without the race detector"
# Some deadlocks only show on one CPU; and the tests too slow under -race
# (they say so when they skip there) run here, one test at a time (two at
# once, each memfs on one CPU, failed three timing-bound tests at load).
GOMAXPROCS=1 go test -count=1 -timeout 20m ./fsnode/ ./cmd/memfs/

echo "== scripts/mount-test.sh"
scripts/mount-test.sh
