#!/usr/bin/env bash
# Installs the Debian packages the real-containerd environment needs, only when missing.
# Sourced by scripts/cri_env.sh; defines kts_install_packages.

# prometheus: only for promtool, which checks the kubelet API's /metrics text in the e2e tests.
KTS_PACKAGES=(containerd runc containernetworking-plugins busybox-static docker-registry apache2-utils prometheus)

# Prints the packages from KTS_PACKAGES that are not installed yet.
kts_missing_packages() {
  local pkg status
  for pkg in "${KTS_PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    if [ "$status" != "installed" ]; then
      printf '%s\n' "$pkg"
    fi
  done
}

# Installs missing packages without letting their maintainer scripts start services.
kts_install_packages() {
  local missing
  mapfile -t missing < <(kts_missing_packages)
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi
  kts_log "installing Debian packages: ${missing[*]}"
  local made_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    # policy-rc.d exit 101 = "action forbidden": the packages will not auto-start a
    # system containerd or registry. Removed again below, only if we created it.
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    made_policy=1
  fi
  local rc=0
  apt-get update -qq >"$KTS_ROOT/logs/apt.log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >>"$KTS_ROOT/logs/apt.log" 2>&1 || rc=$?
  fi
  if [ "$made_policy" -eq 1 ]; then
    rm -f /usr/sbin/policy-rc.d
  fi
  if [ "$rc" -ne 0 ]; then
    tail -n 20 "$KTS_ROOT/logs/apt.log" >&2
    kts_die "apt-get failed (exit $rc) installing ${missing[*]}; see $KTS_ROOT/logs/apt.log"
  fi
}
