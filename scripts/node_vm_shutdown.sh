#!/usr/bin/env bash
# Graceful node shutdown, kubelet.ts and the upstream kubelet side by side, in the node VM
# (systemd as PID 1, logind, the system bus). Needs the VM up (scripts/node_vm.sh up) and a
# control plane (scripts/cluster_env.sh up) whose KTS_CLUSTER_* settings are in the env.
#
#   bash scripts/node_vm_shutdown.sh [both|kubelet-ts|upstream]
#
# kubelet.ts runs as the shipped binary would: under the permission lists planned for this
# configuration, beside the cgroup agent, which speaks to logind for it (KTS_SHUTDOWN_ALLOW_ALL=1:
# with every permission instead, logind spoken to directly).
#
# For each kubelet in turn, on the guest's containerd: logind's drop-in is removed (delay back
# to 5 s), the kubelet joins the cluster with shutdownGracePeriod 30s /
# shutdownGracePeriodCriticalPods 10s, three pods run (priority 0 with its own grace 5 s that
# exits 3 s after SIGTERM; priority 1000 with grace 60 s that ignores SIGTERM; a
# system-node-critical pod exiting 4 s after SIGTERM), then logind's PrepareForShutdown(true)
# is emitted on the system bus the way upstream's e2e_node test does (a fake sender, so no real
# power-off). The timeline (seconds after the signal) of SIGTERM/exit in each container, of
# each pod's phase/reason/DisruptionTarget in the API server and of the node's Ready
# condition, the inhibitors, logind's InhibitDelayMaxUSec and the state file are written to
# $KTS_VM_RUN/share/shutdown/<kubelet>.timeline, then printed side by side.
set -euo pipefail
which=${1:-both}
here=$(cd "$(dirname "$0")/.." && pwd)
vm() { bash "$here/scripts/node_vm.sh" "$@"; }
run=${KTS_VM_RUN:-/tmp/kts-vm}
out=$run/share/shutdown
croot=${KTS_CLUSTER_ROOT:-/tmp/kts-cluster}
cport=${KTS_CLUSTER_PORT:-16443}
vm status >/dev/null || {
  echo "node_vm_shutdown: the VM is not running; run: bash scripts/node_vm.sh up" >&2
  exit 1
}
kubectl() { "$(cat "$croot/bin-dir")/kubectl" --kubeconfig "$croot/admin.kubeconfig" "$@"; }
kubectl get --raw /readyz >/dev/null || {
  echo "node_vm_shutdown: no API server at $croot; run: bash scripts/cluster_env.sh up" >&2
  exit 1
}
peers=$(bash "$here/scripts/peers.sh" dir)
mkdir -p "$out"
rm -f "$out"/*.timeline "$out"/*.log
(cd "$here" && npx -y deno@2.9.6 task bundle --out="$out/kubelet.js" >/dev/null &&
  npx -y deno@2.9.6 task bundle --entry=src/cgroup_agent/main.ts --out="$out/agent.js" >/dev/null &&
  npx -y deno@2.9.6 task bundle --entry=scripts/permission_lists.ts --out="$out/lists.js" >/dev/null)
cp "$croot/admin.kubeconfig" "$out/kubeconfig"

# the guest reaches the API server at its own 127.0.0.1 (the serving certificate's address)
key=$(cat "$run/base")/id_ed25519
ssh -q -N -i "$key" -p "${KTS_VM_SSH_PORT:-12600}" -o StrictHostKeyChecking=no \
  -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ExitOnForwardFailure=yes \
  -R "$cport:127.0.0.1:$cport" root@127.0.0.1 &
tunnel=$!
trap 'kill $tunnel 2>/dev/null || true' EXIT

cat >"$out/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: systemd
failSwapOn: false
shutdownGracePeriod: 30s
shutdownGracePeriodCriticalPods: 10s
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
EOF

kubectl apply -f - >/dev/null <<EOF
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: kts-high
value: 1000
EOF

# pod <name> <namespace> <priorityClassName or -> <terminationGracePeriodSeconds> <linger after TERM, or "ignore">
pod() {
  local class=""
  [ "$3" != - ] && class="priorityClassName: $3"
  local on_term="echo \"$1 TERM \$(date +%s.%N)\" >>/term/log; sleep $5; echo \"$1 EXIT \$(date +%s.%N)\" >>/term/log; exit 0"
  [ "$5" = ignore ] && on_term="echo \"$1 TERM \$(date +%s.%N)\" >>/term/log"
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $2
spec:
  nodeName: kts-node
  $class
  terminationGracePeriodSeconds: $4
  tolerations: [{ operator: Exists }]
  containers:
  - name: app
    image: kts.local/busybox:latest
    imagePullPolicy: Never
    command: ["sh", "-c", 'trap ''$on_term'' TERM; echo "$1 START \$(date +%s.%N)" >>/term/log; while :; do sleep 1 & wait \$!; done']
    volumeMounts: [{ name: term, mountPath: /term }]
  volumes:
  - name: term
    hostPath: { path: /var/lib/kts-shutdown-term }
---
EOF
}
pods() {
  pod regular default - 5 3
  pod high default kts-high 60 ignore
  pod critical kube-system system-node-critical 30 4
}

cat >"$out/guest.sh" <<'GUEST'
# guest.sh start <name> <kubelet command...> | emit | stop <name>
set -uo pipefail
# crictl's default 2 s per call is too short for an emulated guest: a cleanup that timed out
# would leave the last run's containers behind
crictl() { /peers/*/bin/crictl --timeout=120s --runtime-endpoint unix:///run/containerd/containerd.sock "$@" 2>/dev/null; }
case $1 in
start)
  name=$2
  shift 2
  rm -f /etc/systemd/logind.conf.d/99-kubelet.conf
  systemctl kill -s HUP systemd-logind
  sleep 2
  rm -rf /var/lib/kts-shutdown-term && mkdir -p /var/lib/kts-shutdown-term
  root=/var/lib/kts-shutdown-$name
  # a stopped kubelet leaves its pods' tmpfs volumes mounted
  awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r umount
  rm -rf "$root" && mkdir -p "$root"
  cp /scratch/shutdown/kubeconfig /root/shutdown.kubeconfig
  args=(--config /scratch/shutdown/config.yaml --root-dir "$root"
    --kubeconfig /root/shutdown.kubeconfig --hostname-override=kts-node)
  rm -f /run/kts-shutdown-agent.pid
  if [ "${LISTS:-}" = 1 ]; then
    # the shipped way: the planned lists, logind through the cgroup agent
    setsid deno run -A /root/agent.js --socket="$root/cgroup-agent.sock" --cgroup-root=/ \
      --cgroup-driver=systemd >"/scratch/shutdown/$name-agent.log" 2>&1 &
    echo $! >/run/kts-shutdown-agent.pid
    for _ in $(seq 1 900); do [ -S "$root/cgroup-agent.sock" ] && break; sleep 1; done
    mapfile -t flags < <(deno run -A /root/lists.js --permissions-from "${args[@]:1}")
    [ "${flags[0]:-}" = --no-prompt ] || { echo "$name: no permission lists planned" >&2; exit 1; }
    printf '%s\n' "${flags[@]}" >"/scratch/shutdown/$name.lists"
    set -- "$1" "$2" "${flags[@]}" "${@:3}"
  fi
  setsid "$@" "${args[@]}" >"/scratch/shutdown/$name.log" 2>&1 &
  echo $! >/run/kts-shutdown.pid
  ;;
