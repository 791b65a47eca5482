#!/usr/bin/env bash
# Upstream's NodeConformance tests (the e2e.test binary, as scripts/conformance.ts runs it) against
# a kubelet in the node VM: cgroup v2, systemd as PID 1, containerd with the systemd cgroup
# driver, kubeadm-like kubelet settings (cgroupDriver systemd, x509 client CA + webhook
# authentication, Webhook authorization, TLS bootstrap, rotateCertificates).
#
#   bash scripts/node_vm_conformance.sh [upstream|kubelet-ts|both] [focus-regex]
#
# Needs the VM up with the kubelet's port forwarded under the same number on both sides, e.g.
#   KTS_VM_FORWARD="12710:12710" bash scripts/node_vm.sh up
# (KTS_VM_CONF_PORT, default 12710, is the kubelet's `port`: the API server takes it from the
# Node's daemon endpoints). The default focus is SUBSET below; a focus-regex replaces it.
#
# Per kubelet, one after the other in the same guest: a fresh control plane on the host
# (scripts/cluster_env.sh under KTS_CLUSTER_ROOT, default /tmp/kts-vm-conf/cluster, with the
# extra SAN 10.0.2.2, the host's loopback as the guest sees it, and the API server reaching
# kubelets by their Hostname address); the kubelet joins it from the guest as node `localhost`
# (so the API server dials localhost:<port>, the qemu forward) with its InternalIP 10.0.2.15;
# the guest's containerd pulls the tests' 127.0.0.1:5000 images from the host's registry
# through hosts.toml; then ginkgo runs the suite on the host. kubelet.ts runs as the shipped
# bundle under its planned permission lists beside the cgroup agent. Between the kubelets the
# guest's pods, cgroups, kubelet state and pulled test images are removed.
#
# Results in $KTS_VM_CONF_OUT (default /tmp/kts-vm-conf/report): <upstream|ours>/junit.xml,
# e2e.log, kubelet.log, results.json and summary.md, scored by scripts/conformance.ts
# --summarize (docs/conformance.md). KTS_VM_CONF_PROCS: ginkgo processes (default 4);
# KTS_VM_CONF_TIMEOUT: seconds to wait for the node to be Ready (default 1800).
# KTS_VM_CONF_SELECTION=<name>: a slice of `--suite=node` instead of NodeConformance, its label
# filter and focus from SELECTIONS in scripts/conformance.ts (a focus-regex still narrows it),
# scored as that suite (e.g. storage-local: the local PV tests need a PID 1 whose mount
# namespace a privileged pod can enter, as the guest's systemd is).
# KTS_VM_CONF_HOST_PATHS="<dir> ...": host directories kubelet.ts's lists grant (their
# --host-path), e.g. /tmp, where the local PV tests make their volumes.
set -euo pipefail

which=${1:-both}
here=$(cd "$(dirname "$0")/.." && pwd)
vm() { bash "$here/scripts/node_vm.sh" "$@"; }
run=${KTS_VM_RUN:-/tmp/kts-vm}
share=$run/share/vmconf
out=${KTS_VM_CONF_OUT:-/tmp/kts-vm-conf/report}
port=${KTS_VM_CONF_PORT:-12710}
procs=${KTS_VM_CONF_PROCS:-4}
export KTS_CLUSTER_ROOT=${KTS_CLUSTER_ROOT:-/tmp/kts-vm-conf/cluster}
export KTS_CLUSTER_PORT=${KTS_CLUSTER_PORT:-16843}
export KTS_CLUSTER_ETCD_PORT=${KTS_CLUSTER_ETCD_PORT:-24190}
export KTS_CLUSTER_KCM_PORT=${KTS_CLUSTER_KCM_PORT:-10657}
export KTS_CLUSTER_SCHEDULER_PORT=${KTS_CLUSTER_SCHEDULER_PORT:-10659}
export KTS_CLUSTER_EXTRA_SANS=IP:10.0.2.2
export KTS_CLUSTER_KUBELET_ADDRESS_TYPES=Hostname
node=localhost

