#!/usr/bin/env bash
# Builds the images upstream's [NodeConformance] tests (and the DNS and Aggregator
# [Conformance] tests of scripts/cluster_nodes_e2e.sh) run and pushes them to the local registry of
# scripts/cri_env.sh, under the names scripts/conformance/repo-list.yaml maps the suite's
# registries to. docs/conformance.md says how faithful each one is.
#
#   bash scripts/conformance/images.sh <e2e bin dir>   (from scripts/peers.sh build-e2e)
#
# Needs the shared containerd and registry up (scripts/cri_env.sh up), gcc, busybox-static and
# Debian's package archive (nginx, apache2-bin and bind9-dnsutils with its libraries are
# fetched with apt-get download, never installed: nginx's and Apache's post-install would
# start the servers on the host; busybox's source for busybox.sh).
# The busybox-based images get the busybox of busybox.sh (Debian's, rebuilt so that `sh`
# keeps environment names like `data-1` as upstream's does), built once and cached outside
# the clone.
# An image already in the registry is left alone unless this recipe changed since the last
# push (a hash of the scripts, kept beside the shared containerd); KTS_CONFORMANCE_REBUILD=1
# pushes again anyway.
set -euo pipefail

e2e_bin=${1:?usage: images.sh <e2e bin dir>}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
registry=127.0.0.1:5000
k8s_version=$(sed -n 's/^KUBERNETES_VERSION=//p' "$here/../../peers/versions.env")
sock=${KTS_CRI_ROOT:-/tmp/kts-cri}/containerd.sock
# A namespace of its own in the shared containerd: no kubelet sees these copies.
ns=kts-conformance
work=$(mktemp -d /tmp/kts-conformance-images.XXXXXX)
trap 'rm -rf "$work"' EXIT

kts_log() { printf 'conformance images: %s\n' "$*" >&2; }
kts_die() {
  printf 'conformance images: error: %s\n' "$*" >&2
  exit 1
}
# shellcheck source=../cri_env/build_image.sh
. "$here/../cri_env/build_image.sh"

[ -x "$e2e_bin/agnhost" ] || kts_die "no agnhost in $e2e_bin: run bash scripts/peers.sh build-e2e"
[ -S "$sock" ] || kts_die "no containerd at $sock: run bash scripts/cri_env.sh up"
curl -s -o /dev/null "http://$registry/v2/" || kts_die "no registry on $registry: run bash scripts/cri_env.sh up"

pushed() { # repo tag
  curl -sf -o /dev/null -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$registry/v2/$1/manifests/$2"
}

# Each rootfs_<name> fills the directory $1.
rootfs_busybox() {
  kts_busybox_rootfs "$1"
  # Debian's busybox has no nmeter applet; the node e2e suite's container lifecycle tests
  # time their steps with `nmeter -d0 '%3t'` (docs/conformance.md).
  gcc -static -Os -Wall -Werror -o "$1/bin/nmeter" "$here/nmeter.c"
}