lock)
  # waits up to 120 s for the kubelet's delay lock; prints how long that took
  for i in $(seq 0 120); do
    busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager \
      ListInhibitors | grep -q '"kubelet"' && { echo "lock held ${i}s after the node was Ready"; exit 0; }
    sleep 1
  done
  echo "no lock 120s after the node was Ready"
  ;;
facts)
  echo "inhibitors: $(busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager ListInhibitors | tr '\n' ' ')"
  echo "InhibitDelayMaxUSec: $(busctl get-property org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager InhibitDelayMaxUSec)"
  echo "drop-in: $(tr '\n' '|' 2>/dev/null </etc/systemd/logind.conf.d/99-kubelet.conf)"
  ;;
emit)
  date +%s.%N
  busctl emit /org/freedesktop/login1 org.freedesktop.login1.Manager PrepareForShutdown b true
  ;;
stop)
  name=$2
  echo "state file: $(cat /var/lib/kts-shutdown-$name/graceful_node_shutdown_state 2>/dev/null)"
  echo "container log:"
  cat /var/lib/kts-shutdown-term/log
  kill "$(cat /run/kts-shutdown.pid)" 2>/dev/null
  [ -f /run/kts-shutdown-agent.pid ] && kill "$(cat /run/kts-shutdown-agent.pid)" 2>/dev/null
  sleep 3
  crictl rmp -fa >/dev/null
  systemctl stop kubepods.slice 2>/dev/null
  systemctl reset-failed 2>/dev/null
  ;;
