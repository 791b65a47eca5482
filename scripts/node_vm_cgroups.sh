#!/usr/bin/env bash
# The cgroup tree of kubelet.ts against the upstream kubelet's on the node VM (cgroup v2,
# systemd as PID 1): each kubelet in turn runs the same static pods (Guaranteed, two Burstable,
# BestEffort) standalone on the guest's containerd with the chosen cgroup driver, node
# allocatable enforced with reservations and a pod pids limit; once the pods run, the
# kubelet's cgroups are dumped: every directory of the tree (containers' cgroups too) with
# every controller file one can write there, and with the systemd driver the slice units'
# properties as systemd reports them; then the kubelet is stopped and everything it made is
# cleaned up. The two dumps, pod uids and container ids replaced, must be equal.
#
#   scripts/node_vm_cgroups.sh [systemd|cgroupfs] [--lists]   (default systemd; the VM must be up)
#
# kubelet.ts runs as a bundle (`deno task bundle`) copied onto the guest's disk, with every
# permission, or with --lists under its planned permission lists (planned in the guest by
# scripts/permission_lists.ts for this configuration) beside the cgroup agent
# (src/cgroup_agent/main.ts with the same driver), both bundled too; the upstream kubelet comes
# from the peers cache (/peers in the guest). Output in $KTS_VM_RUN/share/cgdiff.
# KTS_VM_CGDIFF_TIMEOUT: seconds to wait for the guest's two runs (default 7200).
set -euo pipefail

driver=systemd lists=false
for arg in "$@"; do
  case "$arg" in
  systemd | cgroupfs) driver=$arg ;;
  --lists) lists=true ;;
  *)
    echo "usage: $0 [systemd|cgroupfs] [--lists]" >&2
    exit 2
    ;;
  esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
vm() { bash "$here/scripts/node_vm.sh" "$@"; }
run=${KTS_VM_RUN:-/tmp/kts-vm}
out=$run/share/cgdiff
# running = its qemu lives (ssh may be too slow to answer a status on a loaded host)
kill -0 "$(cat "$run/qemu.pid" 2>/dev/null)" 2>/dev/null || {
  echo "node_vm_cgroups: the VM is not running; run: bash scripts/node_vm.sh up" >&2
  exit 1
}
peers=$(bash "$here/scripts/peers.sh" dir)
rm -rf "$out" && mkdir -p "$out/manifests"
(cd "$here" && npx -y deno@2.9.6 task bundle --out="$out/kubelet.js" >/dev/null)
if $lists; then
  (cd "$here" && npx -y deno@2.9.6 task bundle --entry=src/cgroup_agent/main.ts \
    --out="$out/agent.js" >/dev/null &&
    npx -y deno@2.9.6 task bundle --entry=scripts/permission_lists.ts --out="$out/lists.js" >/dev/null)
fi

cat >"$out/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /scratch/cgdiff/manifests
fileCheckFrequency: 5s
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: $driver
failSwapOn: false
enableServer: false
podPidsLimit: 1024
kubeReserved: { cpu: 100m, memory: 100Mi, pid: "100" }
systemReserved: { memory: 150Mi }
enforceNodeAllocatable: [pods]
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
EOF
pod() {
  cat >"$out/manifests/$1.yaml" <<EOF
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
    command: ["sleep", "3600"]
    resources: $2
EOF
}
pod guaranteed '{ requests: { cpu: 250m, memory: 64Mi }, limits: { cpu: 250m, memory: 64Mi } }'
pod burstable '{ requests: { cpu: 100m } }'
pod bounded '{ requests: { cpu: 50m, memory: 16Mi }, limits: { cpu: 300m, memory: 96Mi } }'
pod besteffort '{}'

