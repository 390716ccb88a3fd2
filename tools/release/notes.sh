#!/usr/bin/env bash
# notes.sh VERSION: CHANGELOG.md's section for VERSION (1.2.3, v1.2.3 or
# Unreleased), without its heading: the release notes of that release.
# Exit 1 when CHANGELOG.md has no such section or it is empty.
set -euo pipefail
v="${1:?usage: notes.sh VERSION}"
v="${v#v}"
root=$(cd "$(dirname "$0")/../.." && pwd)
notes=$(awk -v want="## [$v]" '
  index($0, "## [") == 1 { if (on) exit; if (index($0, want) == 1) { on = 1; next } }
  on { print }
' "$root/CHANGELOG.md")
if ! grep -q '[^[:space:]]' <<<"$notes"; then
  echo "notes.sh: CHANGELOG.md has no section ## [$v] with content" >&2
  exit 1
fi
printf '%s\n' "$notes"