esac
GUEST

one() {
  local name=$1 cmd=$2 env=${3:-} tl=$out/$1.timeline
  echo "== $name" >"$tl"
  kubectl delete node kts-node --ignore-not-found >/dev/null
  vm exec "$env bash /scratch/shutdown/guest.sh start $name $cmd"
  for _ in $(seq 1 300); do
    kubectl get node kts-node >/dev/null 2>&1 && break
    sleep 2
  done
  kubectl wait --for=condition=Ready node/kts-node --timeout=600s >/dev/null
  vm exec "bash /scratch/shutdown/guest.sh lock" >>"$tl"
  vm exec "bash /scratch/shutdown/guest.sh facts" | sed 's/^/before: /' >>"$tl"
  pods | kubectl apply -f - >/dev/null
  kubectl wait --for=condition=Ready pod/regular pod/high --timeout=600s >/dev/null
  kubectl -n kube-system wait --for=condition=Ready pod/critical --timeout=600s >/dev/null
  sleep 5
  local t0
  t0=$(vm exec "bash /scratch/shutdown/guest.sh emit")
  echo "signal at $t0" >>"$tl"
  local last="" line i
  for i in $(seq 1 90); do
    line=$(kubectl get pods -A -o json | jq -r '[.items[] | select(.metadata.name|test("^(regular|high|critical)$")) |
        "\(.metadata.name)=\(.status.phase)/\(.status.reason // "-")/DT:\(([.status.conditions[]? | select(.type=="DisruptionTarget") | .status] | first) // "-")"] | sort | join(" ")')
    line="$line node: $(kubectl get node kts-node -o json | jq -r '.status.conditions[] | select(.type=="Ready") | "\(.status) \(.reason) \(.message)"')"
    if [ "$line" != "$last" ]; then
      printf 'api +%5.1fs %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$line" >>"$tl"
      last=$line
    fi
    case $line in *regular=Failed*high=Failed*critical=Failed* | *critical=Failed*high=Failed*regular=Failed*) ;; *)
      sleep 1
      continue
      ;;
    esac
    [ $i -gt 5 ] && break
    sleep 1
  done
  kubectl get pod -n kube-system critical -o json | jq -c '{reason: .status.reason, message: .status.message, phase: .status.phase, conditions: [.status.conditions[] | select(.type=="DisruptionTarget") | {type, status, reason, message}]}' | sed 's/^/critical status: /' >>"$tl"
  vm exec "bash /scratch/shutdown/guest.sh facts" | sed 's/^/after: /' >>"$tl"
  vm exec "bash /scratch/shutdown/guest.sh stop $name" | awk -v t0="$t0" '
    $2 == "TERM" || $2 == "EXIT" || $2 == "START" { printf "container +%5.1fs %s %s\n", $3 - t0, $1, $2; next } { print }' >>"$tl"
  kubectl delete pod regular high --force --grace-period=0 >/dev/null 2>&1 || true
  kubectl -n kube-system delete pod critical --force --grace-period=0 >/dev/null 2>&1 || true
  grep -i "shutdown" "$out/$name.log" | head -40 | sed 's/^/log: /' >>"$tl"
}

if [ "$which" = both ] || [ "$which" = kubelet-ts ]; then
  vm exec "cp /scratch/shutdown/kubelet.js /scratch/shutdown/agent.js /scratch/shutdown/lists.js /root/"
  if [ "${KTS_SHUTDOWN_ALLOW_ALL:-}" = 1 ]; then
    one kubelet-ts "deno run -A /root/kubelet.js"
  else
    one kubelet-ts "deno run /root/kubelet.js" LISTS=1
  fi
fi
if [ "$which" = both ] || [ "$which" = upstream ]; then
  one upstream "/peers/$(basename "$(dirname "$peers")")/bin/kubelet"
fi
for f in "$out"/*.timeline; do
  grep -v '^log: ' "$f"
  echo
done
