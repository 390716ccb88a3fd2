#!/usr/bin/env bash
# install.sh resolve | install: how the GitHub Action gets payability
# (action.yml; docs/ci.md, "How the Action installs payability").
#
#   resolve  picks the version and the way: a release tag (vX.Y.Z, or the
#            moving vX tag, read as the version its source names) whose
#            release has checksums.txt → "release"; any other ref (a branch,
#            a commit, a tag with no release) → "go" (go install), said in
#            the log. Writes version, mode, archive and cache-dir to
#            $GITHUB_OUTPUT.
#   install  "release": downloads the archive for this runner's OS and arch
#            (unless the cache directory holds it), verifies it against the
#            release's checksums.txt (SHA-256) and refuses it on a mismatch,
#            unpacks payability and, beside it, payabilityd (the full build it
#            hands serve, monitor, mcp, ledger and store to, so a later
#            `payability serve` in the job works) and puts them on PATH
#            ($GITHUB_PATH).
#            "go": go install github.com/exchangerebel/payability/cmd/payability@REF
#            (the full build, every command in one binary).
#
# Environment: PAYABILITY_VERSION (the action's version input), ACTION_REF
# (github.action_ref), RUNNER_OS (Linux, macOS, Windows), RUNNER_ARCH (X64,
# ARM64), RUNNER_TOOL_CACHE, RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_PATH,
# GITHUB_ACTION_PATH; PAYABILITY_RELEASES is the releases' base URL (default
# https://github.com/exchangerebel/payability/releases; tests point it at a
# loopback server); install reads MODE, VERSION, ARCHIVE, CACHE_DIR (the
# outputs of resolve).
set -euo pipefail

module=github.com/exchangerebel/payability/cmd/payability
releases="${PAYABILITY_RELEASES:-https://github.com/exchangerebel/payability/releases}"
here=$(cd "$(dirname "$0")" && pwd)
source_dir="${GITHUB_ACTION_PATH:-$here/../..}"

fail() { echo "::error title=payability install::$1"; exit 2; }
notice() { echo "::notice title=payability install::$1"; }

case "$releases" in
  https://*) ;;
  http://127.0.0.1[:/]* | http://localhost[:/]* | "http://[::1]"[:/]*) ;; # a loopback test server
  *) fail "PAYABILITY_RELEASES must be an https URL" ;;
esac

fetch() { # fetch URL FILE: 0 fetched, 1 not found (404), else fail
  local code
  code=$(curl -sS -L --proto '=https,http' --retry 3 --retry-connrefused --max-time 120 \
    -o "$2" -w '%{http_code}' "$1") || fail "download failed: $(basename "$1")"
  case "$code" in
    200) return 0 ;;
    404) rm -f "$2"; return 1 ;;
    *) rm -f "$2"; fail "download of $(basename "$1") answered HTTP $code" ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

platform() { # sets plat, the release's GOOS_GOARCH for this runner, or fails
  local os arch
  case "${RUNNER_OS:-}" in
    Linux) os=linux ;; macOS) os=darwin ;; Windows) os=windows ;;
    *) fail "no release archive for runner OS '${RUNNER_OS:-}' (Linux, macOS or Windows)" ;;
  esac
  case "${RUNNER_ARCH:-}" in
    X64) arch=amd64 ;; ARM64) arch=arm64 ;;
    *) fail "no release archive for runner arch '${RUNNER_ARCH:-}' (X64 or ARM64)" ;;
  esac
  plat="${os}_${arch}"
}

