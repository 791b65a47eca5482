#!/usr/bin/env bash
# Moves one node between the upstream kubelet and kubelet.ts, both ways, the way an operator
# would: stop one kubelet, start the other with the same flags, config file, root dir, cert dir
# and containerd. The node is scripts/upstream_kubelet.sh's (its own runtime-only containerd),
# joined to the control plane of scripts/cluster_env.sh when KUBELET_TS_BOOTSTRAP_KUBECONFIG is
# set (eval "$(bash scripts/cluster_env.sh env)"), standalone otherwise. docs/swap.md explains
# what the two kubelets share.
#
#   scripts/swap.sh up           start the node on the upstream kubelet
#   scripts/swap.sh to-ts        stop the running kubelet (TERM), start kubelet.ts in its place
#   scripts/swap.sh to-upstream  stop the running kubelet (TERM), start the upstream kubelet
#   scripts/swap.sh which        print which kubelet runs: upstream, kubelet.ts or none
#   scripts/swap.sh snapshot     the runtime's containers and sandboxes, one line each:
#                                C|S <id> <state> <pod namespace>/<pod name> <container> <attempt>
#   scripts/swap.sh down         stop the kubelet, remove every pod, the containerd and the root
#   scripts/swap.sh exec-ts ARGS  run kubelet.ts with ARGS under the permissions it plans for
#                                them (`--dry-run`), as the compiled binary runs
#
# A swap prints the snapshot before and after and the lines that changed; the containers and
# sandboxes of pods both kubelets know must not change (docs/swap.md).
#
# Environment (the scripts/upstream_kubelet.sh variables, with these defaults):
#   KTS_UPSTREAM_ROOT   /tmp/kts-swap         the node: root dir, cert dir, config, containerd
#   KTS_UPSTREAM_NODE   kts-swap              node name
#   KTS_UPSTREAM_BRIDGE, KTS_UPSTREAM_SUBNET  kts-swap0, 10.104.0.0/16
#   KTS_UPSTREAM_HEALTHZ_PORT, KTS_UPSTREAM_PORT  12410, 12411
#   KTS_SWAP_SETTLE       seconds to let the new kubelet sync before the "after" snapshot (20)
#   KTS_SWAP_PERMISSIONS  planned (default): kubelet.ts runs with the grants it plans for its
#                         flags and config, as the shipped binary; all: with -A
#   KTS_SWAP_KUBELET_TS   the kubelet.ts command (default: deno run -A main.ts of this clone,
#                         with the shipped V8 flags; a `deno task compile` binary works as well)
set -euo pipefail

SW_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export KTS_UPSTREAM_ROOT=${KTS_UPSTREAM_ROOT:-/tmp/kts-swap}
export KTS_UPSTREAM_NODE=${KTS_UPSTREAM_NODE:-kts-swap}
export KTS_UPSTREAM_BRIDGE=${KTS_UPSTREAM_BRIDGE:-kts-swap0}
export KTS_UPSTREAM_SUBNET=${KTS_UPSTREAM_SUBNET:-10.104.0.0/16}
export KTS_UPSTREAM_HEALTHZ_PORT=${KTS_UPSTREAM_HEALTHZ_PORT:-12410}
export KTS_UPSTREAM_PORT=${KTS_UPSTREAM_PORT:-12411}
if [ -n "${KUBELET_TS_BOOTSTRAP_KUBECONFIG:-}" ]; then
  export KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG=${KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG:-$KUBELET_TS_BOOTSTRAP_KUBECONFIG}
fi

sw_log() { printf 'swap: %s\n' "$*" >&2; }
sw_die() {
  printf 'swap: error: %s\n' "$*" >&2
  exit 1
}

sw_kubelet_ts() {
  if [ -n "${KTS_SWAP_KUBELET_TS:-}" ]; then
    printf '%s\n' "$KTS_SWAP_KUBELET_TS"
    return
  fi
  if [ "${KTS_SWAP_PERMISSIONS:-planned}" = planned ]; then
    # a bundle, as the compiled binary: run from source, the module loader would need read
    # access to the clone, which the planned grants do not give
    "$(sw_deno)" run -A "$SW_DIR/bundle.ts" --out="$KTS_UPSTREAM_ROOT/kubelet.js" >/dev/null ||
      sw_die "bundling kubelet.ts failed (deno run -A scripts/bundle.ts)"
    printf 'bash %s/swap.sh exec-ts\n' "$SW_DIR"
  else
    printf '%s run -A --v8-flags=%s %s/main.ts\n' "$(sw_deno)" "$(sw_v8_flags)" "$(dirname "$SW_DIR")"
  fi
}

sw_deno() {
  npx -y deno@2.9.6 eval 'console.log(Deno.execPath())' ||
    sw_die "cannot find deno (npx -y deno@2.9.6); set KTS_SWAP_KUBELET_TS to a kubelet.ts binary"
}

