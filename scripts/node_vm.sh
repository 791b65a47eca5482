#!/usr/bin/env bash
# A real node to test on: a Debian 12 guest under qemu (TCG) with systemd as PID 1, cgroup v2
# unified, containerd with the systemd cgroup driver, runc and the CNI plugins.
#
#   scripts/node_vm.sh up       build the base image when the cache lacks it, boot the guest on a
#                               throw-away overlay, wait for ssh, print the env lines
#   scripts/node_vm.sh exec CMD run CMD (a shell command line) in the guest as root over ssh;
#                               stdin, stdout, stderr and the exit code are the command's
#   scripts/node_vm.sh launch CMD start CMD detached in the guest, retried while ssh cannot
#                               connect (for runs longer than an ssh session survives)
#   scripts/node_vm.sh status   whether the guest runs, its ports and systemd's state
#   scripts/node_vm.sh down     power the guest off (kill after a grace period), drop the overlay
#   scripts/node_vm.sh env      print the env lines only
#
# The host here is cgroup v1 without systemd and its KVM cannot boot a stock kernel, so the
# guest runs under TCG (see docs/node-vm.md for timings). The base image is cached outside the
# clone in $KTS_VM_CACHE (default /var/cache/kubelet-ts/node-vm) under a key made of the
# candidate versions of the packages it installs, the kernel, the deno binary, busybox and the
# build section of this script; a changed key builds a new image. Every boot writes to a qcow2
# overlay in $KTS_VM_RUN, so the base stays clean.
#
# Inside the guest: the checkout ($KTS_VM_SRC, default this clone) read-only at /src, a writable
# scratch share ($KTS_VM_RUN/share) at /scratch, the peers cache at /peers (read-only), deno at
# /usr/local/bin/deno, the test images kts.local/busybox:latest and kts.local/pause:3.9 (the CRI
# sandbox image) in containerd's k8s.io namespace. The host's loopback is 10.0.2.2 in the guest.
#
# Environment: KTS_VM_CACHE, KTS_VM_RUN (default /tmp/kts-vm), KTS_VM_SRC, KTS_VM_PEERS (default
# /var/cache/kubelet-ts/peers), KTS_VM_SSH_PORT (default 12600), KTS_VM_FORWARD (extra
# "hostport:guestport" pairs, default "12601:10250 12602:10248 12603:10255"), KTS_VM_MEM (MiB,
# default 2048), KTS_VM_CPUS (default 2), KTS_VM_SSH_TIMEOUT (ssh connect timeout, s, default 10).
set -euo pipefail