output() { echo "$1=$2" >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"; }

# source_version: the version the action's own source names
# (internal/buildinfo Version, which the release process keeps equal to the tag).
source_version() {
  sed -n 's/^var Version = "\([0-9][0-9A-Za-z.+-]*\)"$/\1/p' "$source_dir/internal/buildinfo/buildinfo.go" | head -n1
}

resolve() {
  local ref="${PAYABILITY_VERSION:-${ACTION_REF:-}}"
  [ -n "$ref" ] || ref=latest
  [[ "$ref" =~ ^[A-Za-z0-9][A-Za-z0-9._/+-]*$ ]] || fail "version must be a tag, a commit or latest"
  local version=""
  if [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
    version="$ref"
  elif [[ "$ref" =~ ^v([0-9]+)$ ]]; then
    # the moving major tag: the release it points at is the version of its source
    local sv; sv=$(source_version)
    if [ -n "$sv" ] && [ "${sv%%.*}" = "${BASH_REMATCH[1]}" ]; then version="v$sv"; fi
  fi
  local plat; platform
  if [ -n "$version" ]; then
    local archive="payability_${version#v}_${plat}.tar.gz"
    [[ "$plat" == windows_* ]] && archive="payability_${version#v}_${plat}.zip"
    local dir="${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/payability/${version}/${plat}"
    mkdir -p "$dir"
    if fetch "$releases/download/$version/checksums.txt" "$dir/checksums.txt.new"; then
      mv "$dir/checksums.txt.new" "$dir/checksums.txt"
      output mode release; output version "$version"; output archive "$archive"; output cache-dir "$dir"
      echo "payability $version: release archive $archive"
      return
    fi
    notice "$ref has no release (no checksums.txt at $releases/download/$version/): building it with go install, which takes minutes"
  else
    notice "$ref is not a release tag (vX.Y.Z or vX): building it with go install, which takes minutes; pin a release tag to download instead"
  fi
  output mode go; output version "$ref"; output archive ""; output cache-dir ""
}

install_release() {
  local version="${VERSION:?}" archive="${ARCHIVE:?}" dir="${CACHE_DIR:?}"
  local want
  want=$(awk -v f="$archive" '$2 == f { print $1 }' "$dir/checksums.txt")
  [[ "$want" =~ ^[0-9a-f]{64}$ ]] || fail "checksums.txt of $version does not list $archive"
  if [ -f "$dir/$archive" ] && [ "$(sha256 "$dir/$archive")" = "$want" ]; then
    echo "payability $version: $archive from the cache, SHA-256 verified"
  else
    rm -f "$dir/$archive"
    fetch "$releases/download/$version/$archive" "$dir/$archive.part" || fail "release $version has no $archive"
    local got; got=$(sha256 "$dir/$archive.part")
    if [ "$got" != "$want" ]; then
      rm -f "$dir/$archive.part"
      fail "$archive does not match checksums.txt of $version (SHA-256 $got, want $want): refused"
    fi
    mv "$dir/$archive.part" "$dir/$archive"
    echo "payability $version: downloaded $archive, SHA-256 verified"
  fi
  local bin="$dir/bin" names=(payability payabilityd) n
  [[ "$archive" == *.zip ]] && names=(payability.exe payabilityd.exe)
  rm -rf "$bin"; mkdir -p "$bin"
  case "$archive" in
    *.zip) if command -v unzip >/dev/null 2>&1; then unzip -q -o "$dir/$archive" "${names[@]}" -d "$bin" || true
           else tar -xf "$dir/$archive" -C "$bin" "${names[@]}" || true; fi ;;
    *) tar -xzf "$dir/$archive" -C "$bin" "${names[@]}" || true ;;
  esac
  for n in "${names[@]}"; do
    if [ ! -s "$bin/$n" ]; then
      rm -rf "$bin"
      fail "$archive of $version holds no $n"
    fi
    chmod 0755 "$bin/$n"
  done
  echo "$bin" >> "${GITHUB_PATH:?GITHUB_PATH is not set}"
}

install_go() {
  local ref="${VERSION:?}"
  command -v go >/dev/null 2>&1 || fail "go is not on PATH for go install"
  go install "$module@$ref"
  echo "$(go env GOPATH)/bin" >> "${GITHUB_PATH:?GITHUB_PATH is not set}"
}

case "${1:-}" in
  resolve) resolve ;;
  install)
    case "${MODE:-}" in
      release) install_release ;;
      go) install_go ;;
      *) fail "install needs MODE release or go (the output of resolve)" ;;
    esac ;;
  *) echo "usage: install.sh resolve | install" >&2; exit 2 ;;
esac
