#!/usr/bin/env bash
# image-context.sh DIST OUT: the container image's build context, from a
# release's dist/ directory (GoReleaser's output): the Dockerfile, the
# linux/amd64 and linux/arm64 binaries as bin/<arch>/payability (whichever
# dist holds; at least one), the CA bundle of this machine (CA_BUNDLE, default
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
n=0
for arch in amd64 arm64; do
  # GoReleaser's build directory: payability_linux_amd64_v1, payability_linux_arm64_v8.0, …
  for d in "$dist"/payability_linux_"$arch"*; do
    [ -x "$d/payability" ] || continue
    mkdir -p "$out/bin/$arch"
    cp "$d/payability" "$out/bin/$arch/payability"
    n=$((n + 1))
    break
  done
done
[ "$n" -gt 0 ] || { echo "image-context.sh: no linux binary in $dist (run tools/release/snapshot.sh)" >&2; exit 1; }
