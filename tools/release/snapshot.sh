#!/usr/bin/env bash
# snapshot.sh: the whole release without publishing anything:
# `goreleaser release --snapshot --clean` into dist/ (six archives, checksums.txt,
# an SBOM per archive), with the CHANGELOG's Unreleased section as the notes.
# tools/release/release_test.go checks what it wrote (docs/release.md).
set -euo pipefail
source "$(dirname "$0")/tools.sh"
cd "$root"
notes=$(mktemp "${TMPDIR:-/tmp}/payability-notes.XXXXXX")
trap 'rm -rf "$toolbin" "$notes"' EXIT
tools/release/notes.sh Unreleased > "$notes"
# GoReleaser reads the commit only when the checkout names a remote; a clone
# has origin, a bare worktree may not: name one for this run only (git's
# environment configuration, nothing written to the repository).
if [ -z "$(git remote)" ]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/exchangerebel/payability.git
fi
"$GORELEASER" release --snapshot --clean --release-notes "$notes" "$@"
