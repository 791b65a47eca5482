#!/usr/bin/env bash
# The upstream kubelet (built by scripts/peers.sh) on its own containerd, so that any scenario
# can run under both kubelets. Two kubelets never share a containerd: each would collect the
# other's pods as orphans.
#
#   scripts/upstream_kubelet.sh up     start a runtime-only containerd (scripts/cri_env.sh with
#                                      its own root, bridge and subnet) and the upstream kubelet
#   scripts/upstream_kubelet.sh env    print the KEY=VALUE lines only
#   scripts/upstream_kubelet.sh stop-kubelet  stop only the kubelet (KTS_UPSTREAM_SIGNAL, default
#                                      TERM); its containers keep running, `up` starts it again
#   scripts/upstream_kubelet.sh down   stop the kubelet, tear its containerd down, delete the root
#
# Environment:
#   KTS_UPSTREAM_ROOT        everything lives here (default /tmp/kts-upstream)
#   KTS_UPSTREAM_NODE        node name (default kts-upstream)
#   KTS_UPSTREAM_STATIC_DIR  static pod manifest directory (default $KTS_UPSTREAM_ROOT/manifests)
#   KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG  join a cluster through TLS bootstrap with this kubeconfig
#                            (from scripts/cluster_env.sh); unset = standalone
#   KTS_UPSTREAM_CRI_ENDPOINT  talk CRI here instead of straight to its containerd (a
#                            recording proxy in the differential tests)
#   KTS_UPSTREAM_CONFIG_EXTRA  extra KubeletConfiguration YAML lines appended to the config
#   KTS_UPSTREAM_ARGS        extra command-line flags
#   KTS_UPSTREAM_KUBELET     the command to start instead of the upstream binary, with the same
#                            flags, config, root dir, cert dir and containerd (scripts/swap.sh
#                            puts kubelet.ts here)
#   KTS_UPSTREAM_BRIDGE, KTS_UPSTREAM_SUBNET  its containerd's CNI bridge (default kts1,
#                            10.89.0.0/16); two upstream kubelets at once need distinct ones
#   KTS_UPSTREAM_HEALTHZ_PORT, KTS_UPSTREAM_PORT  healthz on 127.0.0.1 (default 10348) and the
#                            kubelet API (default 10350; read-only port off), apart from
#                            kubelet.ts's 10248/10250
set -euo pipefail

KU_ROOT=${KTS_UPSTREAM_ROOT:-/tmp/kts-upstream}
KU_NODE=${KTS_UPSTREAM_NODE:-kts-upstream}
KU_STATIC=${KTS_UPSTREAM_STATIC_DIR:-$KU_ROOT/manifests}
KU_BRIDGE=${KTS_UPSTREAM_BRIDGE:-kts1}
KU_SUBNET=${KTS_UPSTREAM_SUBNET:-10.89.0.0/16}
KU_HEALTHZ_PORT=${KTS_UPSTREAM_HEALTHZ_PORT:-10348}
KU_PORT=${KTS_UPSTREAM_PORT:-10350}
KU_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KU_CRI_ROOT=$KU_ROOT/cri
KU_CRI_SOCK=unix://$KU_CRI_ROOT/containerd.sock

ku_log() { printf 'upstream_kubelet: %s\n' "$*" >&2; }
ku_die() {
  printf 'upstream_kubelet: error: %s\n' "$*" >&2
  exit 1
}

ku_cri_env() {
  KTS_CRI_ROOT=$KU_CRI_ROOT KTS_CRI_RUNTIME_ONLY=1 KTS_CRI_BRIDGE=$KU_BRIDGE \
    KTS_CRI_SUBNET=$KU_SUBNET bash "$KU_LIB_DIR/cri_env.sh" "$@"
}

ku_print_env() {
  cat <<ENV
KUBELET_TS_UPSTREAM_NODE=$KU_NODE
KUBELET_TS_UPSTREAM_ROOT=$KU_ROOT
KUBELET_TS_UPSTREAM_STATIC_DIR=$KU_STATIC
KUBELET_TS_UPSTREAM_CRI_ENDPOINT=$KU_CRI_SOCK
KUBELET_TS_UPSTREAM_HEALTHZ=http://127.0.0.1:$KU_HEALTHZ_PORT/healthz
KUBELET_TS_UPSTREAM_LOG=$KU_ROOT/kubelet.log
ENV
}

ku_write_config() {
  local ca_line=""
  if [ -n "${KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG:-}" ]; then
    ca_line="    clientCAFile: ${KUBELET_TS_CLUSTER_CA:?set KUBELET_TS_CLUSTER_CA (scripts/cluster_env.sh env)}"
  fi
  cat >"$KU_ROOT/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: ${KTS_UPSTREAM_CRI_ENDPOINT:-$KU_CRI_SOCK}
staticPodPath: $KU_STATIC
cgroupDriver: cgroupfs
cgroupRoot: /$KU_NODE
failSwapOn: false
healthzBindAddress: 127.0.0.1
healthzPort: $KU_HEALTHZ_PORT
address: 127.0.0.1
port: $KU_PORT
readOnlyPort: 0
resolvConf: /etc/resolv.conf
fileCheckFrequency: 1s
syncFrequency: 10s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: $([ -n "${KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG:-}" ] && echo true || echo false)
  x509:
$ca_line
authorization:
  mode: $([ -n "${KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG:-}" ] && echo Webhook || echo AlwaysAllow)
${KTS_UPSTREAM_CONFIG_EXTRA:-}
YAML
}

