#!/usr/bin/env bash
# A Kubernetes cluster of several nodes on this one machine, for the tests that need more than
# one node: Services across nodes, cluster DNS, DaemonSets.
#
#   scripts/cluster_nodes.sh up     the control plane (scripts/cluster_env.sh under its own root
#                                   and ports), then one node per word of KTS_NODES, each in a
#                                   network namespace of its own with its own containerd,
#                                   kubelet and kube-proxy; routes between the pod networks;
#                                   CoreDNS; print the env
#   scripts/cluster_nodes.sh env    print the KEY=VALUE lines only (no changes)
#   scripts/cluster_nodes.sh down   stop everything `up` started and remove what it made
#
# KTS_NODES: one word per node, the kubelet it runs: `ours` (kubelet.ts, main.ts under deno)
# or `upstream` (the kubelet of scripts/peers.sh). Default "ours upstream ours".
# KTS_DENO: the deno binary for `ours` (default: npx's deno@2.9.6).
#
# Node i (1-based) is named ktsmn<i>: network namespace ktsmn<i>, address 10.159.0.(10+i) on
# the host bridge ktsmn (10.159.0.1/24), pod CIDR 10.160.<i>.0/24 on its CNI bridge ktsmnb<i>,
# containerd root /tmp/kts-mn/cri-<i>, kubelet files /tmp/kts-mn/node-<i>, cgroup root
# /ktsmn<i> (cgroupfs). Cluster CIDR 10.160.0.0/16, service CIDR 10.161.0.0/16, cluster DNS
# 10.161.0.10 (CoreDNS, service kube-dns). The control plane listens on 127.0.0.1 only
# (apiserver 17443, etcd 24590/24591, controller-manager 10757, scheduler 10759); socat
# forwards the apiserver and the local registry (127.0.0.1:5000) to the host bridge's address,
# and in each namespace from its 127.0.0.1 to there, so the kubelets' kubeconfigs and the image
# names read as on the host. Nothing listens on the machine's real interfaces.
#
# KEY=VALUE lines on stdout, progress on stderr, like scripts/cluster_env.sh. Runs as root.
# Use in CI:   set -a; eval "$(KTS_NODES='ours upstream ours' bash scripts/cluster_nodes.sh up)"; set +a
set -euo pipefail

MN_ROOT=/tmp/kts-mn
MN_NODES=${KTS_NODES:-ours upstream ours}
MN_BRIDGE=ktsmn
MN_HOST_IP=10.159.0.1
MN_NODE_NET=10.159.0.0/24
MN_CLUSTER_CIDR=10.160.0.0/16
MN_SERVICE_CIDR=10.161.0.0/16
MN_DNS_IP=10.161.0.10
MN_DOMAIN=cluster.local
MN_API_PORT=17443
MN_REGISTRY_PORT=5000
MN_COREDNS_IMAGE=127.0.0.1:$MN_REGISTRY_PORT/kts/coredns:v1.12.1

MN_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The control plane of scripts/cluster_env.sh: this cluster's own root, ports and services.
mn_cluster_env() {
  KTS_CLUSTER_ROOT=$MN_ROOT/cluster KTS_CLUSTER_PORT=$MN_API_PORT \
    KTS_CLUSTER_ETCD_PORT=24590 KTS_CLUSTER_KCM_PORT=10757 KTS_CLUSTER_SCHEDULER_PORT=10759 \
    KTS_CLUSTER_SERVICE_CIDR=$MN_SERVICE_CIDR bash "$MN_LIB_DIR/cluster_env.sh" "$@"
}

mn_log() { printf 'cluster_nodes: %s\n' "$*" >&2; }
mn_die() {
  printf 'cluster_nodes: error: %s\n' "$*" >&2
  exit 1
}

# shellcheck source=cluster_nodes/node.sh
. "$MN_LIB_DIR/cluster_nodes/node.sh"
# shellcheck source=cluster_nodes/addons.sh
. "$MN_LIB_DIR/cluster_nodes/addons.sh"

mn_kubectl() { "$(cat "$MN_ROOT/k8s-bin")/kubectl" --kubeconfig "$MN_ROOT/cluster/admin.kubeconfig" "$@"; }

mn_print_env() {
  local names="" i
  for ((i = 1; i <= $(wc -w <<<"$(cat "$MN_ROOT/kinds")"); i++)); do
    names="$names${names:+,}ktsmn$i"
  done
  mn_cluster_env env
  cat <<ENV
KUBELET_TS_MN_NODES=$names
KUBELET_TS_MN_KINDS=$(tr ' ' ',' <"$MN_ROOT/kinds")
KUBELET_TS_MN_CLUSTER_CIDR=$MN_CLUSTER_CIDR
KUBELET_TS_MN_SERVICE_CIDR=$MN_SERVICE_CIDR
KUBELET_TS_MN_DNS_IP=$MN_DNS_IP
KUBELET_TS_MN_ROOT=$MN_ROOT
ENV
}

