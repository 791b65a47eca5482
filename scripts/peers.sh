#!/usr/bin/env bash
# Builds the test peers from Go modules at the versions pinned in peers/versions.env:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and the upstream kubelet
# (k8s.io/kubernetes through the wrapper module peers/k8s), etcd (peers/etcd) and crictl
# (peers/crictl), and our recording CRI proxy for the differential tests (peers/criproxy).
# Nothing here ships: the product has no Go in it.
#
#   bash scripts/peers.sh build   build what the cache lacks; prints the bin directory on stdout
#   bash scripts/peers.sh dir     print the bin directory (exit 1 when it is not complete)
#
# Binaries are cached outside the clone in $KUBELET_TS_PEERS_CACHE (default
# /var/cache/kubelet-ts/peers), in a folder keyed by the pinned versions and a hash of the
# peer modules (go.mod, go.sum, our own Go sources), so a later CI run on the same machine
# reuses them.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
peers="$here/peers"
# shellcheck source=/dev/null
. "$peers/versions.env"

cache_root=${KUBELET_TS_PEERS_CACHE:-/var/cache/kubelet-ts/peers}
sum=$(cat "$peers"/*/go.mod "$peers"/*/go.sum "$peers"/*/*.go | sha256sum | cut -c1-12)
key="k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-crictl-$CRI_TOOLS_VERSION-$sum"
bin="$cache_root/$key/bin"
want=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet etcd crictl criproxy)

log() { printf '[peers] %s\n' "$*" >&2; }
complete() {
  local b
  for b in "${want[@]}"; do [ -x "$bin/$b" ] || return 1; done
}

export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

# Upstream stamps both version packages (hack/lib/version.sh); without them the binaries
# report v0.0.0 and kubectl/the Node's kubeletVersion read wrong.
k8s_ldflags() {
  local minor p flags="-s -w"
  minor=$(printf '%s' "$KUBERNETES_VERSION" | cut -d. -f2)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags="$flags -X $p.gitVersion=$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    flags="$flags -X $p.gitTreeState=clean -X $p.gitCommit=0000000000000000000000000000000000000000"
    flags="$flags -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "$flags"
}

build_one() { # name module-dir package [ldflags]
  local name=$1 dir=$2 pkg=$3 ld=${4:--s -w} t0
  [ -x "$bin/$name" ] && return 0
  t0=$(date +%s)
  log "building $name ($pkg)"
  (cd "$peers/$dir" && go build -trimpath -ldflags "$ld" -o "$bin/$name.tmp" "$pkg")
  mv "$bin/$name.tmp" "$bin/$name"
  log "built $name in $(($(date +%s) - t0)) s, $(du -m "$bin/$name" | cut -f1) MiB"
}

build() {
  local t0 ld
  t0=$(date +%s)
  mkdir -p "$bin"
  if complete; then
    log "cached: $bin"
  else
    ld=$(k8s_ldflags)
    build_one kube-apiserver k8s k8s.io/kubernetes/cmd/kube-apiserver "$ld"
    build_one kube-controller-manager k8s k8s.io/kubernetes/cmd/kube-controller-manager "$ld"
    build_one kube-scheduler k8s k8s.io/kubernetes/cmd/kube-scheduler "$ld"
    build_one kubectl k8s k8s.io/kubernetes/cmd/kubectl "$ld"
    build_one kubelet k8s k8s.io/kubernetes/cmd/kubelet "$ld"
    build_one etcd etcd go.etcd.io/etcd/server/v3 \
      "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION"
    build_one crictl crictl sigs.k8s.io/cri-tools/cmd/crictl \
      "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION"
    build_one criproxy criproxy kubelet-ts.local/peers/criproxy
    log "peers built in $(($(date +%s) - t0)) s, $(du -sm "$bin" | cut -f1) MiB in $bin"
  fi
  echo "$bin"
}

case "${1:-build}" in
build) build ;;
dir)
  complete || { log "peers not built: run bash scripts/peers.sh build"; exit 1; }
  echo "$bin"
  ;;
*)
  echo "usage: $0 build|dir" >&2
  exit 2
  ;;
esac