sw_v8_flags() { sed -n 's/^ *"\(--max-semi-space-size[^"]*\)";$/\1/p' "$SW_DIR/v8_flags.ts"; }

# Replaces this shell with the kubelet.ts bundle under the grants its --dry-run prints for "$@".
sw_exec_ts() {
  local deno bundle=$KTS_UPSTREAM_ROOT/kubelet.js grants
  deno=$(sw_deno)
  [ -s "$bundle" ] || sw_die "no $bundle (scripts/swap.sh to-ts makes it)"
  grants=$("$deno" run -A "$bundle" --dry-run "$@" | sed -n 's/^# deno permission: //p') ||
    sw_die "kubelet.ts --dry-run failed for: $*"
  [ -n "$grants" ] || sw_die "kubelet.ts --dry-run printed no permissions for: $*"
  # shellcheck disable=SC2086
  exec "$deno" run --no-prompt $grants --v8-flags="$(sw_v8_flags)" "$bundle" "$@"
}

sw_crictl() {
  local bin
  bin=$(bash "$SW_DIR/peers.sh" dir) || sw_die "no peer binaries: run bash scripts/peers.sh build"
  "$bin/crictl" --runtime-endpoint "unix://$KTS_UPSTREAM_ROOT/cri/containerd.sock" "$@" 2>/dev/null
}

sw_which() {
  local pidfile=$KTS_UPSTREAM_ROOT/kubelet.pid
  if ! [ -s "$pidfile" ] || ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo none
  elif grep -q 'main.ts\|exec-ts' "$KTS_UPSTREAM_ROOT/kubelet.cmd" 2>/dev/null ||
    [ "$(cat "$KTS_UPSTREAM_ROOT/kubelet.cmd" 2>/dev/null)" = "${KTS_SWAP_KUBELET_TS:-}" ]; then
    echo kubelet.ts
  else
    echo upstream
  fi
}

# One line per container and sandbox, sorted; the IDs are what a swap must keep.
sw_snapshot() {
  local containers pods
  containers=$(sw_crictl ps -a -o json) || sw_die "crictl ps failed (is the node up?)"
  pods=$(sw_crictl pods -o json) || sw_die "crictl pods failed"
  {
    jq -r '.containers[] | ["C", .id[0:13], .state,
      .labels["io.kubernetes.pod.namespace"] + "/" + .labels["io.kubernetes.pod.name"],
      .metadata.name, (.metadata.attempt // 0 | tostring)] | join(" ")' <<<"$containers"
    jq -r '.items[] | ["S", .id[0:13], .state,
      .metadata.namespace + "/" + .metadata.name, "-", (.metadata.attempt // 0 | tostring)]
      | join(" ")' <<<"$pods"
  } | sort -k4,4 -k1,1 -k2,2
}

sw_swap() {
  local to=$1 before after cmd=()
  [ "$(sw_which)" != none ] || sw_die "no kubelet runs on $KTS_UPSTREAM_NODE: run scripts/swap.sh up"
  if [ "$to" = kubelet.ts ]; then
    cmd=(env "KTS_UPSTREAM_KUBELET=$(sw_kubelet_ts)")
  else
    cmd=(env -u KTS_UPSTREAM_KUBELET)
  fi
  before=$(sw_snapshot)
  sw_log "before ($(sw_which)):"
  printf '%s\n' "$before" >&2
  KTS_UPSTREAM_SIGNAL=TERM bash "$SW_DIR/upstream_kubelet.sh" stop-kubelet
  "${cmd[@]}" bash "$SW_DIR/upstream_kubelet.sh" up >/dev/null
  sleep "${KTS_SWAP_SETTLE:-20}"
  after=$(sw_snapshot)
  sw_log "after ($(sw_which), ${KTS_SWAP_SETTLE:-20} s after its healthz answered):"
  printf '%s\n' "$after" >&2
  local changed
  changed=$(diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") |
    sed -n 's/^</-/p; s/^>/+/p' || true)
  sw_log "changed lines (- before, + after): ${changed:-(none)}"
  [ -z "$changed" ] || printf '%s\n' "$changed" >&2
}

command -v jq >/dev/null || sw_die "jq is missing (apt-get install jq)"
case "${1:-}" in
exec-ts)
  shift
  sw_exec_ts "$@"
  ;;
up) bash "$SW_DIR/upstream_kubelet.sh" up ;;
to-ts) sw_swap kubelet.ts ;;
to-upstream) sw_swap upstream ;;
which) sw_which ;;
snapshot) sw_snapshot ;;
down) bash "$SW_DIR/upstream_kubelet.sh" down ;;
*)
  printf 'usage: %s up|to-ts|to-upstream|which|snapshot|down|exec-ts\n' "$0" >&2
  exit 2
  ;;
esac