VM_CACHE=${KTS_VM_CACHE:-/var/cache/kubelet-ts/node-vm}
VM_RUN=${KTS_VM_RUN:-/tmp/kts-vm}
VM_SRC=${KTS_VM_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
VM_PEERS=${KTS_VM_PEERS:-/var/cache/kubelet-ts/peers}
VM_SSH_PORT=${KTS_VM_SSH_PORT:-12600}
VM_FORWARD=${KTS_VM_FORWARD:-12601:10250 12602:10248 12603:10255}
VM_MEM=${KTS_VM_MEM:-2048}
VM_CPUS=${KTS_VM_CPUS:-2}
VM_SCRIPT=${BASH_SOURCE[0]}

vm_log() { printf 'node_vm: %s\n' "$*" >&2; }
kts_die() {
  printf 'node_vm: error: %s\n' "$*" >&2
  exit 1
}

# shellcheck source=cri_env/build_image.sh
. "$(dirname "$VM_SCRIPT")/cri_env/build_image.sh"

# ---- BUILD-BEGIN (this section is part of the cache key) ----
VM_SUITE=bookworm
VM_PACKAGES=(systemd-sysv dbus udev kmod iproute2 iptables containerd runc
  containernetworking-plugins procps ca-certificates openssh-server)
VM_MIRRORS=(
  "deb http://deb.debian.org/debian $VM_SUITE main"
  "deb http://deb.debian.org/debian $VM_SUITE-updates main"
  "deb http://deb.debian.org/debian-security $VM_SUITE-security main"
)
VM_IMAGE_SIZE=8G
VM_MODULES=(overlay br_netfilter veth bridge 9p 9pnet_virtio)

# The kernel the guest boots: the newest Debian kernel installed on the host (its initrd has
# virtio and ext4; the guest gets the kernel's modules copied in).
vm_kernel() {
  local k
  k=$(find /boot -maxdepth 1 -name 'vmlinuz-*-amd64' -printf '%f\n' | sed 's/^vmlinuz-//' |
    sort -V | tail -1)
  [ -n "$k" ] || kts_die "no Debian kernel in /boot; install: apt-get install linux-image-amd64"
  printf '%s\n' "$k"
}

vm_deno() {
  local d
  d=$(command -v deno || true)
  if [ -z "$d" ]; then
    d=$(find /root/.npm/_npx -path '*/@deno/linux-x64-glibc/deno' -type f 2>/dev/null | head -1)
  fi
  [ -n "$d" ] || kts_die "no deno binary found; run once: npx -y deno@2.9.6 --version"
  printf '%s\n' "$d"
}

# vm_customize <rootfs> <kernel> <deno> <ssh public key> <images dir>
vm_customize() {
  local root=$1 kernel=$2 deno=$3 pubkey=$4 images=$5
  # Only what a node needs from the kernel's modules: filesystems, networking, virtio.
  local mods=/lib/modules/$kernel dst=$root/lib/modules/$kernel
  mkdir -p "$dst/kernel/drivers/net"
  cp -a "$mods"/modules.order "$mods"/modules.builtin* "$dst/"
  local d
  for d in arch block crypto fs lib mm net virt; do
    [ -d "$mods/kernel/$d" ] && cp -a "$mods/kernel/$d" "$dst/kernel/"
  done
  for d in virtio block char; do cp -a "$mods/kernel/drivers/$d" "$dst/kernel/drivers/"; done
  cp -a "$mods"/kernel/drivers/net/*.ko "$mods/kernel/drivers/net/vxlan" \
    "$mods/kernel/drivers/net/ipvlan" "$dst/kernel/drivers/net/"
  depmod -b "$root" "$kernel"
  printf '%s\n' "${VM_MODULES[@]}" >"$root/etc/modules-load.d/kts.conf"
  printf 'net.ipv4.ip_forward=1\nnet.bridge.bridge-nf-call-iptables=1\n' \
    >"$root/etc/sysctl.d/90-kts.conf"

  echo kts-node >"$root/etc/hostname"
  printf '127.0.0.1 localhost\n127.0.1.1 kts-node\n' >"$root/etc/hosts"
  cat >"$root/etc/fstab" <<'FSTAB'
/dev/vda / ext4 rw,relatime 0 1
src /src 9p trans=virtio,version=9p2000.L,msize=262144,ro,nofail 0 0
scratch /scratch 9p trans=virtio,version=9p2000.L,msize=262144,nofail 0 0
peers /peers 9p trans=virtio,version=9p2000.L,msize=262144,ro,nofail 0 0
FSTAB
  mkdir -p "$root/src" "$root/scratch" "$root/peers"
  printf '[Match]\nName=en* eth*\n\n[Network]\nDHCP=yes\n' >"$root/etc/systemd/network/10-dhcp.network"
  chroot "$root" systemctl enable systemd-networkd ssh >/dev/null 2>&1
  chroot "$root" systemctl mask systemd-networkd-wait-online.service >/dev/null 2>&1
  chroot "$root" passwd -d root >/dev/null

  mkdir -p "$root/root/.ssh"
  cp "$pubkey" "$root/root/.ssh/authorized_keys"
  chmod 700 "$root/root/.ssh" && chmod 600 "$root/root/.ssh/authorized_keys"

  # containerd: systemd cgroups for runc, the local pause image, Debian's CNI plugin directory.
  chroot "$root" containerd config default >"$root/etc/containerd/config.toml"
  sed -i -e 's/SystemdCgroup = false/SystemdCgroup = true/' \
    -e 's#sandbox_image = .*#sandbox_image = "kts.local/pause:3.9"#' \
    -e 's#bin_dir = "/opt/cni/bin"#bin_dir = "/usr/lib/cni"#' "$root/etc/containerd/config.toml"
  grep -q 'SystemdCgroup = true' "$root/etc/containerd/config.toml" ||
    kts_die "containerd's default config has no SystemdCgroup line"
  mkdir -p "$root/etc/cni/net.d"
  cat >"$root/etc/cni/net.d/10-kts.conflist" <<'CNI'
{
  "cniVersion": "1.0.0",
  "name": "kts",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "10.88.0.0/16" }]],
                "routes": [{ "dst": "0.0.0.0/0" }] }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
CNI

  install -m 0755 "$deno" "$root/usr/local/bin/deno"

  # First boot imports the test images into containerd, then powers off: the image is ready.
  mkdir -p "$root/var/lib/kts/images"
  cp "$images"/*.tar "$root/var/lib/kts/images/"
  cat >"$root/etc/systemd/system/kts-provision.service" <<'UNIT'
[Unit]
Description=Import the kubelet.ts test images, then power off
After=containerd.service
Requires=containerd.service
ConditionPathExists=!/var/lib/kts/provisioned

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'for t in /var/lib/kts/images/*.tar; do ctr -n k8s.io images import --all-platforms "$t" || exit 1; done; ctr -n k8s.io images ls -q > /var/lib/kts/provisioned; echo KTS-PROVISIONED > /dev/ttyS0'
ExecStartPost=/bin/systemctl --no-block poweroff

[Install]
WantedBy=multi-user.target
UNIT
  chroot "$root" systemctl enable kts-provision.service >/dev/null 2>&1
}
# ---- BUILD-END ----

vm_key() {
  local kernel deno
  kernel=$(vm_kernel)
  deno=$(vm_deno)
  {
    apt-cache policy "${VM_PACKAGES[@]}" busybox-static |
      awk '/^[^ ]/ { p = $1 } /Candidate:/ { print p, $2 }'
    echo "kernel $kernel"
    "$deno" --version | head -1
    sed -n '/^# ---- BUILD-BEGIN/,/^# ---- BUILD-END/p' "$VM_SCRIPT"
    cat "$(dirname "$VM_SCRIPT")/cri_env/build_image.sh"
  } | sha256sum | cut -c1-16
}

vm_base_dir() { printf '%s/%s-%s\n' "$VM_CACHE" "$VM_SUITE" "$(vm_key)"; }

vm_build() {
  local base=$1 kernel deno
  kernel=$(vm_kernel)
  deno=$(vm_deno)
  command -v mmdebstrap >/dev/null && command -v qemu-system-x86_64 >/dev/null ||
    kts_die "missing tools; install: apt-get install mmdebstrap qemu-system-x86 qemu-utils busybox-static"
  local work=$base.build
  rm -rf "$work" && mkdir -p "$work"
  local started=$SECONDS
  vm_log "building the base image in $base (kernel $kernel)"
  ssh-keygen -q -t ed25519 -N '' -C kts-node-vm -f "$work/id_ed25519"
  mkdir -p "$work/images"
  kts_build_image "$work/busybox.d" kts.local/busybox:latest "$work/images/busybox.tar" \
    'null' '["/bin/sh"]'
  kts_build_image "$work/pause.d" kts.local/pause:3.9 "$work/images/pause.tar" \
    '["/bin/busybox","sleep","2147483647"]' 'null'
  local pkgs
  pkgs=$(
    IFS=,
    printf '%s' "${VM_PACKAGES[*]}"
  )
  mmdebstrap --quiet --variant=minbase --include="$pkgs" "$VM_SUITE" "$work/rootfs" \
    "${VM_MIRRORS[@]}" >"$work/mmdebstrap.log" 2>&1 ||
    kts_die "mmdebstrap failed; see $work/mmdebstrap.log"
  vm_log "rootfs ready after $((SECONDS - started)) s"
  vm_customize "$work/rootfs" "$kernel" "$deno" "$work/id_ed25519.pub" "$work/images"
  cp "/boot/vmlinuz-$kernel" "$work/vmlinuz"
  cp "/boot/initrd.img-$kernel" "$work/initrd.img"
  truncate -s "$VM_IMAGE_SIZE" "$work/node.img"
  mkfs.ext4 -q -F -L kts-root -d "$work/rootfs" "$work/node.img"
  rm -rf "$work/rootfs"
  vm_log "image ready after $((SECONDS - started)) s; provisioning boot"
  # The provisioning boot writes to the base image itself and ends with a power-off.
  timeout 900 qemu-system-x86_64 "${VM_QEMU_COMMON[@]}" -kernel "$work/vmlinuz" \
    -initrd "$work/initrd.img" -append "$VM_CMDLINE" \
    -drive "file=$work/node.img,format=raw,if=virtio,cache=unsafe" \
    -netdev user,id=n0 -device virtio-net-pci,netdev=n0 \
    -serial "file:$work/provision.serial" ||
    kts_die "provisioning boot failed; see $work/provision.serial"
  grep -q KTS-PROVISIONED "$work/provision.serial" ||
    kts_die "provisioning did not import the images; see $work/provision.serial"
  rm -rf "$base" && mv "$work" "$base"
  vm_log "base image built in $((SECONDS - started)) s"
}

VM_CMDLINE="console=ttyS0 root=/dev/vda rw systemd.unified_cgroup_hierarchy=1 quiet"
VM_QEMU_COMMON=(-machine q35 -accel tcg,thread=multi -cpu max -m "$VM_MEM" -smp "$VM_CPUS"
  -display none -no-reboot -rtc base=utc)

vm_pid() {
  local pid
  [ -s "$VM_RUN/qemu.pid" ] || return 1
  pid=$(cat "$VM_RUN/qemu.pid")
  [ -d "/proc/$pid" ] && grep -q qemu "/proc/$pid/comm" 2>/dev/null || return 1
  printf '%s\n' "$pid"
}

vm_ssh() {
  local key
  key=$(cat "$VM_RUN/base")/id_ed25519
  ssh -q -i "$key" -p "$VM_SSH_PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR -o ConnectTimeout="${KTS_VM_SSH_TIMEOUT:-10}" -o ServerAliveInterval=15 root@127.0.0.1 "$@"
}

vm_print_env() {
  cat <<ENV
KTS_VM_SSH_PORT=$VM_SSH_PORT
KTS_VM_SSH_KEY=$(cat "$VM_RUN/base" 2>/dev/null)/id_ed25519
KTS_VM_FORWARD=$VM_FORWARD
KTS_VM_SCRATCH=$VM_RUN/share
KTS_VM_EXEC=bash $VM_SCRIPT exec
ENV
}

vm_up() {
  [ "$(id -u)" -eq 0 ] || kts_die "must run as root (mmdebstrap, mkfs); try: sudo $0 up"
  mkdir -p "$VM_RUN" "$VM_CACHE"
  if vm_pid >/dev/null; then
    vm_log "already running (pid $(vm_pid))"
    vm_print_env
    return 0
  fi
  local base started=$SECONDS
  base=$(vm_base_dir)
  [ -s "$base/node.img" ] || vm_build "$base"
  printf '%s\n' "$base" >"$VM_RUN/base"
  rm -f "$VM_RUN/overlay.qcow2"
  qemu-img create -q -f qcow2 -F raw -b "$base/node.img" "$VM_RUN/overlay.qcow2"
  mkdir -p "$VM_RUN/share"
  local fwd="hostfwd=tcp:127.0.0.1:$VM_SSH_PORT-:22" pair
  for pair in $VM_FORWARD; do fwd="$fwd,hostfwd=tcp:127.0.0.1:${pair%%:*}-:${pair##*:}"; done
  local shares=(
    -virtfs "local,path=$VM_SRC,mount_tag=src,security_model=none,readonly=on,id=src"
    -virtfs "local,path=$VM_RUN/share,mount_tag=scratch,security_model=none,id=scratch"
  )
  [ -d "$VM_PEERS" ] &&
    shares+=(-virtfs "local,path=$VM_PEERS,mount_tag=peers,security_model=none,readonly=on,id=peers")
  qemu-system-x86_64 "${VM_QEMU_COMMON[@]}" -kernel "$base/vmlinuz" -initrd "$base/initrd.img" \
    -append "$VM_CMDLINE" \
    -drive "file=$VM_RUN/overlay.qcow2,format=qcow2,if=virtio,cache=unsafe" \
    -netdev "user,id=n0,$fwd" -device virtio-net-pci,netdev=n0 "${shares[@]}" \
    -serial "file:$VM_RUN/serial.log" -daemonize -pidfile "$VM_RUN/qemu.pid"
  local i
  for i in $(seq 1 600); do
    vm_pid >/dev/null || kts_die "qemu exited during boot; see $VM_RUN/serial.log"
    if vm_ssh true 2>/dev/null; then break; fi
    sleep 1
  done
  vm_ssh true || kts_die "no ssh after 600 s; see $VM_RUN/serial.log"
  vm_ssh 'systemctl is-system-running --wait >/dev/null 2>&1 || true'
  vm_log "up in $((SECONDS - started)) s (ssh 127.0.0.1:$VM_SSH_PORT)"
  vm_print_env
}

vm_down() {
  local pid
  if pid=$(vm_pid); then
    vm_ssh 'systemctl poweroff' 2>/dev/null || true
    local i
    for i in $(seq 1 60); do
      [ -d "/proc/$pid" ] || break
      sleep 1
    done
    [ -d "/proc/$pid" ] && kill "$pid" 2>/dev/null
    vm_log "stopped (pid $pid)"
  fi
  rm -f "$VM_RUN/qemu.pid" "$VM_RUN/overlay.qcow2"
}

vm_status() {
  local pid
  if ! pid=$(vm_pid); then
    echo "node_vm: not running (base: $(vm_base_dir))"
    return 1
  fi
  echo "node_vm: running, pid $pid, ssh 127.0.0.1:$VM_SSH_PORT, forwards $VM_FORWARD"
  echo "node_vm: base $(cat "$VM_RUN/base")"
  vm_ssh 'echo "systemd: $(systemctl is-system-running)"; echo "cgroup: $(stat -fc %T /sys/fs/cgroup)"; uptime'
}

# vm_launch CMD: starts CMD detached in the guest (its output goes where CMD sends it);
# retried while ssh cannot connect (255), as a loaded host's guest is slow to answer
vm_launch() {
  local i rc
  for i in $(seq 1 20); do
    rc=0
    KTS_VM_SSH_TIMEOUT=120 vm_ssh "setsid bash -c '$1' </dev/null >/dev/null 2>&1 &" || rc=$?
    [ "$rc" = 255 ] || return "$rc"
    sleep 15
  done
  return 255
}

case "${1:-}" in
up) vm_up ;;
down) vm_down ;;
status) vm_status ;;
env) vm_print_env ;;
exec)
  shift
  vm_pid >/dev/null || kts_die "the guest is not running; run: $0 up"
  vm_ssh "$@"
  ;;
launch)
  vm_pid >/dev/null || kts_die "the guest is not running; run: $0 up"
  vm_launch "$2"
  ;;
*)
  printf 'usage: %s up|exec CMD|launch CMD|status|down|env\n' "$0" >&2
  exit 2
  ;;
esac
