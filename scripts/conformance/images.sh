#!/usr/bin/env bash
# Builds the images upstream's [NodeConformance] tests run and pushes them to the local
# registry of scripts/cri_env.sh, under the names scripts/conformance/repo-list.yaml maps
# the suite's registries to. docs/conformance.md says how faithful each one is.
#
#   bash scripts/conformance/images.sh <e2e bin dir>   (from scripts/peers.sh build-e2e)
#
# Needs the shared containerd and registry up (scripts/cri_env.sh up), gcc and busybox-static.
# An image already in the registry is left alone; KTS_CONFORMANCE_REBUILD=1 pushes again.
set -euo pipefail

e2e_bin=${1:?usage: images.sh <e2e bin dir>}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
registry=127.0.0.1:5000
sock=${KTS_CRI_ROOT:-/tmp/kts-cri}/containerd.sock
# A namespace of its own in the shared containerd: no kubelet sees these copies.
ns=kts-conformance
work=$(mktemp -d /tmp/kts-conformance-images.XXXXXX)
trap 'rm -rf "$work"' EXIT

kts_log() { printf 'conformance images: %s\n' "$*" >&2; }
kts_die() {
  printf 'conformance images: error: %s\n' "$*" >&2
  exit 1
}
# shellcheck source=../cri_env/build_image.sh
. "$here/../cri_env/build_image.sh"

[ -x "$e2e_bin/agnhost" ] || kts_die "no agnhost in $e2e_bin: run bash scripts/peers.sh build-e2e"
[ -S "$sock" ] || kts_die "no containerd at $sock: run bash scripts/cri_env.sh up"
curl -s -o /dev/null "http://$registry/v2/" || kts_die "no registry on $registry: run bash scripts/cri_env.sh up"

pushed() { # repo tag
  curl -sf -o /dev/null -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$registry/v2/$1/manifests/$2"
}

# Each rootfs_<name> fills the directory $1.
rootfs_busybox() { kts_busybox_rootfs "$1"; }
rootfs_agnhost() {
  kts_busybox_rootfs "$1"
  cp "$e2e_bin/agnhost" "$1/agnhost"
  ln -s agnhost "$1/agnhost-2"
  mkdir -p "$1/uploads" "$1/usr/bin"
  # Upstream's image has curl; the network tests exec `curl -g -q -s <url>` in it. This
  # stand-in fetches the URL with busybox wget (docs/conformance.md).
  printf '%s\n' '#!/bin/sh' 'url=' 'for a in "$@"; do case "$a" in -*) ;; *) url=$a ;; esac; done' \
    'exec wget -q -O - "$url"' >"$1/usr/bin/curl"
  chmod 755 "$1/usr/bin/curl"
  # Upstream's image carries a test serving pair for `netexec --tls-cert-file /localhost.crt`
  # (the HTTPS lifecycle hook tests); this one is made here, self-signed.
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$1/localhost.key" -out "$1/localhost.crt" 2>/dev/null
  # The user and group upstream's image defines (supplemental group tests read them).
  printf 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n' >>"$1/etc/passwd"
  printf 'user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n' \
    >>"$1/etc/group"
}
rootfs_pause() {
  mkdir -p "$1"
  gcc -static -Os -Wall -Werror -o "$1/pause" "$here/pause.c"
}
rootfs_nonewprivs() {
  kts_busybox_rootfs "$1"
  mkdir -p "$1/usr/local/bin"
  gcc -static -Os -Wall -Werror -o "$1/usr/local/bin/nnp" "$here/nnp.c"
  chmod 4755 "$1/usr/local/bin/nnp"
}

# repo tag rootfs entrypoint cmd [user]
images=(
  "e2e-test-images/agnhost 2.56 agnhost [\"/agnhost\"] [\"pause\"]"
  "e2e-test-images/busybox 1.37.0-1 busybox null [\"sh\"]"
  "e2e-test-images/nonroot 1.4 busybox null [\"/bin/sh\"] 1234"
  "e2e-test-images/nonewprivs 1.3 nonewprivs null [\"nnp\"]"
  "pause 3.10.1 pause [\"/pause\"] null 65535:65535"
)

ctr_() { ctr -a "$sock" -n "$ns" "$@"; }
for line in "${images[@]}"; do
  read -r repo tag rootfs entrypoint cmd user <<<"$line"
  if [ "${KTS_CONFORMANCE_REBUILD:-0}" != 1 ] && pushed "$repo" "$tag"; then
    continue
  fi
  ref=$registry/$repo:$tag
  rm -rf "$work/img" && mkdir -p "$work/img"
  "rootfs_$rootfs" "$work/img/rootfs"
  kts_pack_image "$work/img" "$ref" "$work/img.tar" "$entrypoint" "$cmd" "${user:-}"
  ctr_ images import --all-platforms "$work/img.tar" >/dev/null
  ctr_ images push --plain-http "$ref" >/dev/null
  ctr_ images rm "$ref" >/dev/null
  kts_log "pushed $ref"
done
