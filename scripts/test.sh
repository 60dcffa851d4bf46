#!/usr/bin/env bash
# Runs every test of memfs: vet, the unit and conformance tests with the
# race detector, the kernel mount tests (once more with GOMAXPROCS=1, where
# some deadlocks only show), and the end-to-end script with real tools.
# Installs what the tests need (fuse3, vim, inotify-tools, python3) when
# missing. Run from anywhere: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "not gofmt'd:"; echo "$unformatted"; exit 1
fi

echo "== go test -race ./..."
go test -race -count=1 ./...

echo "== mount tests with GOMAXPROCS=1"
GOMAXPROCS=1 go test -count=1 ./fsnode/ ./cmd/memfs/

echo "== scripts/mount-test.sh"
scripts/mount-test.sh
