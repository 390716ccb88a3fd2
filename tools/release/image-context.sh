#!/usr/bin/env bash
# image-context.sh DIST OUT: the container image's build context, from a
# release's dist/ directory (GoReleaser's output): the Dockerfile, the
# linux/amd64 and linux/arm64 binaries as bin/<arch>/payability (the quick
# build) and bin/<arch>/payabilityd (the full build, which serve, monitor and
# mcp are handed to), for whichever arches dist holds both (at least one),
# the CA bundle of this machine (CA_BUNDLE, default
# Debian's /etc/ssl/certs/ca-certificates.crt), /etc/passwd and /etc/group
# with one non-root user, and an empty /data. Nothing else goes in: no key,
# no store, no environment.
set -euo pipefail
dist="${1:?usage: image-context.sh DIST OUT}"
out="${2:?usage: image-context.sh DIST OUT}"
root=$(cd "$(dirname "$0")/../.." && pwd)
ca="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
[ -s "$ca" ] || { echo "image-context.sh: no CA bundle at $ca (apt-get install ca-certificates)" >&2; exit 1; }
[ -e "$out" ] && { echo "image-context.sh: $out exists" >&2; exit 1; }
mkdir -p "$out/rootfs/etc/ssl/certs" "$out/rootfs/data"
cp "$root/Dockerfile" "$out/Dockerfile"
cp "$root/tools/release/image/passwd" "$out/rootfs/etc/passwd"
cp "$root/tools/release/image/group" "$out/rootfs/etc/group"
cp "$ca" "$out/rootfs/etc/ssl/certs/ca-certificates.crt"
# built DIR-PREFIX NAME: the executable NAME in the first of GoReleaser's
# build directories DIR-PREFIX* (payability_linux_amd64_v1,
# payabilityd_linux_arm64_v8.0, …), or nothing.
built() {
  local d
  for d in "$1"*; do
    if [ -x "$d/$2" ]; then echo "$d/$2"; return; fi
  done
}
n=0
for arch in amd64 arm64; do
  quick=$(built "$dist/payability_linux_$arch" payability)
  full=$(built "$dist/payabilityd_linux_$arch" payabilityd)
  [ -z "$quick$full" ] && continue
  if [ -z "$quick" ] || [ -z "$full" ]; then
    echo "image-context.sh: $dist holds only one of payability and payabilityd for linux/$arch" >&2; exit 1
  fi
  mkdir -p "$out/bin/$arch"
  cp "$quick" "$out/bin/$arch/payability"
  cp "$full" "$out/bin/$arch/payabilityd"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "image-context.sh: no linux binary in $dist (run tools/release/snapshot.sh)" >&2; exit 1; }
