# Sourced by the release scripts: builds the pinned GoReleaser and syft with
# `go tool` (each in its own module, tools/release/goreleaser and
# tools/release/syft, so their dependency trees stay out of the main go.mod;
# nothing is installed globally) and puts them first on PATH.
# Sets: root (the repository), GORELEASER (its binary).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GORELEASER=$(go -C "$root/tools/release/goreleaser" tool -n goreleaser)
syft=$(go -C "$root/tools/release/syft" tool -n syft)
toolbin=$(mktemp -d "${TMPDIR:-/tmp}/payability-release-tools.XXXXXX")
ln -s "$syft" "$toolbin/syft"
PATH="$toolbin:$PATH"
export PATH
# syft: no update check (it would contact anchore's servers), no remote look-ups.
export SYFT_CHECK_FOR_APP_UPDATE=false
trap 'rm -rf "$toolbin"' EXIT
