#!/usr/bin/env bash
# A single-node Kubernetes control plane as code, for the tests that join a cluster.
#
#   scripts/cluster_env.sh up     build or reuse the peer binaries (scripts/peers.sh), make a
#                                 test PKI, start etcd, kube-apiserver, kube-controller-manager
#                                 and kube-scheduler, create a bootstrap token; print the env
#   scripts/cluster_env.sh env    print the KEY=VALUE lines only (no changes)
#   scripts/cluster_env.sh down   stop what `up` started and delete the root
#   scripts/cluster_env.sh stop-apiserver | start-apiserver | restart-etcd
#                                 fault injection for the fault tests (tests/cluster/api_faults_test.ts);
#                                 use them only on an instance of your own (KTS_CLUSTER_ROOT and ports)
#
# KEY=VALUE lines on stdout, progress on stderr, like scripts/cri_env.sh. Idempotent: a second
# `up` only starts what is not running. Everything listens on 127.0.0.1 only and lives under
# $KTS_CLUSTER_ROOT (default /tmp/kts-cluster). Ports: KTS_CLUSTER_PORT (apiserver, default
# 16443), KTS_CLUSTER_ETCD_PORT (default 23790, peer port +1), KTS_CLUSTER_KCM_PORT and
# KTS_CLUSTER_SCHEDULER_PORT (controller-manager and scheduler, default 10257 and 10259).
# KTS_CLUSTER_SERVICE_CIDR: the Services' ClusterIP range (default 10.96.0.0/12); its first
# address, the `kubernetes` Service's, is in the apiserver's certificate.
# KTS_CLUSTER_EXTRA_SANS: more subjectAltName entries for the API server's certificate
# (e.g. "IP:10.0.2.2", the host's loopback as a qemu guest sees it; docs/node-vm.md).
# KTS_CLUSTER_KUBELET_ADDRESS_TYPES: the API server's --kubelet-preferred-address-types
# (default InternalIP,Hostname; "Hostname" for a kubelet reached through a port forward).
#
# Use in CI:   set -a; eval "$(bash scripts/cluster_env.sh up)"; set +a
set -euo pipefail

KC_ROOT=${KTS_CLUSTER_ROOT:-/tmp/kts-cluster}
KC_PORT=${KTS_CLUSTER_PORT:-16443}
KC_ETCD_PORT=${KTS_CLUSTER_ETCD_PORT:-23790}
KC_KCM_PORT=${KTS_CLUSTER_KCM_PORT:-10257}
KC_SCHEDULER_PORT=${KTS_CLUSTER_SCHEDULER_PORT:-10259}
KC_EXTRA_SANS=${KTS_CLUSTER_EXTRA_SANS:-}
KC_KUBELET_ADDRESS_TYPES=${KTS_CLUSTER_KUBELET_ADDRESS_TYPES:-InternalIP,Hostname}
KC_SERVER=https://127.0.0.1:$KC_PORT
KC_SERVICE_CIDR=${KTS_CLUSTER_SERVICE_CIDR:-10.96.0.0/12}
# Bootstrap token id and secret ([a-z0-9]{6}.[a-z0-9]{16}); a test cluster needs no secrecy.
KC_TOKEN_ID=ktsboo
KC_TOKEN_SECRET=kubeletts0000000

KC_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

kc_log() { printf 'cluster_env: %s\n' "$*" >&2; }
kc_die() {
  printf 'cluster_env: error: %s\n' "$*" >&2
  exit 1
}

# shellcheck source=cluster_env/pki.sh
. "$KC_LIB_DIR/cluster_env/pki.sh"

