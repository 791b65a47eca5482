#!/usr/bin/env bash
# Builds the kubelet API attack suite's TLS peer (peers/tlspeer: a client that presents any
# certificate and key, and an oracle of upstream's client certificate checks; standard library
# only, a few seconds) into the peers cache, keyed by a hash of its sources, and prints the binary's
# path on stdout. Nothing here ships.
#
#   bash scripts/tls_peer.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
src="$here/peers/tlspeer"
cache_root=${KUBELET_TS_PEERS_CACHE:-/var/cache/kubelet-ts/peers}
sum=$(cat "$src/go.mod" "$src"/*.go | sha256sum | cut -c1-12)
out="$cache_root/tlspeer-$sum/tlspeer"
if [ ! -x "$out" ]; then
  mkdir -p "$(dirname "$out")"
  printf '[tls-peer] building %s\n' "$out" >&2
  (cd "$src" && GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 \
    go build -trimpath -o "$out.tmp.$$" .)
  mv "$out.tmp.$$" "$out"
fi
printf '%s\n' "$out"