# True when the pid in pid file $1 is alive and its command line contains $2.
mn_pid_alive() {
  local pidfile=$1 needle=$2 pid
  [ -s "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$needle"
}

# mn_start <pid file> <log> <needle> <command...>: a daemon in its own session unless its pid
# file names a live process whose command line has the needle.
mn_start() {
  local pidfile=$1 log=$2 needle=$3
  shift 3
  mn_pid_alive "$pidfile" "$needle" && return 0
  setsid "$@" >>"$log" 2>&1 </dev/null &
  echo $! >"$pidfile"
}

# mn_stop <pid file>: SIGTERM, SIGKILL after 10 s.
mn_stop() {
  local pidfile=$1 pid i
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if [ -d "/proc/$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      [ -d "/proc/$pid" ] || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

# mn_wait <seconds> <what> <command...>: polls the command every 0.5 s.
mn_wait() {
  local seconds=$1 what=$2 i
  shift 2
  for ((i = 0; i < seconds * 2; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  mn_die "timed out after ${seconds}s waiting for $what"
}

mn_check_kinds() {
  local kind n=0
  for kind in $MN_NODES; do
    case "$kind" in
    ours | upstream) n=$((n + 1)) ;;
    *) mn_die "KTS_NODES: \"$kind\" is no kubelet; use one word per node, ours or upstream (e.g. KTS_NODES=\"ours upstream ours\")" ;;
    esac
  done
  ((n >= 1 && n <= 9)) || mn_die "KTS_NODES names $n nodes; use 1 to 9 words (ours or upstream)"
}

# The host side: the bridge the nodes' veths join, and the apiserver and registry forwarded to
# its address (pods reach the apiserver there through the `kubernetes` Service).
mn_host_network() {
  if ! ip link show "$MN_BRIDGE" >/dev/null 2>&1; then
    ip link add "$MN_BRIDGE" type bridge
    ip addr add "$MN_HOST_IP/24" dev "$MN_BRIDGE"
  fi
  ip link set "$MN_BRIDGE" up
  local port
  for port in "$MN_API_PORT" "$MN_REGISTRY_PORT"; do
    mn_start "$MN_ROOT/run/forward-$port.pid" "$MN_ROOT/logs/forward-$port.log" \
      "bind=$MN_HOST_IP" socat "TCP-LISTEN:$port,bind=$MN_HOST_IP,fork,reuseaddr" "TCP:127.0.0.1:$port"
  done
}

mn_up() {
  [ "$(id -u)" -eq 0 ] || mn_die "must run as root (network namespaces, containerd, kubelets)"
  command -v socat >/dev/null || mn_die "socat is needed (apt-get install socat)"
  command -v iptables >/dev/null || mn_die "iptables is needed for kube-proxy (apt-get install iptables)"
  mn_check_kinds
  if [ -s "$MN_ROOT/kinds" ] && [ "$(cat "$MN_ROOT/kinds")" != "$(echo $MN_NODES)" ]; then
    mn_die "a cluster of other nodes ($(cat "$MN_ROOT/kinds")) is up; run: $0 down"
  fi
  local t0 bin addons kind i=0
  t0=$(date +%s)
  mkdir -p "$MN_ROOT/logs" "$MN_ROOT/run"
  echo $MN_NODES >"$MN_ROOT/kinds"
  bin=$(bash "$MN_LIB_DIR/peers.sh" build) || mn_die "building the peer binaries failed"
  addons=$(bash "$MN_LIB_DIR/peers.sh" node-addons) || mn_die "building kube-proxy and CoreDNS failed"
  printf '%s\n' "$bin" >"$MN_ROOT/k8s-bin"
  # The shared containerd's registry serves the CoreDNS image to every node.
  bash "$MN_LIB_DIR/cri_env.sh" up >/dev/null || mn_die "scripts/cri_env.sh up failed"
  mn_push_coredns_image "$addons/coredns"
  mn_cluster_env up >/dev/null || mn_die "the control plane did not come up (scripts/cluster_env.sh)"
  mn_host_network
  mn_cluster_objects
  for kind in $MN_NODES; do
    i=$((i + 1))
    mn_node_up "$i" "$kind" "$bin" "$addons"
  done
  mn_routes
  mn_wait 180 "every node to turn Ready" mn_nodes_ready
  mn_coredns_up
  mn_wait 180 "CoreDNS to turn Ready" mn_coredns_ready
  mn_log "cluster of $i nodes ($MN_NODES) up in $(($(date +%s) - t0)) s (logs in $MN_ROOT)"
  mn_print_env
}

mn_down() {
  [ -d "$MN_ROOT" ] || {
    mn_log "nothing to do ($MN_ROOT does not exist)"
    return 0
  }
  local ns
  for ns in $(ip netns list | awk '$1 ~ /^ktsmn[0-9]+$/ { print $1 }'); do
    mn_node_down "${ns#ktsmn}"
  done
  # A node whose namespace is gone already may still have files, mounts and cgroups.
  local dir
  for dir in "$MN_ROOT"/node-*; do
    [ -d "$dir" ] && mn_node_down "${dir##*-}"
  done
  mn_stop "$MN_ROOT/run/forward-$MN_API_PORT.pid"
  mn_stop "$MN_ROOT/run/forward-$MN_REGISTRY_PORT.pid"
  ip link delete "$MN_BRIDGE" 2>/dev/null || true
  mn_cluster_env down >/dev/null 2>&1 || true
  rm -rf --one-file-system "$MN_ROOT"
  mn_log "removed $MN_ROOT"
}

case "${1:-}" in
up) mn_up ;;
down) mn_down ;;
env)
  [ -s "$MN_ROOT/kinds" ] || mn_die "no cluster at $MN_ROOT; run: $0 up"
  mn_print_env
  ;;
*)
  printf 'usage: %s up|down|env\n' "$0" >&2
  exit 2
  ;;
esac