cat >"$out/guest.sh" <<'GUEST'
# guest.sh <name> <driver> <kubelet command…>: one kubelet's run and dump; with
# LISTS=1 the command (deno run) gets the planned lists and the cgroup agent runs beside it
set -uo pipefail
name=$1 driver=$2
shift 2
agent=
# crictl's default 2 s per call is too short for an emulated guest: a cleanup that timed out
# would leave the last run's containers behind
crictl() { /peers/*/bin/crictl --timeout=120s --runtime-endpoint unix:///run/containerd/containerd.sock "$@" 2>/dev/null; }
want=false
[ "$driver" = systemd ] && want=true
if ! grep -q "SystemdCgroup = $want" /etc/containerd/config.toml; then
  sed -i "s/SystemdCgroup = .*/SystemdCgroup = $want/" /etc/containerd/config.toml
  systemctl restart containerd
fi
root=/var/lib/kts-cgdiff-$name
# a kubelet or agent left by an interrupted run of this script goes first (two kubelets must
# never share the containerd)
for stale in $(ps -eo pid=,args= | awk '/kts-cgdiff-/ && !/awk/ && !/guest\.sh/ { print $1 }'); do
  kill -9 "$stale" 2>/dev/null
done
clean() { # every pod, the kubelet's slices and cgroups
  crictl rmp -fa >/dev/null
  systemctl stop kubepods.slice 2>/dev/null
  systemctl reset-failed 2>/dev/null
  for top in /sys/fs/cgroup/kubepods.slice /sys/fs/cgroup/kubepods; do
    [ -d "$top" ] && find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
}
clean
rm -rf "$root"
if [ "${LISTS:-}" = 1 ]; then
  mkdir -p "$root"
  setsid deno run -A /root/agent.js --socket="$root/cgroup-agent.sock" --cgroup-root=/ \
    --cgroup-driver="$driver" >"/scratch/cgdiff/$name-agent.log" 2>&1 &
  agent=$!
  for _ in $(seq 1 900); do [ -S "$root/cgroup-agent.sock" ] && break; sleep 1; done
  mapfile -t flags < <(deno run -A /root/lists.js --permissions-from /scratch/cgdiff/config.yaml \
    --root-dir="$root" --hostname-override=kts-node)
  [ "${flags[0]:-}" = --no-prompt ] || { echo "$name: no permission lists planned" >&2; exit 1; }
  printf '%s\n' "${flags[@]}" >"/scratch/cgdiff/$name.lists"
  set -- "$1" "$2" "${flags[@]}" "${@:3}"
fi
setsid "$@" --config /scratch/cgdiff/config.yaml --root-dir "$root" \
  --hostname-override=kts-node >"/scratch/cgdiff/$name.log" 2>&1 &
pid=$!
for _ in $(seq 1 1800); do
  [ "$(crictl ps -q --state running | wc -l)" -ge 4 ] && break
  sleep 2
done
sleep 10 # a housekeeping pass or two after the last pod
{
  if [ "$driver" = systemd ]; then
    for u in $(systemctl list-units --type=slice --no-legend --plain | awk '/^kubepods/ { print $1 }' | sort); do
      echo "unit $u $(systemctl show "$u" -p Wants -p CPUWeight -p CPUQuotaPerSecUSec -p CPUQuotaPeriodUSec \
        -p MemoryMax -p TasksMax -p MemoryAccounting -p CPUAccounting -p IOAccounting \
        -p TasksAccounting -p DefaultDependencies -p Description -p MemoryMin -p MemoryLow \
        -p MemoryHigh -p MemorySwapMax -p IOWeight -p AllowedCPUs | sort | tr '\n' ' ')"
    done
    top=kubepods.slice
  else
    top=kubepods
  fi
  # every directory of the tree (kubepods, tiers, pods, the containers' cgroups below) and
  # every controller file one can write there, one line per file
  cd /sys/fs/cgroup
  for d in $(find "$top" -type d | sort); do
    for f in $(find "$d" -maxdepth 1 -type f -perm -u+w -printf '%f\n' |
      grep -E '^((cpu|cpuset|memory|pids|hugetlb|io|rdma|misc)\.|cgroup\.subtree_control$)' |
      grep -vE '\.pressure$|^memory\.reclaim$' | sort); do
      echo "$d $f=$(tr '\n' ' ' <"$d/$f" 2>/dev/null | sed 's/ *$//; s/ /_/g')"
    done
  done
} >"/scratch/cgdiff/$name.dump"
kill "$pid"
wait "$pid" 2>/dev/null
if [ -n "$agent" ]; then
  kill "$agent"
  wait "$agent" 2>/dev/null
fi
clean
rm -rf "$root"
echo "$name: $(wc -l <"/scratch/cgdiff/$name.dump") lines"
GUEST

if $lists; then ours="LISTS=1 bash /scratch/cgdiff/guest.sh kubelet-ts $driver deno run /root/kubelet.js"
else ours="bash /scratch/cgdiff/guest.sh kubelet-ts $driver deno run -A /root/kubelet.js"; fi
# detached in the guest, the host watching the share: an emulated guest on a loaded host can
# miss ssh keep-alives for minutes, which must not end the run
cat >"$out/both.sh" <<BOTH
# an earlier run still going in the guest (its host side interrupted) ends first
old=\$(cat /run/kts-cgdiff.pgid 2>/dev/null)
[ -n "\$old" ] && [ "\$old" != "\$(ps -o pgid= \$\$ | tr -d ' ')" ] && kill -- "-\$old" 2>/dev/null
ps -o pgid= \$\$ | tr -d ' ' >/run/kts-cgdiff.pgid
cp /scratch/cgdiff/*.js /root/ && $ours &&
  bash /scratch/cgdiff/guest.sh upstream $driver /peers/$(basename "$(dirname "$peers")")/bin/kubelet
echo \$? >/scratch/cgdiff/done
BOTH
vm launch "bash /scratch/cgdiff/both.sh >/scratch/cgdiff/run.log 2>&1"
for ((i = 0; i < ${KTS_VM_CGDIFF_TIMEOUT:-7200}; i += 5)); do
  [ -s "$out/done" ] && break
  sleep 5
done
cat "$out/run.log" 2>/dev/null || true
[ "$(cat "$out/done" 2>/dev/null)" = 0 ] || {
  echo "node_vm_cgroups: the guest's run did not finish well (see $out)" >&2
  exit 1
}
# pod uids and container ids replaced; sorted again, as the ids ordered the containers
normalize() {
  sed -E 's/pod[0-9a-f]{8}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{12}/pod<uid>/g; s/pod[0-9a-f]{32}/pod<uid>/g; s/[0-9a-f]{64}/<id>/g' "$1" | sort
}
count() { # "<units> slice units, <dirs> directories, <files> files"
  printf '%s slice units, %s directories, %s files' "$(grep -c '^unit ' "$1" || true)" \
    "$(grep -v '^unit ' "$1" | cut -d' ' -f1 | sort -u | wc -l)" "$(grep -vc '^unit ' "$1" || true)"
}
if $lists && ! grep -q 'Managing cgroups through the cgroup agent' "$out/kubelet-ts.log"; then
  echo "node_vm_cgroups: kubelet.ts did not use the cgroup agent (see $out/kubelet-ts.log)" >&2
  exit 1
fi
if diff <(normalize "$out/kubelet-ts.dump") <(normalize "$out/upstream.dump"); then
  echo "node_vm_cgroups: $driver$($lists && echo ', kubelet.ts under its lists + the cgroup agent'): the same cgroups: $(count "$out/upstream.dump") (kubelet.ts: $(count "$out/kubelet-ts.dump"))"
else
  echo "node_vm_cgroups: $driver: the cgroups differ (< kubelet.ts, > upstream)" >&2
  exit 1
fi
