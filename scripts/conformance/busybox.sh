#!/usr/bin/env bash
# Builds the busybox of the conformance images (scripts/conformance/images.sh) and prints
# its path on stdout.
#
#   bash scripts/conformance/busybox.sh
#
# It is the host's busybox-static, rebuilt from Debian's source package of the same version
# and with Debian's static configuration, minus the two Debian patches that undo upstream
# busybox's commit 9c143ce52da1 ("ash: retain envvars with bad names in initial
# environment", upstream since 1.31): revert-9c143ce52da11ec3d21a3491c3749841d3dc10f0.patch
# and temp-deb-installer-hack.patch, which builds on it. Debian's `sh` therefore drops
# environment names that are not shell identifiers (`data-1`, `a.b`) before any child
# sees them; upstream's, in the e2e busybox image (Docker's busybox:1.37.0, upstream source
# with defconfig), keeps and exports them, and the ConfigMap / Secrets "consumable via the
# environment" tests grep `sh -c env` for such names (docs/conformance.md).
#
# The binary is cached outside the clone, like scripts/peers.sh's builds, in
# $KUBELET_TS_PEERS_CACHE (default /var/cache/kubelet-ts/peers), in a folder keyed by the
# source version and a hash of this script. Needs Debian's archive (deb-src, through a
# private apt list: the host's apt sources are left alone), gcc, make, patch and
# dpkg-dev.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${KUBELET_TS_PEERS_CACHE:-/var/cache/kubelet-ts/peers}
log() { printf 'busybox: %s\n' "$*" >&2; }
die() {
  printf 'busybox: error: %s\n' "$*" >&2
  exit 1
}

version=$(dpkg-query -W -f='${source:Version}' busybox-static 2>/dev/null) ||
  die "busybox-static is not installed: apt-get install busybox-static"
sum=$(sha256sum "$here/busybox.sh" | cut -c1-12)
out="$cache_root/busybox-${version//[^A-Za-z0-9.+-]/_}-$sum/bin"
if [ -x "$out/busybox" ]; then
  log "cached: $out/busybox"
  printf '%s\n' "$out/busybox"
  exit 0
fi

work=$(mktemp -d /tmp/kts-busybox.XXXXXX)
trap 'rm -rf "$work"' EXIT
codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release: this build needs Debian"
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cat >"$work/apt/sources.list" <<EOF
deb-src [signed-by=$keyring] http://deb.debian.org/debian $codename $codename-updates main
deb-src [signed-by=$keyring] http://deb.debian.org/debian-security $codename-security main
EOF
apt_private=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache")
log "fetching Debian's source of busybox $version"
apt-get "${apt_private[@]}" -q update >"$work/apt.log" 2>&1 ||
  die "apt-get update of the deb-src list failed (Debian's archive is needed): $(tail -n3 "$work/apt.log")"
(cd "$work" && apt-get "${apt_private[@]}" -q source --download-only "busybox=$version") \
  >>"$work/apt.log" 2>&1 || die "apt-get source busybox=$version failed: $(tail -n3 "$work/apt.log")"
# apt checked the files against the archive's signed index; dpkg-source's own signature
# check needs debian-keyring, hence its warning in the log.
dpkg-source -x --skip-patches "$work"/busybox_*.dsc "$work/src" >>"$work/apt.log" 2>&1 ||
  die "dpkg-source could not unpack busybox $version: $(tail -n3 "$work/apt.log")"

# Debian's patch series, in order, without the two that undo the upstream commit.
src=$work/src
skip=' revert-9c143ce52da11ec3d21a3491c3749841d3dc10f0.patch temp-deb-installer-hack.patch '
applied=0
while read -r patch _; do
  case "$patch" in '' | '#'*) continue ;; esac
  case "$skip" in *" $patch "*) continue ;; esac
  patch -d "$src" -p1 --quiet --forward <"$src/debian/patches/$patch" ||
    die "Debian's patch $patch does not apply to busybox $version"
  applied=$((applied + 1))
done <"$src/debian/patches/series"
grep -q 'if (strchr(\*envp, .=.))' "$src/shell/ash.c" ||
  die "busybox $version's ash.c does not keep odd environment names even without the two patches"

cat "$src/debian/config/os/linux" "$src/debian/config/pkg/static" >"$src/.config"
log "building busybox $version (Debian's static configuration, $applied Debian patches)"
(
  cd "$src"
  export KCONFIG_NOTIMESTAMP=1
  # Debian's build flags as debian/rules passes them: without -O2, so that busybox's own -Os
  # applies.
  cflags=$(dpkg-buildflags --get CFLAGS | sed 's/ -O2 / /')
  cppflags=$(dpkg-buildflags --get CPPFLAGS) ldflags=$(dpkg-buildflags --get LDFLAGS)
  yes '' | make oldconfig >"$work/build.log" 2>&1
  nice make busybox SKIP_STRIP=y BB_EXTRA_VERSION="Debian $version without revert-9c143ce52da1" \
    CONFIG_EXTRA_CFLAGS="$cflags $cppflags" CONFIG_EXTRA_LDFLAGS="$cflags $ldflags" \
    >>"$work/build.log" 2>&1
) || die "building busybox failed: $(tail -n5 "$work/build.log")"

# The property this build exists for, checked before the binary is used.
got=$(env -i 'data-1=value-1' "$src/busybox" sh -c env)
grep -qx 'data-1=value-1' <<<"$got" || die "the built sh still drops data-1 from the environment: $got"

mkdir -p "$cache_root"
stage=$(mktemp -d "$cache_root/.busybox.XXXXXX")
mkdir -p "$stage/bin"
strip -o "$stage/bin/busybox" "$src/busybox"
rm -rf "${out%/bin}"
mv "$stage" "${out%/bin}"
log "built: $out/busybox"
printf '%s\n' "$out/busybox"