ku_healthy() { curl -sf "http://127.0.0.1:$KU_HEALTHZ_PORT/healthz" | grep -qx ok; }

ku_up() {
  [ "$(id -u)" -eq 0 ] || ku_die "must run as root (the kubelet and containerd need it)"
  local bin
  bin=$(bash "$KU_LIB_DIR/peers.sh" build) || ku_die "building the peer binaries failed"
  mkdir -p "$KU_ROOT/root" "$KU_ROOT/pki" "$KU_STATIC"
  ku_cri_env up >/dev/null
  # The kubelet wants its cgroupRoot to exist in every hierarchy (cgroup v1) already.
  local h
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h" ] && mkdir -p "$h$KU_NODE" 2>/dev/null || true
  done
  local pidfile=$KU_ROOT/kubelet.pid
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    ku_log "kubelet already running (pid $(cat "$pidfile"))"
  else
    ku_write_config
    local args=(--config "$KU_ROOT/config.yaml" --root-dir "$KU_ROOT/root"
      --cert-dir "$KU_ROOT/pki" --hostname-override "$KU_NODE" --v 2)
    if [ -n "${KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG:-}" ]; then
      args+=(--bootstrap-kubeconfig "$KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG"
        --kubeconfig "$KU_ROOT/kubelet.kubeconfig")
    fi
    # shellcheck disable=SC2206
    args+=(${KTS_UPSTREAM_ARGS:-})
    date +%s.%N >"$KU_ROOT/kubelet.started"
    local cmd=("$bin/kubelet")
    # shellcheck disable=SC2206
    [ -n "${KTS_UPSTREAM_KUBELET:-}" ] && cmd=(${KTS_UPSTREAM_KUBELET})
    printf '%s\n' "${cmd[*]}" >"$KU_ROOT/kubelet.cmd"
    setsid "${cmd[@]}" "${args[@]}" >>"$KU_ROOT/kubelet.log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    ku_log "kubelet started (pid $(cat "$pidfile"), log $KU_ROOT/kubelet.log)"
  fi
  local i
  for ((i = 0; i < 300; i++)); do
    ku_healthy && break
    kill -0 "$(cat "$pidfile")" 2>/dev/null || break
    sleep 0.2
  done
  ku_healthy || {
    tail -n 30 "$KU_ROOT/kubelet.log" >&2
    ku_die "the upstream kubelet did not answer its healthz within 60 s"
  }
  ku_print_env
}

# Stops the kubelet with signal $1 and waits for it to exit (SIGKILL after 10 s).
ku_stop_kubelet() {
  local pidfile=$KU_ROOT/kubelet.pid pid i
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  kill "-$1" "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

ku_down() {
  [ -d "$KU_ROOT" ] || {
    ku_log "nothing to do ($KU_ROOT does not exist)"
    return 0
  }
  ku_stop_kubelet TERM
  # Stop and remove its pods while containerd still runs, then kill anything left in the
  # kubelet's cgroup tree: container processes outlive a killed shim.
  local crictl
  crictl="$(bash "$KU_LIB_DIR/peers.sh" dir 2>/dev/null)/crictl"
  if [ -x "$crictl" ] && [ -S "$KU_CRI_ROOT/containerd.sock" ]; then
    timeout 60 "$crictl" --runtime-endpoint "$KU_CRI_SOCK" rmp --all --force >/dev/null 2>&1 || true
  fi
  ku_cri_env down >/dev/null 2>&1 || true
  local tasks
  for tasks in /sys/fs/cgroup/pids/"$KU_NODE"/*/*/*/tasks /sys/fs/cgroup/pids/"$KU_NODE"/*/*/*/*/tasks; do
    [ -f "$tasks" ] && xargs -r kill -KILL <"$tasks" 2>/dev/null || true
  done
  # The kubelet's pod volumes (tmpfs for tokens, bind mounts) under its root dir.
  local mnt
  while read -r mnt; do
    umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
  done < <(awk -v root="$KU_ROOT" 'index($2, root) == 1 { print $2 }' /proc/self/mounts | sort -r)
  # Its cgroup root (/<node name>) under every v1 hierarchy, deepest first.
  for i in 1 2 3 4 5; do
    find /sys/fs/cgroup -depth -type d \( -path "*/$KU_NODE/*" -o -name "$KU_NODE" \) \
      -exec rmdir {} \; 2>/dev/null || true
    compgen -G "/sys/fs/cgroup/*/$KU_NODE" >/dev/null || break
    sleep 0.5
  done
  rm -rf --one-file-system "$KU_ROOT"
  ku_log "removed $KU_ROOT"
}

case "${1:-}" in
up) ku_up ;;
down) ku_down ;;
stop-kubelet) ku_stop_kubelet "${KTS_UPSTREAM_SIGNAL:-TERM}" ;;
env) ku_print_env ;;
*)
  printf 'usage: %s up|stop-kubelet|down|env\n' "$0" >&2
  exit 2
  ;;
esac
