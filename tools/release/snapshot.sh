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
"$GORELEASER" release --snapshot --clean --release-notes "$notes" "$@"
