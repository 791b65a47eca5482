#!/usr/bin/env bash
# One device plugin scenario on one kubelet, upstream's or kubelet.ts, so the two can be
# compared (tests/cluster/device_plugin_diff_test.ts): the node of scripts/upstream_kubelet.sh
# (its own runtime-only containerd) joins the control plane of scripts/cluster_env.sh; upstream's
# sample device plugin (scripts/peers.sh sample-device-plugin) runs as a host process. Both
# kubelets and the plugin use the fixed /var/lib/kubelet/device-plugins: the kubelet runs in a
# private mount namespace where that folder is <node root>/device-plugins, and the plugin joins
# that namespace, so the host's folder is untouched.
#
#   scripts/device_plugin_scenario.sh upstream|kubelet.ts
#   scripts/device_plugin_scenario.sh swap    starts on upstream's kubelet, then swaps the node to
#                                             kubelet.ts and back (scripts/swap.sh's way: TERM,
#                                             the other kubelet on the same root and containerd)
#
# Steps, each printed as KEY=VALUE on stdout:
#   CAPACITY/ALLOCATABLE   the Node's example.com/resource once the plugin registered
#   FITS_PHASE, FITS_LS     a pod asking for 1 device: its phase and `ls /tmp` in the container
#                           (the plugin mounts /tmp/<device id>)
#   OVER_REASON/OVER_MESSAGE  a pod asking for 2 with 1 left: its rejection
#   GONE_CAPACITY/GONE_ALLOCATABLE  after the plugin stops
#   CHECKPOINT_RESOURCES   resource names in the device checkpoint
#   CHECKPOINT_ENTRIES     its entries, pod/container:resource:device count
# In swap mode, after each swap (prefix TO_TS_, then TO_UPSTREAM_): ALLOCATABLE once the plugin
# registered again, FITS_SAME (the fits container kept its id), and OVER_REASON/OVER_MESSAGE of a
# new pod asking for 2 (the checkpoint told the new kubelet that fits holds one).
#
# Environment: KUBELET_TS_KUBECONFIG, KUBELET_TS_BOOTSTRAP_KUBECONFIG, KUBELET_TS_CLUSTER_CA and
# KUBELET_TS_K8S_BIN (scripts/cluster_env.sh env); KTS_DP_SUBNET_INDEX (default 0 for upstream,
# 1 for kubelet.ts) picks bridge kts-dp<N>, subnet 10.16<4+N>.0.0/16 and ports 186<N*2>0/1.
set -euo pipefail

DP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:?usage: $0 upstream|kubelet.ts|swap}
kind=$mode
case "$mode" in
upstream) n=${KTS_DP_SUBNET_INDEX:-0} ;;
kubelet.ts) n=${KTS_DP_SUBNET_INDEX:-1} ;;
swap) n=${KTS_DP_SUBNET_INDEX:-2} kind=upstream ;;
*) echo "usage: $0 upstream|kubelet.ts|swap" >&2 && exit 2 ;;
esac
node="kts-dp-${mode/./}"
ns="$node-$(date +%s)"
export KTS_UPSTREAM_ROOT=/tmp/kts-devplugin-$n KTS_UPSTREAM_NODE=$node
export KTS_UPSTREAM_BRIDGE=kts-dp$n KTS_UPSTREAM_SUBNET=10.$((164 + n)).0.0/16
export KTS_UPSTREAM_HEALTHZ_PORT=$((18600 + 2 * n)) KTS_UPSTREAM_PORT=$((18601 + 2 * n))
export KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG=${KUBELET_TS_BOOTSTRAP_KUBECONFIG:?run scripts/cluster_env.sh env}
export KTS_UPSTREAM_CONFIG_EXTRA="nodeStatusUpdateFrequency: 2s"
dp_dir=$KTS_UPSTREAM_ROOT/device-plugins
mkdir -p "$dp_dir"
# the kubelet command, wrapped: a private mount namespace with the device plugin folder bound
wrap=$KTS_UPSTREAM_ROOT/dp-namespace.sh
cat >"$wrap" <<'SH'
#!/bin/sh
d=$1
shift
mkdir -p /var/lib/kubelet/device-plugins &&
  mount --bind "$d" /var/lib/kubelet/device-plugins && exec "$@"
