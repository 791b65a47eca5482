#!/usr/bin/env bash
# Builds a one-layer OCI image archive (oci-layout tar) from the host's static busybox.
# Sourced by scripts/cri_env.sh (and scripts/conformance/images.sh); defines kts_build_image,
# kts_busybox_rootfs and kts_pack_image.
#
# Each image's config names the image (env KTS_IMAGE), so every name gets its own image id:
# containerd's RemoveImage drops every reference of an id, and tests remove pulled images.
# The layer holds /bin/busybox plus one symlink per applet, /etc/passwd, /etc/group,
# /tmp and /var/www. Everything is written with fixed owners and mtimes so the same
# busybox always yields the same digests (re-running `up` re-imports nothing new).

# kts_build_image <work dir> <image name> <output tar> <entrypoint json> <cmd json>
kts_build_image() {
  local work=$1 name=$2 out=$3 entrypoint=$4 cmd=$5
  rm -rf "$work" && mkdir -p "$work"
  kts_busybox_rootfs "$work/rootfs"
  kts_pack_image "$work" "$name" "$out" "$entrypoint" "$cmd"
}

# kts_busybox_rootfs <dir>: /bin/busybox with its applet links, /etc/passwd and /etc/group,
# /tmp and /var/www/index.html. The busybox is the host's, or $KTS_BUSYBOX when set
# (scripts/conformance/images.sh sets the one of scripts/conformance/busybox.sh).
kts_busybox_rootfs() {
  local rootfs=$1 busybox=${KTS_BUSYBOX:-/bin/busybox}
  [ -x "$busybox" ] || kts_die "$busybox is missing; install the busybox-static package"
  mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/tmp" "$rootfs/var/www"
  cp "$busybox" "$rootfs/bin/busybox"
  local applet
  for applet in $("$busybox" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
  done
  chmod 1777 "$rootfs/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
    >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  printf 'hello from kubelet.ts\n' >"$rootfs/var/www/index.html"
}

# kts_pack_image <work dir> <image name> <output tar> <entrypoint json> <cmd json> [user]:
# packs <work dir>/rootfs as the image's one layer and removes <work dir>.
kts_pack_image() {
  local work=$1 name=$2 out=$3 entrypoint=$4 cmd=$5 user=${6:-}
  mkdir -p "$work/layout/blobs/sha256"
  local layer=$work/layer.tar top
  # shellcheck disable=SC2012
  top=$(ls -A "$work/rootfs" | sort)
  # shellcheck disable=SC2086
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/rootfs" \
    -cf "$layer" $top
  local layer_digest layer_size
  layer_digest=$(sha256sum "$layer" | cut -d' ' -f1)
  layer_size=$(stat -c %s "$layer")
  mv "$layer" "$work/layout/blobs/sha256/$layer_digest"

  local config=$work/config.json
  printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","KTS_IMAGE=%s"],"Entrypoint":%s,"Cmd":%s,"WorkingDir":"/"%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created_by":"kubelet.ts scripts/cri_env build_image.sh"}]}' \
    "$name" "$entrypoint" "$cmd" "${user:+,\"User\":\"$user\"}" "$layer_digest" >"$config"
  local config_digest config_size
  config_digest=$(sha256sum "$config" | cut -d' ' -f1)
  config_size=$(stat -c %s "$config")
  mv "$config" "$work/layout/blobs/sha256/$config_digest"

  local manifest=$work/manifest.json
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$manifest"
  local manifest_digest manifest_size
  manifest_digest=$(sha256sum "$manifest" | cut -d' ' -f1)
  manifest_size=$(stat -c %s "$manifest")
  mv "$manifest" "$work/layout/blobs/sha256/$manifest_digest"

  printf '{"imageLayoutVersion":"1.0.0"}' >"$work/layout/oci-layout"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"},"platform":{"architecture":"amd64","os":"linux"}}]}' \
    "$manifest_digest" "$manifest_size" "$name" "${name##*:}" >"$work/layout/index.json"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/layout" \
    -cf "$out" oci-layout index.json blobs
  rm -rf "$work"
}
