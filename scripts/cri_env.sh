#!/usr/bin/env bash
# Real-containerd test environment as code, for kubelet.ts CRI tests.
#
#   scripts/cri_env.sh up     install packages if missing, start our own containerd and two
#                             local registries, import/push the test images, print the env
#   scripts/cri_env.sh env    print the KEY=VALUE lines only (no changes)
#   scripts/cri_env.sh down   stop what `up` started, unmount leftovers, delete the root
#   scripts/cri_env.sh restart  stop containerd (SIGTERM, wait for exit) and start it again
#                             with the same config; running containers (shims) survive, as
#                             with a real containerd restart. Prints the env lines like `up`.
#                             KTS_CRI_RESTART_PAUSE=<seconds> keeps it down that long (an outage).
#
# Runs as root. Never touches a system containerd: everything lives under $KTS_CRI_ROOT
# (default /tmp/kts-cri) with its own root, state, sockets and CNI config. Idempotent:
# a second `up` only checks that everything is still there.
#
# Environment: KTS_CRI_ROOT (default /tmp/kts-cri), KTS_CRI_SNAPSHOTTER (auto|overlayfs|native;
# auto probes an overlay mount and falls back to native).
# A second, runtime-only instance next to the main one (tests that restart containerd use one
# so they never disturb the shared instance): set KTS_CRI_ROOT to another directory,
# KTS_CRI_RUNTIME_ONLY=1 (no registries; `down` leaves the shared test cgroups alone) and a
# distinct KTS_CRI_BRIDGE (default kts0) / KTS_CRI_SUBNET (default 10.88.0.0/16).
#
# Use in CI:   set -a; eval "$(bash scripts/cri_env.sh up)"; set +a
set -euo pipefail

KTS_ROOT=${KTS_CRI_ROOT:-/tmp/kts-cri}
KTS_SOCK=$KTS_ROOT/containerd.sock
KTS_IMAGE=kts.local/busybox:latest
KTS_PAUSE_IMAGE=kts.local/pause:3.9
KTS_REGISTRY=127.0.0.1:5000
KTS_AUTH_REGISTRY=127.0.0.1:5001
KTS_REGISTRY_IMAGE=$KTS_REGISTRY/kts/busybox:latest
KTS_AUTH_REGISTRY_IMAGE=$KTS_AUTH_REGISTRY/kts/private:latest
KTS_AUTH_USER=kts
KTS_AUTH_PASSWORD=kts-secret
KTS_SUBNET=${KTS_CRI_SUBNET:-10.88.0.0/16}
KTS_BRIDGE=${KTS_CRI_BRIDGE:-kts0}
KTS_RUNTIME_ONLY=${KTS_CRI_RUNTIME_ONLY:-0}
KTS_RESTART_PAUSE=${KTS_CRI_RESTART_PAUSE:-0}

KTS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cri_env

kts_log() { printf 'cri_env: %s\n' "$*" >&2; }
kts_die() {
  printf 'cri_env: error: %s\n' "$*" >&2
  exit 1
}

# shellcheck source=cri_env/install.sh
. "$KTS_LIB_DIR/install.sh"
# shellcheck source=cri_env/build_image.sh
. "$KTS_LIB_DIR/build_image.sh"
# shellcheck source=cri_env/daemons.sh
. "$KTS_LIB_DIR/daemons.sh"

kts_print_env() {
  cat <<ENV
KUBELET_TS_CRI_ENDPOINT=unix://$KTS_SOCK
KUBELET_TS_CRI_ROOT=$KTS_ROOT
KUBELET_TS_CRI_IMAGE=$KTS_IMAGE
KUBELET_TS_CRI_PAUSE_IMAGE=$KTS_PAUSE_IMAGE
KUBELET_TS_CRI_REGISTRY_IMAGE=$KTS_REGISTRY_IMAGE
KUBELET_TS_CRI_AUTH_REGISTRY_IMAGE=$KTS_AUTH_REGISTRY_IMAGE
KUBELET_TS_CRI_AUTH_USER=$KTS_AUTH_USER
KUBELET_TS_CRI_AUTH_PASSWORD=$KTS_AUTH_PASSWORD
ENV
}

# A pod subnet that another interface already routes makes this instance's pod IPs unreachable.
kts_check_subnet() {
  local dev
  dev=$(ip -4 route show "$KTS_SUBNET" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n 1)
  if [ -n "$dev" ] && [ "$dev" != "$KTS_BRIDGE" ]; then
    kts_die "KTS_CRI_SUBNET $KTS_SUBNET is already routed via $dev: choose another subnet, or remove the leftover bridge (ip link del $dev)"
  fi
}

kts_up() {
  [ "$(id -u)" -eq 0 ] || kts_die "must run as root (containerd needs it); try: sudo $0 up"
  kts_check_subnet
  mkdir -p "$KTS_ROOT/logs" "$KTS_ROOT/run"
  kts_install_packages
  kts_write_containerd_config
  kts_start_containerd
  kts_import_images
  if [ "$KTS_RUNTIME_ONLY" != 1 ]; then
    kts_start_registries
    kts_push_images
  fi
  kts_log "ready (logs in $KTS_ROOT/logs)"
  kts_print_env
}

kts_restart() {
  [ "$(id -u)" -eq 0 ] || kts_die "must run as root; try: sudo $0 restart"
  [ -s "$KTS_ROOT/containerd.toml" ] ||
    kts_die "no environment at $KTS_ROOT (missing containerd.toml); run: $0 up"
  kts_restart_containerd
  kts_print_env
}

case "${1:-}" in
up) kts_up ;;
down) kts_down ;;
restart) kts_restart ;;
env) kts_print_env ;;
*)
  printf 'usage: %s up|down|restart|env\n' "$0" >&2
  exit 2
  ;;
esac