SH
kubelet_command() { # upstream|kubelet.ts
  local inner deno v8
  if [ "$1" = kubelet.ts ]; then
    deno=$(npx -y deno@2.9.6 eval 'console.log(Deno.execPath())')
    v8=$(sed -n 's/^ *"\(--max-semi-space-size[^"]*\)";$/\1/p' "$DP_DIR/v8_flags.ts")
    # every permission: the sample plugin names its socket at run time (docs/permissions.md)
    inner="$deno run -A --v8-flags=$v8 $(dirname "$DP_DIR")/main.ts"
  else
    inner="$(bash "$DP_DIR/peers.sh" dir)/kubelet"
  fi
  printf 'unshare -m --propagation private sh %s %s %s\n' "$wrap" "$dp_dir" "$inner"
}
KTS_UPSTREAM_KUBELET=$(kubelet_command "$kind")
export KTS_UPSTREAM_KUBELET
kubectl() { "$KUBELET_TS_K8S_BIN/kubectl" --kubeconfig "$KUBELET_TS_KUBECONFIG" "$@"; }
log() { printf 'device_plugin_scenario(%s): %s\n' "$kind" "$*" >&2; }
# waits up to $1 seconds for the command to print something non-empty; prints it
wait_for() {
  local secs=$1 out i
  shift
  for ((i = 0; i < secs * 2; i++)); do
    out=$("$@" 2>/dev/null || true)
    [ -n "$out" ] && printf '%s\n' "$out" && return 0
    sleep 0.5
  done
  log "timed out: $*"
  return 1
}
res() { kubectl get node "$node" -o "jsonpath={.status.$1.example\.com/resource}"; }
res_is() { [ "$(res "$1")" = "$2" ] && echo "$2"; }
phase() { kubectl -n "$ns" get pod "$1" -o jsonpath='{.status.phase}'; }
phase_in() { local p; p=$(phase "$1"); case " ${*:2} " in *" $p "*) echo "$p" ;; esac; }

plugin_pid=""
cleanup() {
  [ -n "$plugin_pid" ] && kill "$plugin_pid" 2>/dev/null || true
  # KTS_DP_KEEP_LOG=FILE keeps the kubelet's log (the root goes away)
  if [ -n "${KTS_DP_KEEP_LOG:-}" ]; then
    cp "$KTS_UPSTREAM_ROOT/kubelet.log" "$KTS_DP_KEEP_LOG" 2>/dev/null || true
    cp "$KTS_UPSTREAM_ROOT/plugin.log" "$KTS_DP_KEEP_LOG.plugin" 2>/dev/null || true
  fi
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  bash "$DP_DIR/upstream_kubelet.sh" down >/dev/null 2>&1 || true
  kubectl delete node "$node" >/dev/null 2>&1 || true
}
trap cleanup EXIT

plugin=$(bash "$DP_DIR/peers.sh" sample-device-plugin)
bash "$DP_DIR/upstream_kubelet.sh" up >/dev/null
sock_ready() { [ -S "$dp_dir/kubelet.sock" ] && echo yes; }
wait_for 60 sock_ready >/dev/null || { log "no kubelet.sock in $dp_dir"; exit 1; }
PLUGIN_SOCK_DIR=/var/lib/kubelet/device-plugins setsid nsenter -t "$(cat "$KTS_UPSTREAM_ROOT/kubelet.pid")" \
  -m "$plugin" >"$KTS_UPSTREAM_ROOT/plugin.log" 2>&1 &
plugin_pid=$!
kubectl create namespace "$ns" >/dev/null
wait_for 60 res_is allocatable 2 >/dev/null
echo "CAPACITY=$(res capacity)"
echo "ALLOCATABLE=$(res allocatable)"

pod() { # name count
  cat <<JSON
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","namespace":"$ns"},
 "spec":{"nodeName":"$node","restartPolicy":"Never","terminationGracePeriodSeconds":1,
  "tolerations":[{"operator":"Exists"}],
  "containers":[{"name":"c","image":"${KUBELET_TS_CRI_IMAGE:-kts.local/busybox:latest}",
   "imagePullPolicy":"IfNotPresent","command":["sh","-c","ls /tmp; sleep 3600"],
   "resources":{"limits":{"example.com/resource":"$2"}}}]}}
