#!/usr/bin/env bash
# Upstream's user namespace e2e tests (the node e2e suite's UserNamespacesSupport tests)
# against one kubelet on containerd 2, on a node whose `kubelet` user has subordinate IDs, as
# upstream's "configured hostUID/hostGID range" test needs. The user and its IDs exist only in
# a private mount namespace (bind mounts over /etc/passwd, /etc/subuid and /etc/subgid), so
# nothing else on the machine sees them.
#
#   bash scripts/e2e_node_userns.sh <ours|upstream> <out dir> [more scripts/conformance.ts args]
#
# Needs root, containerd 2 (bash scripts/peers.sh containerd2) and getsubids (Debian: uidmap).
set -euo pipefail
[ $# -ge 2 ] || {
  echo "usage: $0 <ours|upstream> <out dir> [scripts/conformance.ts args]" >&2
  exit 2
}
kind=$1 out=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(bash "$root/scripts/peers.sh" containerd2-dir) || {
  echo "e2e_node_userns: containerd 2 is not built; run: bash scripts/peers.sh containerd2" >&2
  exit 1
}
command -v getsubids >/dev/null || {
  echo "e2e_node_userns: getsubids is missing; install it (Debian: apt-get install uidmap)" >&2
  exit 1
}
for f in passwd subuid subgid; do
  [ -f "/etc/$f" ] || {
    echo "e2e_node_userns: /etc/$f is missing (it is bind-mounted over; create it empty)" >&2
    exit 1
  }
done
etc=$(mktemp -d /tmp/kts-userns-etc.XXXXXX)
grep -v '^kubelet:' /etc/passwd >"$etc/passwd" || true
echo 'kubelet:x:64999:64999:pod user namespaces:/nonexistent:/usr/sbin/nologin' >>"$etc/passwd"
# 110 ranges of 65536 IDs (the default maxPods) from 2^31: upstream's test checks that every
# pod's IDs fall inside, which the default range (65536 and up) would not do by chance.
echo 'kubelet:2147483648:7208960' >"$etc/subuid"
cp "$etc/subuid" "$etc/subgid"
# The shared environment (registry and images under /tmp/kts-cri) keeps Debian's containerd:
# started here first, the run below finds it up instead of starting it with containerd 2.
bash "$root/scripts/cri_env.sh" up >/dev/null
export KTS_CRI_CONTAINERD_BIN=$bin/containerd KTS_CRI_RUNC=$bin/runc
exec unshare --mount --propagation private bash -c '
  etc=$1
  shift
  for f in passwd subuid subgid; do mount --bind "$etc/$f" "/etc/$f"; done
  getsubids kubelet
  exec "$@"' _ "$etc" npx -y deno@2.9.6 run -A "$root/scripts/conformance.ts" \
  --suite=e2e-node --kubelet="$kind" --procs=1 \
  --label-filter='Feature: containsAny UserNamespacesSupport' --out="$out" "$@"
