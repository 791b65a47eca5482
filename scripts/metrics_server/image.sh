#!/usr/bin/env bash
# Packs the metrics-server peer (scripts/peers.sh metrics-server) as a one-layer image and
# pushes it to the local registry of scripts/cri_env.sh, the way scripts/conformance/images.sh
# builds its images; prints the image reference on stdout.
#
#   bash scripts/metrics_server/image.sh <metrics-server binary>
#
# Needs the shared containerd and registry up (scripts/cri_env.sh up). An image already in
# the registry is left alone.
set -euo pipefail

binary=${1:?usage: image.sh <metrics-server binary>}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
registry=127.0.0.1:5000
sock=${KTS_CRI_ROOT:-/tmp/kts-cri}/containerd.sock
# A namespace of its own in the shared containerd: no kubelet sees this copy.
ns=kts-metrics-server
work=$(mktemp -d /tmp/kts-metrics-server-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

kts_log() { printf 'metrics-server image: %s\n' "$*" >&2; }
kts_die() {
  printf 'metrics-server image: error: %s\n' "$*" >&2
  exit 1
}
# shellcheck source=../cri_env/build_image.sh
. "$here/../cri_env/build_image.sh"

[ -x "$binary" ] || kts_die "no metrics-server at $binary: run bash scripts/peers.sh metrics-server"
[ -S "$sock" ] || kts_die "no containerd at $sock: run bash scripts/cri_env.sh up"
curl -s -o /dev/null "http://$registry/v2/" || kts_die "no registry on $registry: run bash scripts/cri_env.sh up"

# The tag names the binary's content, so a rebuilt peer is a new image.
tag=$(sha256sum "$binary" | cut -c1-12)
repo=kts/metrics-server
ref=$registry/$repo:$tag
if curl -sf -o /dev/null -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
  "http://$registry/v2/$repo/manifests/$tag"; then
  echo "$ref"
  exit 0
fi
mkdir -p "$work/img/rootfs/tmp"
chmod 1777 "$work/img/rootfs/tmp"
cp "$binary" "$work/img/rootfs/metrics-server"
# upstream's image runs as 65534 (distroless nonroot), with /metrics-server as its entrypoint
kts_pack_image "$work/img" "$ref" "$work/img.tar" '["/metrics-server"]' null 65534:65534
ctr() { command ctr -a "$sock" -n "$ns" "$@"; }
ctr images import --all-platforms "$work/img.tar" >/dev/null
ctr images push --plain-http "$ref" >/dev/null
ctr images rm "$ref" >/dev/null
kts_log "pushed $ref"
echo "$ref"
