#!/usr/bin/env bash
# The cgroup tree of kubelet.ts against the upstream kubelet's on the node VM (cgroup v2,
# systemd as PID 1): each kubelet in turn runs the same static pods (one Guaranteed, one
# Burstable) standalone on the guest's containerd with the chosen cgroup driver; once both
# pods run, the kubelet's cgroups are dumped (with the systemd driver also the slice units'
# properties as systemd reports them), the kubelet is stopped and everything it made is
# cleaned up. The two dumps, pod uids replaced by <uid>, must be equal.
#
#   scripts/node_vm_cgroups.sh [systemd|cgroupfs]   (default systemd; the VM must be up)
#
# kubelet.ts runs as a bundle (`deno task bundle`) copied onto the guest's disk; the upstream
# kubelet comes from the peers cache (/peers in the guest). Output in $KTS_VM_RUN/share/cgdiff.
set -euo pipefail

driver=${1:-systemd}
case "$driver" in systemd | cgroupfs) ;; *)
  echo "usage: $0 [systemd|cgroupfs]" >&2
  exit 2
  ;;
esac
here=$(cd "$(dirname "$0")/.." && pwd)
vm() { bash "$here/scripts/node_vm.sh" "$@"; }
run=${KTS_VM_RUN:-/tmp/kts-vm}
out=$run/share/cgdiff
vm status >/dev/null || {
  echo "node_vm_cgroups: the VM is not running; run: bash scripts/node_vm.sh up" >&2
  exit 1
}
peers=$(bash "$here/scripts/peers.sh" dir)
rm -rf "$out" && mkdir -p "$out/manifests"
(cd "$here" && npx -y deno@2.9.6 task bundle --out="$out/kubelet.js" >/dev/null)

cat >"$out/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /scratch/cgdiff/manifests
fileCheckFrequency: 5s
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: $driver
failSwapOn: false
enableServer: false
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

cat >"$out/guest.sh" <<'GUEST'
# guest.sh <name> <driver> <kubelet command…>: one kubelet's run and dump
set -uo pipefail
name=$1 driver=$2
shift 2
crictl() { /peers/*/bin/crictl --runtime-endpoint unix:///run/containerd/containerd.sock "$@" 2>/dev/null; }
want=false
[ "$driver" = systemd ] && want=true
if ! grep -q "SystemdCgroup = $want" /etc/containerd/config.toml; then
  sed -i "s/SystemdCgroup = .*/SystemdCgroup = $want/" /etc/containerd/config.toml
  systemctl restart containerd
fi
root=/var/lib/kts-cgdiff-$name
rm -rf "$root"
setsid "$@" --config /scratch/cgdiff/config.yaml --root-dir "$root" \
  --hostname-override=kts-node >"/scratch/cgdiff/$name.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  [ "$(crictl ps -q --state running | wc -l)" -ge 2 ] && break
  sleep 2
done
sleep 10 # a housekeeping pass or two after the second pod
{
  if [ "$driver" = systemd ]; then
    for u in $(systemctl list-units --type=slice --no-legend --plain | awk '/^kubepods/ { print $1 }' | sort); do
      echo "$u $(systemctl show "$u" -p Wants -p CPUWeight -p CPUQuotaPerSecUSec -p CPUQuotaPeriodUSec \
        -p MemoryMax -p TasksMax -p MemoryAccounting -p CPUAccounting -p IOAccounting \
        -p TasksAccounting -p DefaultDependencies -p Description | sort | tr '\n' ' ')"
    done
    top=kubepods.slice
  else
    top=kubepods
  fi
  cd /sys/fs/cgroup
  for d in $(find "$top" -maxdepth 3 -type d \( -name 'kubepods*' -o -name 'pod*' -o -name burstable -o -name besteffort \) | sort); do
    printf '%s' "$d"
    for f in cpu.weight cpu.max memory.max pids.max hugetlb.2MB.max cgroup.subtree_control; do
      printf ' %s=%s' "$f" "$(cat "$d/$f" 2>/dev/null | tr ' ' '_')"
    done
    echo
  done
} >"/scratch/cgdiff/$name.dump"
kill "$pid"
wait "$pid" 2>/dev/null
crictl rmp -fa >/dev/null
systemctl stop kubepods.slice 2>/dev/null
systemctl reset-failed 2>/dev/null
for top in /sys/fs/cgroup/kubepods.slice /sys/fs/cgroup/kubepods; do
  [ -d "$top" ] && find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null
done
rm -rf "$root"
echo "$name: $(wc -l <"/scratch/cgdiff/$name.dump") lines"
GUEST

vm exec "cp /scratch/cgdiff/kubelet.js /root/kubelet.js &&
  bash /scratch/cgdiff/guest.sh kubelet-ts $driver deno run -A /root/kubelet.js &&
  bash /scratch/cgdiff/guest.sh upstream $driver /peers/$(basename "$(dirname "$peers")")/bin/kubelet"
normalize() { sed -E 's/pod[0-9a-f]{8}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{12}/pod<uid>/g; s/pod[0-9a-f]{32}/pod<uid>/g' "$1"; }
if diff <(normalize "$out/kubelet-ts.dump") <(normalize "$out/upstream.dump"); then
  echo "node_vm_cgroups: $driver: the same cgroups ($(wc -l <"$out/upstream.dump") lines)"
else
  echo "node_vm_cgroups: $driver: the cgroups differ (< kubelet.ts, > upstream)" >&2
  exit 1
fi