# The subset: NodeConformance tests over pods, container lifecycle, probes, volumes, security
# context, resources and logs/exec that start one or two pods each (a pod start takes 40-47 s in
# the emulated guest; the whole label takes hours there).
SUBSET=(
  "[sig-node] Pods should get a host IP"
  "[sig-node] Pods should be submitted and removed"
  "[sig-node] Pods should support remote command execution over websockets"
  "[sig-node] Pods should support retrieving logs from the container over websockets"
  "[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to logs"
  "[sig-node] Containers should be able to override the image's default command and arguments"
  "[sig-node] InitContainer [NodeConformance] should invoke init containers on a RestartNever pod"
  "[sig-node] Container Runtime blackbox test on terminated container should report termination message from file when pod succeeds and TerminationMessagePolicy FallbackToLogsOnError is set"
  "[sig-node] Container Runtime blackbox test when running a container with a new image should be able to pull image"
  "[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook properly"
  "[sig-node] Probing container should be restarted with a exec \"cat /tmp/health\" liveness probe"
  "[sig-node] Probing container should be restarted with a /healthz http liveness probe"
  "[sig-node] Security Context When creating a container with runAsUser should run the container with uid 65534"
  "[sig-node] Security Context When creating a pod with readOnlyRootFilesystem should run the container with readonly rootfs when readOnlyRootFilesystem=true"
  "[sig-node] Security Context when creating containers with AllowPrivilegeEscalation should not allow privilege escalation when false"
  "[sig-node] Downward API should provide container's limits.cpu/memory and requests.cpu/memory as env vars"
  "[sig-node] Downward API should provide default limits.cpu/memory from node allocatable"
  "[sig-node] Variable Expansion should allow composing env vars into new env vars"
  "[sig-node] Secrets should be consumable from pods in env vars"
  "[sig-storage] ConfigMap should be consumable from pods in volume with mappings"
  "[sig-storage] Secrets should be consumable from pods in volume as non-root with defaultMode and fsGroup set"
  "[sig-storage] EmptyDir volumes should support (non-root,0644,tmpfs)"
  "[sig-storage] EmptyDir volumes volume on default medium should have the correct mode"
  "[sig-storage] Downward API volume should provide container's cpu limit"
  "[sig-storage] Projected combined should project all components that make up the projection API"
)
# each name as a regular expression of itself up to the labels that follow it, all of them as
# alternatives
subset_focus() {
  local name sep="" re=""
  for name in "${SUBSET[@]}"; do
    re+=$sep$(printf '%s' "$name" | sed 's/[][()*.^$+?{}|\\/]/\\&/g')' \['
    sep="|"
  done
  printf '%s' "$re"
}
suite=conformance labels=NodeConformance
if [ -n "${KTS_VM_CONF_SELECTION:-}" ]; then
  selection() { # <labels|focus>: that field of the named slice
    (cd "$here" && npx -y deno@2.9.6 eval "import { SELECTIONS } from './scripts/conformance.ts';
      const s = SELECTIONS[Deno.args[0]];
      if (!s) { console.error('KTS_VM_CONF_SELECTION: no slice ' + Deno.args[0] + '; one of ' + Object.keys(SELECTIONS).join(', ')); Deno.exit(2); }
      console.log(s[Deno.args[1]]);" "$KTS_VM_CONF_SELECTION" "$1")
  }
  suite=node
  labels=$(selection labels)
  focus=${2:-$(selection focus)}
else
  focus=${2:-$(subset_focus)}
fi

kill -0 "$(cat "$run/qemu.pid" 2>/dev/null)" 2>/dev/null || {
  echo "node_vm_conformance: the VM is not running; run: KTS_VM_FORWARD=\"$port:$port\" bash scripts/node_vm.sh up" >&2
  exit 1
}
log() { printf 'node_vm_conformance: %s\n' "$*" >&2; }

peers=$(bash "$here/scripts/peers.sh" dir)
e2e=$(bash "$here/scripts/peers.sh" build-e2e)
# the shared containerd's registry on 127.0.0.1:5000 with the test images
bash "$here/scripts/cri_env.sh" up >/dev/null
bash "$here/scripts/conformance/images.sh" "$e2e" >/dev/null
rm -rf "$share" && mkdir -p "$share"
if [ "$which" != upstream ]; then
  (cd "$here" && npx -y deno@2.9.6 task bundle --out="$share/kubelet.js" >/dev/null &&
    npx -y deno@2.9.6 task bundle --entry=src/cgroup_agent/main.ts --out="$share/agent.js" >/dev/null &&
    npx -y deno@2.9.6 task bundle --entry=scripts/permission_lists.ts --out="$share/lists.js" >/dev/null)
fi

cat >"$share/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: systemd
failSwapOn: false
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
rotateCertificates: true
# the guest's CNI subnet (/etc/cni/net.d/10-kts.conflist): the pod IPs kubelet.ts's lists must
# let probes and httpGet hooks reach (docs/permissions.md); upstream ignores it with a cluster
podCIDR: 10.88.0.0/16
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: /var/lib/kts-vmconf/ca.crt
authorization:
  mode: Webhook
EOF

cat >"$share/guest.sh" <<'GUEST'
# guest.sh prepare | start <upstream|kubelet-ts> <upstream kubelet> | stop <name>
set -uo pipefail
dir=/scratch/vmconf root=/var/lib/kubelet etc=/var/lib/kts-vmconf
crictl() { /peers/*/bin/crictl --timeout=120s --runtime-endpoint unix:///run/containerd/containerd.sock "$@" 2>/dev/null; }
case $1 in
prepare)
  # the tests' 127.0.0.1:5000/... images come from the host's registry (10.0.2.2 in here)
  mkdir -p /etc/containerd/certs.d/127.0.0.1:5000
  printf '%s\n' 'server = "http://10.0.2.2:5000"' '[host."http://10.0.2.2:5000"]' \
    '  capabilities = ["pull", "resolve"]' >/etc/containerd/certs.d/127.0.0.1:5000/hosts.toml
  sed -i 's|config_path = ""|config_path = "/etc/containerd/certs.d"|; s/SystemdCgroup = .*/SystemdCgroup = true/' \
    /etc/containerd/config.toml
  systemctl restart containerd
  # what an interrupted run left behind
  bash "$0" stop leftover
  ;;
start)
  name=$2 upstream=$3
  rm -rf "$etc" && mkdir -p "$etc" && cp "$dir/ca.crt" "$dir/bootstrap.kubeconfig" "$etc/"
  mkdir -p "$root"
  args=(--config "$dir/config.yaml" --root-dir "$root" --cert-dir "$root/pki"
    --bootstrap-kubeconfig "$etc/bootstrap.kubeconfig" --kubeconfig "$etc/kubelet.kubeconfig"
    --hostname-override=localhost --node-ip=10.0.2.15 --v=2)
  rm -f /run/kts-vmconf-agent.pid
  if [ "$name" = upstream ]; then
    setsid "$upstream" "${args[@]}" >"$dir/$name.log" 2>&1 </dev/null &
  else
    cp "$dir"/*.js /root/
    setsid deno run -A /root/agent.js --socket="$root/cgroup-agent.sock" --cgroup-root=/ \
      --cgroup-driver=systemd >"$dir/agent.log" 2>&1 </dev/null &
    echo $! >/run/kts-vmconf-agent.pid
    for _ in $(seq 1 900); do [ -S "$root/cgroup-agent.sock" ] && break; sleep 1; done
    hostpaths=()
    [ -s "$dir/host-paths" ] && mapfile -t hostpaths < <(sed 's/^/--host-path=/' "$dir/host-paths")
    mapfile -t flags < <(deno run -A /root/lists.js "${hostpaths[@]}" --permissions-from "${args[@]:1}")
    [ "${flags[0]:-}" = --no-prompt ] || { echo "$name: no permission lists planned" >&2; exit 1; }
    printf '%s\n' "${flags[@]}" >"$dir/$name.lists"
    setsid deno run "${flags[@]}" /root/kubelet.js "${args[@]}" >"$dir/$name.log" 2>&1 </dev/null &
  fi
  echo $! >/run/kts-vmconf.pid
  ;;
stop)
  # the kubelet, then its pods, cgroups, state and the pulled test images
  kill "$(cat /run/kts-vmconf.pid)" 2>/dev/null
  [ -f /run/kts-vmconf-agent.pid ] && kill "$(cat /run/kts-vmconf-agent.pid)" 2>/dev/null
  sleep 5
  crictl rmp -fa >/dev/null
  crictl images -o json | grep -o '"127\.0\.0\.1:5000/[^"]*"' | tr -d '"' | xargs -r -n1 \
    /peers/*/bin/crictl --timeout=120s --runtime-endpoint unix:///run/containerd/containerd.sock rmi >/dev/null 2>&1
  systemctl stop kubepods.slice 2>/dev/null
  systemctl reset-failed 2>/dev/null
  # a stopped kubelet leaves its pods' tmpfs volumes mounted
  awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r umount
  awk '$2 ~ "^/run/kubelet.ts/" { print $2 }' /proc/mounts | sort -r | xargs -r umount
  rm -rf "$root" /run/kubelet.ts/memory/* /var/log/pods/* /var/log/containers/* "$etc"
  echo stopped >"$dir/$2.stopped"
  ;;
esac
GUEST

vm_run() { # <marker> <guest.sh args>: detached in the guest, waiting for its marker file
  local marker=$1
  shift
  rm -f "$share/$marker"
  vm launch "bash /scratch/vmconf/guest.sh $* >>/scratch/vmconf/guest.log 2>&1; echo \$? >/scratch/vmconf/$marker"
  for ((i = 0; i < 1800; i += 5)); do
    [ -s "$share/$marker" ] && return 0
    sleep 5
  done
  log "the guest did not finish 'guest.sh $*' within 30 minutes"
  return 1
}

kubectl() { "$(cat "$KTS_CLUSTER_ROOT/bin-dir")/kubectl" --kubeconfig "$KTS_CLUSTER_ROOT/admin.kubeconfig" "$@"; }

one() { # <upstream|kubelet-ts>
  local name=$1 kind=$1 t0 load0
  [ "$name" = kubelet-ts ] && kind=ours
  local dest=$out/$kind
  rm -rf "$dest" && mkdir -p "$dest"
  log "$name: fresh control plane"
  bash "$here/scripts/cluster_env.sh" down >/dev/null 2>&1
  bash "$here/scripts/cluster_env.sh" up >/dev/null
  cp "$KTS_CLUSTER_ROOT/pki/ca.crt" "$share/ca.crt"
  tr ' ' '\n' <<<"${KTS_VM_CONF_HOST_PATHS:-}" | sed '/^$/d' >"$share/host-paths"
  sed "s|server: https://127.0.0.1:$KTS_CLUSTER_PORT|server: https://10.0.2.2:$KTS_CLUSTER_PORT|" \
    "$KTS_CLUSTER_ROOT/bootstrap.kubeconfig" >"$share/bootstrap.kubeconfig"
  log "$name: starting the kubelet in the guest"
  t0=$SECONDS
  vm_run "$name.started" start "$name" "/peers/$(basename "$(dirname "$peers")")/bin/kubelet"
  local ready=""
  for ((i = 0; i < ${KTS_VM_CONF_TIMEOUT:-1800}; i += 5)); do
    if [ "$(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}' 2>/dev/null)" = True/ ]; then
      ready=1
      break
    fi
    sleep 5
  done
  [ -n "$ready" ] || log "$name: node $node not Ready and untainted after ${KTS_VM_CONF_TIMEOUT:-1800} s"
  log "$name: node Ready after $((SECONDS - t0)) s; running the suite ($procs processes)"
  t0=$SECONDS
  load0=$(cut -d' ' -f1 /proc/loadavg)
  (while sleep 60; do cut -d' ' -f1 /proc/loadavg; done) >"$dest/load" &
  local loadwatch=$!
  if [ -n "$ready" ]; then
    (cd "$dest" && KUBE_TEST_REPO_LIST="$here/scripts/conformance/repo-list.yaml" \
      PATH="$(cat "$KTS_CLUSTER_ROOT/bin-dir"):$PATH" "$e2e/ginkgo" --procs="$procs" --timeout=3h \
      --focus="$focus" --label-filter="$labels" --silence-skips --no-color \
      --output-dir="$dest" --junit-report=junit.xml "$e2e/e2e.test" -- \
      --kubeconfig="$KTS_CLUSTER_ROOT/admin.kubeconfig" --provider=skeleton \
      --kubectl-path="$(cat "$KTS_CLUSTER_ROOT/bin-dir")/kubectl" --allowed-not-ready-nodes=0 \
      --dump-logs-on-failure=true >"$dest/e2e.log" 2>&1) || true
  fi
  local seconds=$((SECONDS - t0))
  kill "$loadwatch" 2>/dev/null || true
  log "$name: suite done in $seconds s (host load at start $load0, per minute: $(tr '\n' ' ' <"$dest/load"))"
  vm_run "$name.stopped-rc" stop "$name" || true
  cp "$share/$name.log" "$dest/kubelet.log" 2>/dev/null || true
  bash "$here/scripts/cluster_env.sh" down >/dev/null 2>&1
  jq -n --argjson s "$seconds" --arg f "$focus" --arg l "$load0 $(tr '\n' ' ' <"$dest/load")" \
    --arg suite "$suite" --arg labels "$labels" \
    '{seconds: $s, suite: $suite, labelFilter: $labels, focus: $f, skip: "", load: $l}' \
    >"$dest/results.json"
}

vm_run prepared prepare
case $which in
upstream) one upstream ;;
kubelet-ts) one kubelet-ts ;;
both)
  one upstream
  one kubelet-ts
  ;;
*)
  echo "usage: $0 [upstream|kubelet-ts|both] [focus-regex]" >&2
  exit 2
  ;;
esac
# scored and summarized the way scripts/conformance.ts does for its own runs
(cd "$here" && npx -y deno@2.9.6 run -A scripts/conformance.ts --summarize --suite="$suite" --out="$out")
sed -n '1,/^## Every test/p' "$out/summary.md"
# exit 1 when a kubelet run this time failed a test or ran none (for CI)
status=0
for kind in upstream ours; do
  [ "$which" = both ] || [ "$which" = "$kind" ] || { [ "$kind" = ours ] && [ "$which" = kubelet-ts ]; } || continue
  if ! grep -q 'status="passed"' "$out/$kind/junit.xml" 2>/dev/null || grep -q '<failure' "$out/$kind/junit.xml"; then
    status=1
  fi
done
exit "$status"