# The first address of the service CIDR: the ClusterIP the apiserver gives `kubernetes`.
kc_service_ip() {
  local net=${KC_SERVICE_CIDR%/*} a b c d n
  [[ "$KC_SERVICE_CIDR" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/[0-9]+$ ]] ||
    kc_die "KTS_CLUSTER_SERVICE_CIDR must be an IPv4 CIDR such as 10.96.0.0/12 (got \"$KC_SERVICE_CIDR\")"
  IFS=. read -r a b c d <<<"$net"
  n=$(((a << 24 | b << 16 | c << 8 | d) + 1))
  printf '%d.%d.%d.%d\n' $((n >> 24 & 255)) $((n >> 16 & 255)) $((n >> 8 & 255)) $((n & 255))
}

kc_bin() { cat "$KC_ROOT/bin-dir"; }
kc_kubectl() { "$(kc_bin)/kubectl" --kubeconfig "$KC_ROOT/admin.kubeconfig" "$@"; }

kc_print_env() {
  cat <<ENV
KUBELET_TS_KUBECONFIG=$KC_ROOT/admin.kubeconfig
KUBELET_TS_BOOTSTRAP_KUBECONFIG=$KC_ROOT/bootstrap.kubeconfig
KUBELET_TS_APISERVER=$KC_SERVER
KUBELET_TS_CLUSTER_CA=$KC_ROOT/pki/ca.crt
KUBELET_TS_APISERVER_KUBELET_CLIENT_CERT=$KC_ROOT/pki/apiserver-kubelet-client.crt
KUBELET_TS_APISERVER_KUBELET_CLIENT_KEY=$KC_ROOT/pki/apiserver-kubelet-client.key
KUBELET_TS_K8S_BIN=$(kc_bin 2>/dev/null || true)
KUBELET_TS_CLUSTER_ROOT=$KC_ROOT
ENV
}

# True when the pid in pid file $1 is alive and its command line contains $2.
kc_pid_alive() {
  local pidfile=$1 needle=$2 pid
  [ -s "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$needle"
}

# kc_wait <seconds> <what> <command...>: polls the command every 0.2 s.
kc_wait() {
  local seconds=$1 what=$2 i
  shift 2
  for ((i = 0; i < seconds * 5; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  kc_die "timed out after ${seconds}s waiting for $what"
}

# kc_start <name> <binary> <args...>: starts a daemon in its own session unless it runs.
kc_start() {
  local name=$1 binary=$2
  shift 2
  local pidfile=$KC_ROOT/run/$name.pid
  if kc_pid_alive "$pidfile" "$KC_ROOT"; then
    return 0
  fi
  setsid "$(kc_bin)/$binary" "$@" >>"$KC_ROOT/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  kc_log "$name started (pid $(cat "$pidfile"))"
}

kc_stop() { # name
  local pidfile=$KC_ROOT/run/$1.pid pid i
  if kc_pid_alive "$pidfile" "$KC_ROOT"; then
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kc_pid_alive "$pidfile" "$KC_ROOT" || break
      sleep 0.1
    done
    kc_pid_alive "$pidfile" "$KC_ROOT" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

kc_fail_with_log() { # name
  tail -n 30 "$KC_ROOT/logs/$1.log" >&2 || true
  kc_die "$1 did not become ready (log: $KC_ROOT/logs/$1.log)"
}

kc_etcd_ready() {
  curl -sf "http://127.0.0.1:$KC_ETCD_PORT/health" | grep -q '"health":"true"'
}
kc_apiserver_ready() {
  [ "$(kc_kubectl get --raw /readyz 2>/dev/null)" = ok ]
}

kc_start_etcd() {
  kc_start etcd etcd --name kts --data-dir "$KC_ROOT/etcd" \
    --listen-client-urls "http://127.0.0.1:$KC_ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$KC_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((KC_ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((KC_ETCD_PORT + 1))" \
    --initial-cluster "kts=http://127.0.0.1:$((KC_ETCD_PORT + 1))" \
    --unsafe-no-fsync --listen-metrics-urls "" --log-level warn
  kc_wait 30 "etcd on 127.0.0.1:$KC_ETCD_PORT" kc_etcd_ready || kc_fail_with_log etcd
}

kc_start_apiserver() {
  local p=$KC_ROOT/pki
  kc_start kube-apiserver kube-apiserver \
    --etcd-servers "http://127.0.0.1:$KC_ETCD_PORT" \
    --advertise-address 127.0.0.1 --bind-address 127.0.0.1 --secure-port "$KC_PORT" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --client-ca-file "$p/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-jwks-uri "https://$(kc_service_ip)/openid/v1/jwks" \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-cluster-ip-range "$KC_SERVICE_CIDR" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --allow-privileged=true --enable-bootstrap-token-auth=true \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types "$KC_KUBELET_ADDRESS_TYPES" \
    --requestheader-client-ca-file "$p/ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$p/front-proxy-client.crt" \
    --proxy-client-key-file "$p/front-proxy-client.key" --enable-aggregator-routing=true \
    --endpoint-reconciler-type none --profiling=false
  kc_wait 60 "kube-apiserver /readyz on $KC_SERVER" kc_apiserver_ready ||
    kc_fail_with_log kube-apiserver
}

kc_start_controllers() {
  local p=$KC_ROOT/pki
  kc_start kube-controller-manager kube-controller-manager \
    --kubeconfig "$KC_ROOT/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$KC_ROOT/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$KC_ROOT/controller-manager.kubeconfig" \
    --client-ca-file "$p/ca.crt" --root-ca-file "$p/ca.crt" \
    --service-account-private-key-file "$p/sa.key" \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --use-service-account-credentials=true \
    --controllers '*,bootstrapsigner,tokencleaner' \
    --service-cluster-ip-range "$KC_SERVICE_CIDR" --secure-port "$KC_KCM_PORT" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
  kc_start kube-scheduler kube-scheduler \
    --kubeconfig "$KC_ROOT/scheduler.kubeconfig" \
    --authentication-kubeconfig "$KC_ROOT/scheduler.kubeconfig" \
    --authorization-kubeconfig "$KC_ROOT/scheduler.kubeconfig" --secure-port "$KC_SCHEDULER_PORT" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
}

kc_up() {
  local t0 bin
  t0=$(date +%s)
  command -v openssl >/dev/null || kc_die "openssl is needed (apt-get install openssl)"
  command -v curl >/dev/null || kc_die "curl is needed (apt-get install curl)"
  kc_service_ip >/dev/null
  mkdir -p "$KC_ROOT/logs" "$KC_ROOT/run"
  bin=$(bash "$KC_LIB_DIR/peers.sh" build) || kc_die "building the peer binaries failed"
  printf '%s\n' "$bin" >"$KC_ROOT/bin-dir"
  kc_make_pki
  kc_make_kubeconfigs
  kc_start_etcd
  kc_start_apiserver
  kc_bootstrap_objects
  kc_start_controllers
  kc_log "control plane up in $(($(date +%s) - t0)) s (logs in $KC_ROOT/logs)"
  kc_print_env
}

kc_down() {
  [ -d "$KC_ROOT" ] || {
    kc_log "nothing to do ($KC_ROOT does not exist)"
    return 0
  }
  local name
  for name in kube-scheduler kube-controller-manager kube-apiserver etcd; do
    kc_stop "$name"
  done
  rm -rf --one-file-system "$KC_ROOT"
  kc_log "removed $KC_ROOT"
}

case "${1:-}" in
up) kc_up ;;
down) kc_down ;;
env)
  [ -s "$KC_ROOT/bin-dir" ] || kc_die "no environment at $KC_ROOT; run: $0 up"
  kc_print_env
  ;;
stop-apiserver) kc_stop kube-apiserver ;;
start-apiserver)
  [ -s "$KC_ROOT/bin-dir" ] || kc_die "no environment at $KC_ROOT; run: $0 up"
  kc_start_apiserver
  ;;
restart-etcd)
  [ -s "$KC_ROOT/bin-dir" ] || kc_die "no environment at $KC_ROOT; run: $0 up"
  kc_stop etcd
  kc_start_etcd
  ;;
*)
  printf 'usage: %s up|down|env|stop-apiserver|start-apiserver|restart-etcd\n' "$0" >&2
  exit 2
  ;;
esac