# deb_unpack <package> <dir>: Debian's package, fetched (not installed) and unpacked in dir.
deb_unpack() {
  local pkg=$1 dir=$2 deb
  mkdir -p "$work/debs" && (cd "$work/debs" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
    kts_die "apt-get download $pkg failed: run apt-get update (Debian's archive is needed)"
  deb=$(ls "$work/debs/${pkg}"_*.deb | head -n1)
  dpkg-deb -x "$deb" "$dir"
}

# copy_closure [--unpacked <dir>] <rootfs> <elf...>: the shared libraries the programs load (as
# the host's loader resolves them, the same Debian release as the packages), the loader itself,
# and libgcc_s, which glibc opens at run time when a thread exits (Apache's workers abort
# without it). With --unpacked, the libraries of the packages unpacked (not installed) in dir
# are found there first and land at their packaged paths. A library found nowhere stops the build.
copy_closure() {
  local unpacked= search= lib dest deps
  if [ "$1" = --unpacked ]; then
    unpacked=$2
    search=$(find "$unpacked" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)
    shift 2
  fi
  local rootfs=$1
  shift
  deps=$(LD_LIBRARY_PATH=$search ldd "$@") || kts_die "ldd $* failed (only dynamic programs have a closure)"
  if grep -q 'not found' <<<"$deps"; then
    kts_die "libraries not found for $*: $(grep 'not found' <<<"$deps" | sort -u | tr -s ' \t\n' ' ')"
  fi
  for lib in $(ldconfig -p | awk '$1 == "libgcc_s.so.1" { print $NF; exit }') $(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' <<<"$deps" | sort -u); do
    dest=${lib#"$unpacked"}
    mkdir -p "$rootfs$(dirname "$dest")"
    cp -L "$lib" "$rootfs$dest"
  done
}

# dns_tools <rootfs>: what the DNS tests' probe loops run besides the shell and busybox's
# `seq`, `test` and `sleep`: Debian 12's `dig` (bind9-dnsutils 9.18; its libraries from
# bind9-libs and the few dependencies the host lacks, all unpacked, never installed) and
# glibc's `getent` (the host's), with an /etc/nsswitch.conf that reads /etc/hosts before DNS,
# as Debian's does (glibc's default without one stops at DNS's "not found").
dns_tools() {
  local rootfs=$1 pkgs=$work/dns-pkgs p
  rm -rf "$pkgs" && mkdir -p "$pkgs" "$rootfs/usr/bin"
  for p in bind9-dnsutils bind9-libs libuv1 libfstrm0 libjemalloc2 liblmdb0 libmaxminddb0 \
    libprotobuf-c1; do
    deb_unpack "$p" "$pkgs"
  done
  cp "$pkgs/usr/bin/dig" "$rootfs/usr/bin/dig"
  cp /usr/bin/getent "$rootfs/usr/bin/getent"
  copy_closure --unpacked "$pkgs" "$rootfs" "$rootfs/usr/bin/dig" "$rootfs/usr/bin/getent"
  printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
}

# The jessie-dnsutils image (upstream: Debian 8 with dnsutils, plus CoreDNS 1.5 at /coredns):
# the DNS tests' second querier, a glibc one beside agnhost's. The busybox base with
# dns_tools; no /coredns (the tests start their CoreDNS pods from the agnhost image).
rootfs_jessie_dnsutils() {
  kts_busybox_rootfs "$1"
  dns_tools "$1"
}

# The nginx image (upstream: nginx 1.14/1.15 on Alpine): Debian's nginx 1.22 in the busybox
# base, in the foreground (`daemon off;` in its configuration: the image list's fields split at
# spaces, so not in the command as upstream's), workers as user nginx, pid in /var/run/nginx.pid
# (the host PID test reads it), "Welcome to nginx!" on port 80, logs to the container's output.
rootfs_nginx() {
  kts_busybox_rootfs "$1"
  local pkgs=$work/pkgs
  rm -rf "$pkgs" && mkdir -p "$pkgs"
  deb_unpack nginx "$pkgs"
  deb_unpack nginx-common "$pkgs"
  mkdir -p "$1/usr/sbin" "$1/etc/nginx" "$1/usr/share/nginx/html" "$1/var/log/nginx" \
    "$1/var/lib/nginx" "$1/var/lock" "$1/run"
  cp "$pkgs/usr/sbin/nginx" "$1/usr/sbin/nginx"
  copy_closure "$1" "$1/usr/sbin/nginx"
  cp "$pkgs/etc/nginx/mime.types" "$1/etc/nginx/mime.types"
  ln -s ../run "$1/var/run"
  ln -s /dev/stdout "$1/var/log/nginx/access.log"
  ln -s /dev/stderr "$1/var/log/nginx/error.log"
  printf 'nginx:x:101:101:nginx:/var/cache/nginx:/sbin/nologin\n' >>"$1/etc/passwd"
  printf 'nginx:x:101:\n' >>"$1/etc/group"
  printf '%s\n' '<!DOCTYPE html>' '<html><head><title>Welcome to nginx!</title></head>' \
    '<body><h1>Welcome to nginx!</h1></body></html>' >"$1/usr/share/nginx/html/index.html"
  printf '%s\n' 'user nginx;' 'daemon off;' 'worker_processes 1;' 'pid /var/run/nginx.pid;' \
    'error_log /var/log/nginx/error.log warn;' 'events { worker_connections 1024; }' \
    'http {' '  include /etc/nginx/mime.types;' '  access_log /var/log/nginx/access.log;' \
    '  server {' '    listen 80;' '    location / { root /usr/share/nginx/html; index index.html; }' \
    '  }' '}' >"$1/etc/nginx/nginx.conf"
}

# The httpd image (upstream: httpd 2.4.38/2.4.39 on Alpine): Debian's Apache 2.4 in the
# busybox base (Debian builds unixd and log_config in), in the foreground (`httpd-foreground`),
# "It works!" on port 80.
rootfs_httpd() {
  kts_busybox_rootfs "$1"
  local pkgs=$work/pkgs mods=/usr/lib/apache2/modules m
  rm -rf "$pkgs" && mkdir -p "$pkgs"
  deb_unpack apache2-bin "$pkgs"
  mkdir -p "$1/usr/local/apache2/bin" "$1/usr/local/apache2/conf" "$1/usr/local/apache2/htdocs" \
    "$1/usr/local/apache2/logs" "$1$mods"
  cp "$pkgs/usr/sbin/apache2" "$1/usr/local/apache2/bin/httpd"
  for m in mpm_event authz_core dir; do
    cp "$pkgs$mods/mod_$m.so" "$1$mods/"
  done
  copy_closure "$1" "$1/usr/local/apache2/bin/httpd" "$1$mods"/*.so
  printf 'daemon:x:1:1:daemon:/usr/sbin:/bin/false\n' >>"$1/etc/passwd"
  printf 'daemon:x:1:\n' >>"$1/etc/group"
  printf '<html><body><h1>It works!</h1></body></html>\n' >"$1/usr/local/apache2/htdocs/index.html"
  {
    printf 'ServerRoot /usr/local/apache2\nListen 80\nServerName localhost\n'
    for m in mpm_event authz_core dir; do
      printf 'LoadModule %s_module %s/mod_%s.so\n' "$m" "$mods" "$m"
    done
    printf 'User daemon\nGroup daemon\nDocumentRoot /usr/local/apache2/htdocs\n'
    printf 'DirectoryIndex index.html\nErrorLog /proc/self/fd/2\nLogLevel warn\n'
    printf 'PidFile /usr/local/apache2/logs/httpd.pid\n'
    printf 'LogFormat "%%h %%l %%u %%t \\"%%r\\" %%>s %%b" common\nCustomLog /proc/self/fd/1 common\n'
    printf '<Directory /usr/local/apache2/htdocs>\n  Require all granted\n</Directory>\n'
  } >"$1/usr/local/apache2/conf/httpd.conf"
  printf '%s\n' '#!/bin/sh' 'rm -f /usr/local/apache2/logs/httpd.pid' \
    'exec /usr/local/apache2/bin/httpd -f /usr/local/apache2/conf/httpd.conf -DFOREGROUND "$@"' \
    >"$1/usr/local/apache2/bin/httpd-foreground"
  chmod 755 "$1/usr/local/apache2/bin/httpd-foreground"
}
rootfs_agnhost() {
  kts_busybox_rootfs "$1"
  cp "$e2e_bin/agnhost" "$1/agnhost"
  ln -s agnhost "$1/agnhost-2"
  mkdir -p "$1/uploads" "$1/usr/bin"
  # Upstream's image has curl; the network tests exec `curl -g -q -s <url>` in it. This
  # stand-in fetches the URL with busybox wget (docs/conformance.md).
  printf '%s\n' '#!/bin/sh' 'url=' 'for a in "$@"; do case "$a" in -*) ;; *) url=$a ;; esac; done' \
    'exec wget -q -O - "$url"' >"$1/usr/bin/curl"
  chmod 755 "$1/usr/bin/curl"
  # Upstream's image carries a test serving pair for `netexec --tls-cert-file /localhost.crt`
  # (the HTTPS lifecycle hook tests); this one is made here, self-signed.
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$1/localhost.key" -out "$1/localhost.crt" 2>/dev/null
  # Upstream's image adds Alpine's bash and netcat-openbsd: the tests run `/bin/bash` (probe
  # readiness while terminating), `nc -lU` (HostPathType Socket) and `nc -u` (node-pod UDP).
  # Debian's builds, with their libraries; `nc` in /usr/bin comes before busybox's in /bin.
  # Debian's static busybox shell runs its own applets before searching PATH (Alpine's does
  # not), so `sh -c "nc ..."` would still get busybox's nc: /bin/sh is Debian's dash here.
  local pkgs=$work/pkgs
  rm -rf "$pkgs" && mkdir -p "$pkgs"
  deb_unpack netcat-openbsd "$pkgs"
  rm -f "$1/bin/bash" "$1/bin/sh"
  cp /bin/bash "$1/bin/bash"
  cp /bin/dash "$1/bin/sh"
  cp "$pkgs/bin/nc.openbsd" "$1/usr/bin/nc"
  # The storage tests' hostexec pod runs `nsenter --mount=/rootfs/proc/1/ns/mnt -- sh -c ...`
  # to prepare local volumes on the host (losetup, mkfs, mount). Busybox's nsenter runs its
  # own sh and losetup applets even in the host's mount namespace; util-linux's (Alpine's
  # in upstream's image) runs the host's programs. /usr/bin comes before busybox's /bin.
  cp /usr/bin/nsenter "$1/usr/bin/nsenter"
  copy_closure "$1" "$1/bin/bash" "$1/bin/sh" "$1/usr/bin/nc" "$1/usr/bin/nsenter"
  # Upstream's image has Alpine's bind-tools and musl's getent: the DNS tests' first querier
  # runs the same `dig`/`getent` loop in it as in jessie-dnsutils.
  dns_tools "$1"
  # The user and group upstream's image defines (supplemental group tests read them).
  printf 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n' >>"$1/etc/passwd"
  printf 'user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n' \
    >>"$1/etc/group"
}
# The Update Demo images (kubectl's replication controller tests): upstream's are agnhost
# with a picture and a data.json at /, served by `test-webserver`; the files come from the
# pinned Kubernetes module's test/images/<name>/html.
rootfs_update_demo() { # <rootfs> <nautilus|kitten>
  rootfs_agnhost "$1"
  local src
  src=$(go env GOMODCACHE)/k8s.io/kubernetes@$k8s_version/test/images/$2/html
  [ -f "$src/data.json" ] || kts_die "no $src/data.json: run bash scripts/peers.sh build-e2e"
  cp "$src/$2.jpg" "$src/data.json" "$1/"
}
rootfs_nautilus() { rootfs_update_demo "$1" nautilus; }
rootfs_kitten() { rootfs_update_demo "$1" kitten; }
rootfs_pause() {
  mkdir -p "$1"
  gcc -static -Os -Wall -Werror -o "$1/pause" "$here/pause.c"
}
rootfs_nonewprivs() {
  kts_busybox_rootfs "$1"
  mkdir -p "$1/usr/local/bin"
  gcc -static -Os -Wall -Werror -o "$1/usr/local/bin/nnp" "$here/nnp.c"
  chmod 4755 "$1/usr/local/bin/nnp"
}
# The Aggregator test's pod (test/e2e/apimachinery/aggregator.go) runs two containers: the
# sample API server by its image's entrypoint, and etcd by the command /usr/local/bin/etcd.
# Both are static Go binaries from scripts/peers.sh (sample-apiserver is built there when
# the cache lacks it); etcd is the peers' pinned one, whatever tag the suite asks for.
rootfs_sample_apiserver() {
  local b
  b=$(bash "$here/../peers.sh" sample-apiserver) || kts_die "building sample-apiserver failed (above)"
  mkdir -p "$1/tmp" && chmod 1777 "$1/tmp"
  cp "$b" "$1/sample-apiserver"
}
rootfs_etcd() {
  local d
  d=$(bash "$here/../peers.sh" dir) || kts_die "no peers: run bash scripts/peers.sh build"
  mkdir -p "$1/usr/local/bin" "$1/tmp" && chmod 1777 "$1/tmp"
  cp "$d/etcd" "$1/usr/local/bin/etcd"
}

# repo tag rootfs entrypoint cmd [user]
images=(
  "e2e-test-images/agnhost 2.56 agnhost [\"/agnhost\"] [\"pause\"]"
  "e2e-test-images/busybox 1.37.0-1 busybox null [\"sh\"]"
  "e2e-test-images/nginx 1.14-4 nginx null [\"nginx\"]"
  "e2e-test-images/nginx 1.15-4 nginx null [\"nginx\"]"
  "e2e-test-images/httpd 2.4.38-4 httpd null [\"/usr/local/apache2/bin/httpd-foreground\"]"
  "e2e-test-images/httpd 2.4.39-4 httpd null [\"/usr/local/apache2/bin/httpd-foreground\"]"
  "e2e-test-images/jessie-dnsutils 1.7 jessie_dnsutils null [\"sh\"]"
  "e2e-test-images/nautilus 1.7 nautilus [\"/agnhost\"] [\"test-webserver\"]"
  "e2e-test-images/kitten 1.7 kitten [\"/agnhost\"] [\"test-webserver\"]"
  "e2e-test-images/nonroot 1.4 busybox null [\"/bin/sh\"] 1234"
  "e2e-test-images/nonewprivs 1.3 nonewprivs null [\"nnp\"]"
  "e2e-test-images/sample-apiserver 1.29.2 sample_apiserver [\"/sample-apiserver\"] null"
  "etcd 3.6.4-0 etcd [\"/usr/local/bin/etcd\"] null"
  "pause 3.10.1 pause [\"/pause\"] null 65535:65535"
)

# The registry outlives clones: a changed recipe must not leave the old images in place.
recipe=$(cat "${BASH_SOURCE[0]}" "$here"/*.c "$here/busybox.sh" "$here/../cri_env/build_image.sh" |
  sha256sum | cut -c1-16)
stamp=${KTS_CRI_ROOT:-/tmp/kts-cri}/conformance-images.recipe
rebuild=${KTS_CONFORMANCE_REBUILD:-0}
[ "$(cat "$stamp" 2>/dev/null)" = "$recipe" ] || rebuild=1

ctr_() { ctr -a "$sock" -n "$ns" "$@"; }
for line in "${images[@]}"; do
  read -r repo tag rootfs entrypoint cmd user <<<"$line"
  if [ "$rebuild" != 1 ] && pushed "$repo" "$tag"; then
    continue
  fi
  ref=$registry/$repo:$tag
  if [ -z "${KTS_BUSYBOX:-}" ]; then
    KTS_BUSYBOX=$(bash "$here/busybox.sh") || kts_die "building the images' busybox failed (above)"
  fi
  rm -rf "$work/img" && mkdir -p "$work/img"
  "rootfs_$rootfs" "$work/img/rootfs"
  kts_pack_image "$work/img" "$ref" "$work/img.tar" "$entrypoint" "$cmd" "${user:-}"
  ctr_ images import --all-platforms "$work/img.tar" >/dev/null
  ctr_ images push --plain-http "$ref" >/dev/null
  ctr_ images rm "$ref" >/dev/null
  kts_log "pushed $ref"
done
echo "$recipe" >"$stamp"
