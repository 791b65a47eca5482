#!/usr/bin/env bash
# The binary swap on the node VM (cgroup v2, systemd, containerd with the systemd cgroup
# driver): one standalone node with static pods moves upstream kubelet → kubelet.ts → upstream
# kubelet, each stopped with SIGTERM and the next started with the same config file and root
# dir, as scripts/swap.sh does on the host (docs/swap.md). kubelet.ts runs as the shipped
# binary would: under the permission lists planned for its configuration, beside the cgroup
# agent (--cgroup-driver=systemd). After each start, once /healthz answers and the kubelet had
# time to sync, the runtime's containers and sandboxes are listed:
#   C|S <id> <state> <pod namespace>/<pod name> <container> <attempt>
# and must not change across the swaps.
#
#   scripts/node_vm_swap.sh        (the VM must be up: scripts/node_vm.sh up)
#
# Environment: KTS_SWAP_SETTLE (seconds after /healthz before listing, default 60),
# KTS_VM_SWAP_TIMEOUT (seconds to wait for the guest's run, default 7200).
# Output in $KTS_VM_RUN/share/vmswap: the three lists, the kubelets' and the agent's logs.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
vm() { bash "$here/scripts/node_vm.sh" "$@"; }
run=${KTS_VM_RUN:-/tmp/kts-vm}
out=$run/share/vmswap
settle=${KTS_SWAP_SETTLE:-60}
# running = its qemu lives (ssh may be too slow to answer a status on a loaded host)
kill -0 "$(cat "$run/qemu.pid" 2>/dev/null)" 2>/dev/null || {
  echo "node_vm_swap: the VM is not running; run: bash scripts/node_vm.sh up" >&2
  exit 1
}
peers=$(bash "$here/scripts/peers.sh" dir)
rm -rf "$out" && mkdir -p "$out/manifests"
(cd "$here" && npx -y deno@2.9.6 task bundle --out="$out/kubelet.js" >/dev/null &&
  npx -y deno@2.9.6 task bundle --entry=src/cgroup_agent/main.ts --out="$out/agent.js" >/dev/null &&
  npx -y deno@2.9.6 task bundle --entry=scripts/permission_lists.ts --out="$out/lists.js" >/dev/null)

cat >"$out/config.yaml" <<CONFIG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /scratch/vmswap/manifests
fileCheckFrequency: 5s
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: systemd
failSwapOn: false
enableServer: false
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
CONFIG
pod() {
  cat >"$out/manifests/$1.yaml" <<POD
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
spec:
  containers:
  - name: app
    image: kts.local/busybox:latest
    imagePullPolicy: Never
    command: ["sleep", "86400"]
    resources: $2
POD
}
pod guaranteed '{ requests: { cpu: 100m, memory: 32Mi }, limits: { cpu: 100m, memory: 32Mi } }'
pod burstable '{ requests: { cpu: 50m } }'

