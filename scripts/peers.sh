#!/usr/bin/env bash
# Builds the test peers from Go modules at the versions pinned in peers/versions.env:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and the upstream kubelet
# (k8s.io/kubernetes through the wrapper module peers/k8s), etcd (peers/etcd) and crictl
# (peers/crictl), and our recording CRI proxy for the differential tests (peers/criproxy).
# Nothing here ships: the product has no Go in it.
#
#   bash scripts/peers.sh build      build what the cache lacks; prints the bin directory on stdout
#   bash scripts/peers.sh dir        print the bin directory (exit 1 when it is not complete)
#   bash scripts/peers.sh build-e2e  build upstream's e2e suite (e2e.test), the ginkgo CLI and
#                                    agnhost (peers/e2e); prints their directory on stdout
#   bash scripts/peers.sh e2e-dir    print that directory (exit 1 when it is not complete)
#   bash scripts/peers.sh static-oracle  build the static pod oracle (peers/staticpod: upstream's
#                                    manifest decoding, defaults, validation and UID); prints
#                                    the binary's path on stdout
#   bash scripts/peers.sh build-e2e-node  build upstream's node e2e suite (e2e_node.test) and the
#                                    ginkgo CLI (peers/e2enode); prints their directory
#   bash scripts/peers.sh e2e-node-dir    print that directory (exit 1 when it is not complete)
#   bash scripts/peers.sh metrics-server  build metrics-server (peers/metricsserver, for kubectl
#                                    top against both kubelets); prints the binary's path
#   bash scripts/peers.sh metrics-server-path  print that path (exit 1 when it is not built)
#   bash scripts/peers.sh node-addons  build kube-proxy (peers/kubeproxy, the pinned
#                                    k8s.io/kubernetes) and CoreDNS (peers/coredns), what a
#                                    multi-node cluster runs beside the kubelets; prints their
#                                    directory
#   bash scripts/peers.sh node-addons-dir  print that directory (exit 1 when it is not complete)
#   bash scripts/peers.sh csi-hostpath  build our CSI test driver (peers/csihostpath: CSI
#                                    Identity and Node services that bind-mount a data directory,
#                                    plus the kubelet registration service node-driver-registrar
#                                    serves; the upstream driver and registrar are not on the Go
#                                    module proxy); prints the binary's path
#   bash scripts/peers.sh csi-hostpath-path  print that path (exit 1 when it is not built)
#   bash scripts/peers.sh csi-provisioner  build the external provisioner (peers/csiprovisioner:
#                                    github.com/kubernetes-csi/external-provisioner/v5, for
#                                    dynamic provisioning with the CSI test driver); prints its path
#   bash scripts/peers.sh csi-provisioner-path  print that path (exit 1 when it is not built)
#   bash scripts/peers.sh sample-device-plugin  build upstream's sample device plugin
#                                    (test/images/sample-device-plugin, from the node e2e
#                                    module peers/e2enode); prints the binary's path
#   bash scripts/peers.sh sample-apiserver  build upstream's sample API server
#                                    (peers/sampleapiserver: k8s.io/sample-apiserver at the
#                                    pinned Kubernetes' staging version, the Aggregator test's
#                                    image); prints the binary's path
#   bash scripts/peers.sh containerd2  build containerd 2 (containerd, its runc shim, ctr;
#                                    peers/containerd2) and runc (peers/runc, cgo with
#                                    libseccomp), a runtime that supports user namespaces;
#                                    prints their directory
#   bash scripts/peers.sh containerd2-dir  print that directory (exit 1 when it is not complete)
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
# The e2e suite has its own key: changing it must not rebuild the peers, nor the reverse.
mods=(crictl criproxy etcd k8s)
sum=$(cd "$peers" && cat "${mods[@]/%//go.mod}" "${mods[@]/%//go.sum}" ./criproxy/*.go |
  sha256sum | cut -c1-12)
key="k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-crictl-$CRI_TOOLS_VERSION-$sum"
bin="$cache_root/$key/bin"
want=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet etcd crictl criproxy)
e2e_sum=$(cat "$peers/e2e/go.mod" "$peers/e2e/go.sum" | sha256sum | cut -c1-12)
e2e_bin="$cache_root/e2e-$KUBERNETES_VERSION-$e2e_sum/bin"
e2e_want=(e2e.test ginkgo agnhost)
# The static pod oracle has its own key too, so editing it rebuilds nothing else.
oracle_sum=$(cd "$peers/staticpod" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-12)
oracle_bin="$cache_root/staticpod-$KUBERNETES_VERSION-$oracle_sum/bin"
# The node e2e suite needs a few more modules than the cluster suite: a module of its own, so
# adding it changed neither the e2e key nor the peers' one.
e2e_node_sum=$(cat "$peers/e2enode/go.mod" "$peers/e2enode/go.sum" | sha256sum | cut -c1-12)
e2e_node_bin="$cache_root/e2e-node-$KUBERNETES_VERSION-$e2e_node_sum/bin"
e2e_node_want=(e2e_node.test ginkgo)
# upstream's sample device plugin comes from the node e2e module but has a folder of its own,
# so adding it rebuilt nothing of that suite.
dp_bin="$cache_root/sample-device-plugin-$KUBERNETES_VERSION-$e2e_node_sum/bin"
# metrics-server has its own module and key: it pins older staging modules than the peers.
ms_sum=$(cat "$peers/metricsserver/go.mod" "$peers/metricsserver/go.sum" | sha256sum | cut -c1-12)
ms_version=$(grep -o 'sigs.k8s.io/metrics-server v[^ ]*' "$peers/metricsserver/go.mod" | cut -d' ' -f2)
ms_bin="$cache_root/metrics-server-$ms_version-$ms_sum/bin"

# kube-proxy and CoreDNS: modules of their own (kube-proxy needs modules the other peers do
# not), so neither the peers' key nor the e2e keys change with them.
addons_sum=$(cat "$peers/kubeproxy/go.mod" "$peers/kubeproxy/go.sum" \
  "$peers/coredns/go.mod" "$peers/coredns/go.sum" | sha256sum | cut -c1-12)
coredns_version=$(grep -o 'github.com/coredns/coredns v[^ ]*' "$peers/coredns/go.mod" | cut -d' ' -f2)
addons_bin="$cache_root/addons-$KUBERNETES_VERSION-coredns-$coredns_version-$addons_sum/bin"
addons_want=(kube-proxy coredns)
# The CSI test driver has its own key.
csi_sum=$(cd "$peers/csihostpath" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-12)
csi_bin="$cache_root/csihostpath-$csi_sum/bin"
prov_sum=$(cat "$peers/csiprovisioner/go.mod" "$peers/csiprovisioner/go.sum" | sha256sum | cut -c1-12)
prov_bin="$cache_root/csi-provisioner-$prov_sum/bin"

# The Aggregator test's sample API server: its own module and key.
sas_sum=$(cat "$peers/sampleapiserver/go.mod" "$peers/sampleapiserver/go.sum" | sha256sum | cut -c1-12)
sas_bin="$cache_root/sample-apiserver-$KUBERNETES_VERSION-$sas_sum/bin"

# containerd 2 and runc: a newer runtime than Debian's, for what containerd 1.6 lacks (user
# namespaces). Modules of their own, so no other key changes with them.
ctrd_sum=$(cat "$peers/containerd2/go.mod" "$peers/containerd2/go.sum" \
  "$peers/runc/go.mod" "$peers/runc/go.sum" | sha256sum | cut -c1-12)
ctrd_version=$(grep -o 'github.com/containerd/containerd/v2 v[^ ]*' "$peers/containerd2/go.mod" | cut -d' ' -f2)
runc_version=$(grep -o 'github.com/opencontainers/runc v[^ ]*' "$peers/runc/go.mod" | cut -d' ' -f2)
ctrd_bin="$cache_root/containerd-$ctrd_version-runc-$runc_version-$ctrd_sum/bin"
ctrd_want=(containerd containerd-shim-runc-v2 ctr runc)

log() { printf '[peers] %s\n' "$*" >&2; }
complete() {
  local b
  for b in "${want[@]}"; do [ -x "$bin/$b" ] || return 1; done
}
e2e_complete() {
  local b
  for b in "${e2e_want[@]}"; do [ -x "$e2e_bin/$b" ] || return 1; done
}
addons_complete() {
  local b
  for b in "${addons_want[@]}"; do [ -x "$addons_bin/$b" ] || return 1; done
}
ctrd_complete() {
  local b
  for b in "${ctrd_want[@]}"; do [ -x "$ctrd_bin/$b" ] || return 1; done
}
e2e_node_complete() {
  local b
  for b in "${e2e_node_want[@]}"; do [ -x "$e2e_node_bin/$b" ] || return 1; done
}

# A caller's GOFLAGS (e.g. -p=1 on a shared machine) are kept.
export GOTOOLCHAIN=local GOWORK=off GOFLAGS="-mod=mod ${GOFLAGS:-}" CGO_ENABLED=0

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

build_one() { # name module-dir package [ldflags] [go subcommand...]
  local name=$1 dir=$2 pkg=$3 ld=${4:--s -w} t0 out
  shift $(($# < 4 ? $# : 4))
  local cmd=("${@:-build}")
  out=$bin/$name
  [ "$dir" = e2e ] && out=$e2e_bin/$name
  [ "$dir" = staticpod ] && out=$oracle_bin/$name
  [ "$dir" = e2enode ] && out=$e2e_node_bin/$name
  [ "$dir" = metricsserver ] && out=$ms_bin/$name
  [ "$dir" = kubeproxy ] || [ "$dir" = coredns ] && out=$addons_bin/$name
  [ "$dir" = csihostpath ] && out=$csi_bin/$name
  [ "$dir" = csiprovisioner ] && out=$prov_bin/$name
  [ "$dir" = sampleapiserver ] && out=$sas_bin/$name
  [ "$name" = sample-device-plugin ] && out=$dp_bin/$name
  [ "$dir" = containerd2 ] || [ "$dir" = runc ] && out=$ctrd_bin/$name
  [ -x "$out" ] && return 0
  t0=$(date +%s)
  log "building $name ($pkg)"
  (cd "$peers/$dir" && go "${cmd[@]}" -trimpath -ldflags "$ld" -o "$out.tmp" "$pkg")
  mv "$out.tmp" "$out"
  log "built $name in $(($(date +%s) - t0)) s, $(du -m "$out" | cut -f1) MiB"
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

# Upstream's e2e suite is a test binary (go test -c); ginkgo runs it in parallel processes.
# agnhost, the suite's all-purpose test image, comes from the same module.
build_e2e() {
  local t0
  t0=$(date +%s)
  mkdir -p "$e2e_bin"
  if e2e_complete; then
    log "cached: $e2e_bin"
  else
    build_one e2e.test e2e k8s.io/kubernetes/test/e2e "$(k8s_ldflags)" test -c -vet=off
    build_one ginkgo e2e github.com/onsi/ginkgo/v2/ginkgo
    build_one agnhost e2e k8s.io/kubernetes/test/images/agnhost
    log "e2e suite built in $(($(date +%s) - t0)) s, $(du -sm "$e2e_bin" | cut -f1) MiB in $e2e_bin"
  fi
  echo "$e2e_bin"
}

build_static_oracle() {
  mkdir -p "$oracle_bin"
  build_one staticpod staticpod kubelet-ts.local/peers/staticpod
  echo "$oracle_bin/staticpod"
}

# Upstream's node e2e suite (test/e2e_node), run by tests/conformance/e2e_node.ts.
build_e2e_node() {
  local t0
  t0=$(date +%s)
  mkdir -p "$e2e_node_bin"
  if e2e_node_complete; then
    log "cached: $e2e_node_bin"
  else
    build_one e2e_node.test e2enode k8s.io/kubernetes/test/e2e_node "$(k8s_ldflags)" test -c -vet=off
    build_one ginkgo e2enode github.com/onsi/ginkgo/v2/ginkgo
    log "node e2e suite built in $(($(date +%s) - t0)) s, $(du -sm "$e2e_node_bin" | cut -f1) MiB in $e2e_node_bin"
  fi
  echo "$e2e_node_bin"
}

build_metrics_server() {
  mkdir -p "$ms_bin"
  build_one metrics-server metricsserver sigs.k8s.io/metrics-server/cmd/metrics-server \
    "-s -w -X sigs.k8s.io/metrics-server/pkg/version.gitVersion=$ms_version"
  echo "$ms_bin/metrics-server"
}

build_addons() {
  mkdir -p "$addons_bin"
  build_one kube-proxy kubeproxy k8s.io/kubernetes/cmd/kube-proxy "$(k8s_ldflags)"
  build_one coredns coredns github.com/coredns/coredns \
    "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$coredns_version"
  echo "$addons_bin"
}

build_csi_hostpath() {
  mkdir -p "$csi_bin"
  build_one csihostpath csihostpath kubelet-ts.local/peers/csihostpath
  echo "$csi_bin/csihostpath"
}

build_csi_provisioner() {
  mkdir -p "$prov_bin"
  build_one csi-provisioner csiprovisioner \
    github.com/kubernetes-csi/external-provisioner/v5/cmd/csi-provisioner
  echo "$prov_bin/csi-provisioner"
}

build_sample_device_plugin() {
  mkdir -p "$dp_bin"
  build_one sample-device-plugin e2enode k8s.io/kubernetes/test/images/sample-device-plugin
  echo "$dp_bin/sample-device-plugin"
}

build_sample_apiserver() {
  mkdir -p "$sas_bin"
  build_one sample-apiserver sampleapiserver k8s.io/sample-apiserver "$(k8s_ldflags)"
  echo "$sas_bin/sample-apiserver"
}

# The stamps upstream's Makefiles set; runc reads its version from an embedded file. runc needs
# cgo for libseccomp (Debian's libseccomp-dev) and the seccomp tag, as its Makefile builds it;
# containerd and the shim are static (no btrfs, which needs cgo).
build_containerd2() {
  local t0 p=github.com/containerd/containerd/v2 ld
  t0=$(date +%s)
  mkdir -p "$ctrd_bin"
  if ctrd_complete; then
    log "cached: $ctrd_bin"
  else
    ld="-s -w -X $p/version.Version=$ctrd_version -X $p/version.Revision=$ctrd_version"
    ld="$ld -X $p/version.Package=$p"
    build_one containerd containerd2 "$p/cmd/containerd" "$ld" \
      build -tags "urfave_cli_no_docs no_btrfs"
    build_one containerd-shim-runc-v2 containerd2 "$p/cmd/containerd-shim-runc-v2" "$ld" \
      build -tags "urfave_cli_no_docs no_grpc"
    build_one ctr containerd2 "$p/cmd/ctr" "$ld" build -tags urfave_cli_no_docs
    if ! [ -e /usr/include/seccomp.h ] && [ "$(id -u)" -eq 0 ]; then
      log "installing libseccomp-dev (runc's seccomp support)"
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends libseccomp-dev >&2 || true
    fi
    if ! [ -e /usr/include/seccomp.h ]; then
      log "runc needs libseccomp's headers: apt-get install -y libseccomp-dev (as root)"
      exit 1
    fi
    CGO_ENABLED=1 build_one runc runc github.com/opencontainers/runc \
      "-s -w -X main.gitCommit=$runc_version" build -tags "seccomp urfave_cli_no_docs"
    log "containerd 2 and runc built in $(($(date +%s) - t0)) s, $(du -sm "$ctrd_bin" | cut -f1) MiB in $ctrd_bin"
  fi
  echo "$ctrd_bin"
}

case "${1:-build}" in
build) build ;;
static-oracle) build_static_oracle ;;
dir)
  complete || { log "peers not built: run bash scripts/peers.sh build"; exit 1; }
  echo "$bin"
  ;;
build-e2e) build_e2e ;;
e2e-dir)
  e2e_complete || { log "e2e suite not built: run bash scripts/peers.sh build-e2e"; exit 1; }
  echo "$e2e_bin"
  ;;
build-e2e-node) build_e2e_node ;;
e2e-node-dir)
  e2e_node_complete || { log "node e2e suite not built: run bash scripts/peers.sh build-e2e-node"; exit 1; }
  echo "$e2e_node_bin"
  ;;
metrics-server) build_metrics_server ;;
sample-device-plugin) build_sample_device_plugin ;;
metrics-server-path)
  [ -x "$ms_bin/metrics-server" ] || {
    log "metrics-server not built: run bash scripts/peers.sh metrics-server"
    exit 1
  }
  echo "$ms_bin/metrics-server"
  ;;
node-addons) build_addons ;;
node-addons-dir)
  addons_complete || { log "kube-proxy and CoreDNS not built: run bash scripts/peers.sh node-addons"; exit 1; }
  echo "$addons_bin"
  ;;
csi-hostpath) build_csi_hostpath ;;
csi-hostpath-path)
  [ -x "$csi_bin/csihostpath" ] || {
    log "CSI test driver not built: run bash scripts/peers.sh csi-hostpath"
    exit 1
  }
  echo "$csi_bin/csihostpath"
  ;;
csi-provisioner) build_csi_provisioner ;;
sample-apiserver) build_sample_apiserver ;;
containerd2) build_containerd2 ;;
containerd2-dir)
  ctrd_complete || { log "containerd 2 not built: run bash scripts/peers.sh containerd2"; exit 1; }
  echo "$ctrd_bin"
  ;;
csi-provisioner-path)
  [ -x "$prov_bin/csi-provisioner" ] || {
    log "external provisioner not built: run bash scripts/peers.sh csi-provisioner"
    exit 1
  }
  echo "$prov_bin/csi-provisioner"
  ;;
*)
  echo "usage: $0 build|dir|build-e2e|e2e-dir|static-oracle|build-e2e-node|e2e-node-dir|metrics-server|metrics-server-path|node-addons|node-addons-dir|csi-hostpath|csi-hostpath-path|csi-provisioner|csi-provisioner-path|sample-device-plugin|sample-apiserver|containerd2|containerd2-dir" >&2
  exit 2
  ;;
esac
