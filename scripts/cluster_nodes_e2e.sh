#!/usr/bin/env bash
# Upstream's e2e suite (scripts/peers.sh build-e2e) against a cluster of several nodes of
# scripts/cluster_nodes.sh: brings the cluster up with KTS_NODES, runs the chosen [Conformance]
# tests as scripts/conformance.ts runs them (local images, the repo list), takes it down.
#
#   bash scripts/cluster_nodes_e2e.sh <out dir> <ginkgo focus> [ginkgo skip]
#   bash scripts/cluster_nodes_e2e.sh <out dir> --by-sig     # every [Conformance] test, per SIG
#
# e.g. KTS_NODES="ours ours ours" bash scripts/cluster_nodes_e2e.sh /tmp/mn-ours '\[sig-network\] Services'
# Writes <out>/e2e.log, junit.xml, times (seconds for `up` and the suite), the nodes' kubelet and
# kube-proxy logs, and usage.json: each kubelet's CPU and RSS and the pods it started while the
# suites ran (bench/cluster_usage.ts). With --by-sig each SIG runs as its own ginkgo run on the same cluster, into
# <out>/<sig>/ (a run cut short keeps the SIGs already done). KTS_MN_E2E_TIMEOUT: ginkgo's
# --timeout per run (default 1h). docs/multi-node.md has the figures.
set -euo pipefail
out=${1:?usage: cluster_nodes_e2e.sh <out dir> <ginkgo focus> [ginkgo skip]}
focus=${2:?usage: cluster_nodes_e2e.sh <out dir> <ginkgo focus> [ginkgo skip]}
skip=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

e2e=$(bash "$here/scripts/peers.sh" build-e2e)
bash "$here/scripts/cri_env.sh" up >/dev/null
bash "$here/scripts/conformance/images.sh" "$e2e"
rm -rf "$out" && mkdir -p "$out/nodes"
bash "$here/scripts/cluster_nodes.sh" down
trap 'bash "$here/scripts/cluster_nodes.sh" down' EXIT
t0=$(date +%s)
bash "$here/scripts/cluster_nodes.sh" up >"$out/env" 2>"$out/up.log"
echo "up $(($(date +%s) - t0))" >"$out/times"
bin=$(sed -n 's/^KUBELET_TS_K8S_BIN=//p' "$out/env")
kubeconfig=$(sed -n 's/^KUBELET_TS_KUBECONFIG=//p' "$out/env")
# suite <dir> <focus> [skip]: one ginkgo run, its report in dir
suite() {
  local dir=$1 t0 rc=0
  mkdir -p "$dir"
  t0=$(date +%s)
  (cd "$dir" && KUBE_TEST_REPO_LIST=$here/scripts/conformance/repo-list.yaml PATH=$bin:$PATH \
    "$e2e/ginkgo" --procs=3 --timeout="${KTS_MN_E2E_TIMEOUT:-1h}" --label-filter=Conformance \
    --focus="$2" ${3:+--skip="$3"} --silence-skips --no-color --output-dir="$dir" \
    --junit-report=junit.xml "$e2e/e2e.test" -- --kubeconfig="$kubeconfig" --provider=skeleton \
    --kubectl-path="$bin/kubectl" --allowed-not-ready-nodes=0 --dump-logs-on-failure=true \
    >"$dir/e2e.log" 2>&1) || rc=$?
  echo "suite $(($(date +%s) - t0))" >>"$dir/times"
  return "$rc"
}
# Each kubelet's CPU and RSS and the pods it started, over the suites (bench/cluster_usage.ts)
usage_args=()
i=0
for kind in ${KTS_NODES:-ours upstream ours}; do
  i=$((i + 1))
  usage_args+=(--node "ktsmn$i:$kind:/tmp/kts-mn/node-$i/run/kubelet.pid")
done
deno=${KTS_DENO:-$(npx -y deno@2.9.6 eval 'console.log(Deno.execPath())')}
"$deno" run -A "$here/bench/cluster_usage.ts" --out "$out/usage.json" \
  --kubeconfig "$kubeconfig" --kubectl "$bin/kubectl" "${usage_args[@]}" \
  >"$out/usage.log" 2>&1 &
usage_pid=$!
code=0
if [ "$focus" = --by-sig ]; then
  # the DNS tests last: they need the dnsutils stand-in image
  for sig in node storage apps network cli scheduling auth instrumentation architecture \
    api-machinery; do
    skip_sig=""
    [ "$sig" = network ] && skip_sig='\[sig-network\] DNS'
    suite "$out/sig-$sig" "\\[sig-$sig\\]" "$skip_sig" || code=1
    grep -E '^(Ran|SUCCESS|FAIL)' "$out/sig-$sig/e2e.log" | sed "s/^/sig-$sig: /" >&2 || true
  done
  suite "$out/sig-network-dns" '\[sig-network\] DNS' || code=1
else
  suite "$out" "$focus" "$skip" || code=$?
fi
kill -TERM "$usage_pid" 2>/dev/null || true
wait "$usage_pid" || echo "cluster_nodes_e2e: the usage sampler failed: $out/usage.log" >&2
for dir in /tmp/kts-mn/node-*; do
  cp "$dir/logs/kubelet.log" "$out/nodes/${dir##*/}-kubelet.log" 2>/dev/null || true
  cp "$dir/logs/kube-proxy.log" "$out/nodes/${dir##*/}-kube-proxy.log" 2>/dev/null || true
done
grep -E '^(Ran|SUCCESS|FAIL)' "$out/e2e.log" >&2 || true
exit "$code"