cat >"$out/guest.sh" <<'GUEST'
set -uo pipefail
settle=$1 upstream=$2
dir=/scratch/vmswap root=/var/lib/kts-vmswap
# crictl's default 2 s per call is too short for an emulated guest: a cleanup that timed out
# would leave the last run's containers behind
crictl() { /peers/*/bin/crictl --timeout=120s --runtime-endpoint unix:///run/containerd/containerd.sock "$@" 2>/dev/null; }
if ! grep -q "SystemdCgroup = true" /etc/containerd/config.toml; then
  sed -i "s/SystemdCgroup = .*/SystemdCgroup = true/" /etc/containerd/config.toml
  systemctl restart containerd
fi
healthy() ( # the kubelet's /healthz on 10248 says ok (bash's /dev/tcp: the guest has no curl)
  exec 3<>/dev/tcp/127.0.0.1/10248 || exit 1
  printf 'GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
  body=$(cat <&3)
  [ "${body##*$'\n'}" = ok ]
)
kubelet=
start() { # name
  if [ "$1" = upstream ]; then
    setsid "$upstream" --config "$dir/config.yaml" --root-dir "$root" \
      --hostname-override=kts-node >>"$dir/upstream.log" 2>&1 &
  else
    mapfile -t flags < <(deno run -A /root/lists.js --permissions-from "$dir/config.yaml" \
      --root-dir="$root" --hostname-override=kts-node)
    setsid deno run "${flags[@]}" /root/kubelet.js --config "$dir/config.yaml" --root-dir "$root" \
      --hostname-override=kts-node >>"$dir/kubelet-ts.log" 2>&1 &
  fi
  kubelet=$!
  local i
  for i in $(seq 1 900); do healthy 2>/dev/null && break; sleep 2; done
  healthy 2>/dev/null || { echo "$1 never answered /healthz" >&2; return 1; }
}
stop() {
  kill -TERM "$kubelet"
  wait "$kubelet" 2>/dev/null
}
# C|S <id> <state> <ns>/<pod> <container> <attempt>, sorted
snapshot() {
  { crictl pods -o json; echo; crictl ps -a -o json; } | deno eval '
    const text = await new Response(Deno.stdin.readable).text();
    const [pods, ctrs] = text.split(/\n(?=\{)/).map((t) => JSON.parse(t));
    const lines = [];
    for (const p of pods.items ?? []) {
      lines.push(`S ${p.id} ${p.state} ${p.metadata.namespace}/${p.metadata.name} - ${p.metadata.attempt ?? 0}`);
    }
    for (const c of ctrs.containers ?? []) {
      const l = c.labels ?? {};
      lines.push(`C ${c.id} ${c.state} ${l["io.kubernetes.pod.namespace"]}/${l["io.kubernetes.pod.name"]} ${c.metadata.name} ${c.metadata.attempt ?? 0}`);
    }
    console.log(lines.sort().join("\n"));'
}
rm -rf "$root" && mkdir -p "$root"
setsid deno run -A /root/agent.js --socket="$root/cgroup-agent.sock" --cgroup-root=/ \
  --cgroup-driver=systemd >"$dir/agent.log" 2>&1 &
agent=$!
status=0
start upstream || status=1
for _ in $(seq 1 300); do
  [ "$(crictl ps -q --state running | wc -l)" -ge 2 ] && break
  sleep 2
done
sleep "$settle"
snapshot >"$dir/1-upstream.list"
stop
start kubelet-ts || status=1
sleep "$settle"
snapshot >"$dir/2-kubelet-ts.list"
grep -q 'Managing cgroups through the cgroup agent' "$dir/kubelet-ts.log" ||
  { echo "kubelet.ts did not use the cgroup agent" >&2; status=1; }
stop
start upstream || status=1
sleep "$settle"
snapshot >"$dir/3-upstream.list"
stop
kill "$agent"
crictl rmp -fa >/dev/null
systemctl stop kubepods.slice 2>/dev/null
systemctl reset-failed 2>/dev/null
rm -rf "$root"
exit "$status"
GUEST

# detached in the guest, the host watching the share (see scripts/node_vm_cgroups.sh)
cat >"$out/all.sh" <<ALL
cp /scratch/vmswap/*.js /root/ &&
  bash /scratch/vmswap/guest.sh $settle /peers/$(basename "$(dirname "$peers")")/bin/kubelet
echo \$? >/scratch/vmswap/done
ALL
vm launch "bash /scratch/vmswap/all.sh >/scratch/vmswap/run.log 2>&1"
for ((i = 0; i < ${KTS_VM_SWAP_TIMEOUT:-7200}; i += 5)); do
  [ -s "$out/done" ] && break
  sleep 5
done
cat "$out/run.log" 2>/dev/null || true
[ "$(cat "$out/done" 2>/dev/null)" = 0 ] || {
  echo "node_vm_swap: the guest's run did not finish well (see $out)" >&2
  exit 1
}
fail=0
for step in 2-kubelet-ts 3-upstream; do
  prev=$( [ "$step" = 2-kubelet-ts ] && echo 1-upstream || echo 2-kubelet-ts)
  if diff "$out/$prev.list" "$out/$step.list" >"$out/$step.diff"; then
    echo "node_vm_swap: $prev → $step: 0 of $(grep -c . "$out/$step.list") containers and sandboxes changed"
  else
    echo "node_vm_swap: $prev → $step: changed (< before, > after):" >&2
    cat "$out/$step.diff" >&2
    fail=1
  fi
done
[ "$(grep -c '^C .* CONTAINER_RUNNING ' "$out/1-upstream.list")" -ge 2 ] ||
  { echo "node_vm_swap: the pods did not run on the upstream kubelet" >&2; fail=1; }
exit "$fail"