JSON
}
pod fits 1 | kubectl create -f - >/dev/null
echo "FITS_PHASE=$(wait_for 90 phase_in fits Running Failed)"
crictl() {
  "$(bash "$DP_DIR/peers.sh" dir)/crictl" --runtime-endpoint "unix://$KTS_UPSTREAM_ROOT/cri/containerd.sock" "$@"
}
fits_id() { crictl ps --label "io.kubernetes.pod.name=fits" -q | head -1; }
id=$(wait_for 30 fits_id)
# the plugin's answer: a mount of /tmp/<device> (the name differs: upstream picks from a set)
echo "FITS_TMP=$(crictl logs "$id" 2>&1 | sed -n 's/^Dev-[0-9]*$/Dev-N/p' | sort | uniq -c | tr -s ' ' | sed 's/^ //')"
echo "FITS_MOUNTS=$(crictl inspect "$id" | jq -r '[.status.mounts[] | select(.containerPath | startswith("/tmp/")) | .containerPath + "=" + .hostPath + ":" + (.readonly | tostring)] | map(gsub("Dev-[0-9]+"; "Dev-N")) | join(",")')"
pod over 2 | kubectl create -f - >/dev/null
wait_for 60 phase_in over Failed >/dev/null || true
echo "OVER_PHASE=$(phase over)"
echo "OVER_REASON=$(kubectl -n "$ns" get pod over -o jsonpath='{.status.reason}')"
echo "OVER_MESSAGE=$(kubectl -n "$ns" get pod over -o jsonpath='{.status.message}')"


if [ "$mode" = swap ]; then
  fits_before=$id
  registrations() { grep -c "Device Plugin registered with the Kubelet" "$KTS_UPSTREAM_ROOT/plugin.log" || true; }
  registered_after() { [ "$(registrations)" -gt "$1" ] && echo yes; }
  swap_to() { # kind prefix
    local before
    before=$(registrations)
    rm -f "$dp_dir/kubelet.sock"
    KTS_UPSTREAM_SIGNAL=TERM bash "$DP_DIR/upstream_kubelet.sh" stop-kubelet
    KTS_UPSTREAM_KUBELET=$(kubelet_command "$1") bash "$DP_DIR/upstream_kubelet.sh" up >/dev/null
    # the plugin sees kubelet.sock made again and registers again (upstream's stub waits
    # 10 s first); the Node still shows the old kubelet's last status until then
    wait_for 90 registered_after "$before" >/dev/null || true
    sleep 5
    wait_for 60 res_is allocatable 2 >/dev/null || true
    echo "${2}ALLOCATABLE=$(res allocatable)"
    sleep 5
    echo "${2}FITS_SAME=$([ "$(fits_id)" = "$fits_before" ] && echo yes || echo "no ($(fits_id))")"
    local name="over-${1/./-}"
    pod "$name" 2 | kubectl create -f - >/dev/null
    wait_for 60 phase_in "$name" Failed >/dev/null || true
    echo "${2}OVER_REASON=$(kubectl -n "$ns" get pod "$name" -o jsonpath='{.status.reason}')"
    echo "${2}OVER_MESSAGE=$(kubectl -n "$ns" get pod "$name" -o jsonpath='{.status.message}')"
  }
  swap_to kubelet.ts TO_TS_
  swap_to upstream TO_UPSTREAM_
  exit 0
fi

kill "$plugin_pid"
wait "$plugin_pid" 2>/dev/null || true
plugin_pid=""
wait_for 60 res_is allocatable 0 >/dev/null || true
echo "GONE_CAPACITY=$(res capacity)"
echo "GONE_ALLOCATABLE=$(res allocatable)"
echo "CHECKPOINT_RESOURCES=$(jq -r '.Data.RegisteredDevices | keys | join(",")' \
  "$dp_dir/kubelet_internal_checkpoint")"
# each entry named by its pod (a wrong count then shows whose it is)
names=$(kubectl -n "$ns" get pods -o json | jq -c '[.items[] | {key: .metadata.uid, value: .metadata.name}] | from_entries')
echo "CHECKPOINT_ENTRIES=$(jq -r --argjson names "$names" '[.Data.PodDeviceEntries[]? | ($names[.PodUID] // .PodUID) + "/" + .ContainerName + ":" + .ResourceName + ":" + ([.DeviceIDs[]] | flatten | length | tostring)] | join(",")' \
  "$dp_dir/kubelet_internal_checkpoint")"
