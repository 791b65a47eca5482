#!/usr/bin/env bash
# Upstream's e2e suite (scripts/peers.sh build-e2e) against a cluster of several nodes of
# scripts/cluster_nodes.sh: brings the cluster up with KTS_NODES, runs the chosen [Conformance]
# tests as scripts/conformance.ts runs them (local images, the repo list), takes it down.
#
#   bash scripts/cluster_nodes_e2e.sh <out dir> <ginkgo focus> [ginkgo skip]
#
# e.g. KTS_NODES="ours ours ours" bash scripts/cluster_nodes_e2e.sh /tmp/mn-ours '\[sig-network\] Services'
# Writes <out>/e2e.log, junit.xml, times (seconds for `up` and the suite), the nodes' kubelet and
# kube-proxy logs. docs/multi-node.md has the figures.
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
t0=$(date +%s)
code=0
(cd "$out" && KUBE_TEST_REPO_LIST=$here/scripts/conformance/repo-list.yaml PATH=$bin:$PATH \
  "$e2e/ginkgo" --procs=3 --timeout=1h --label-filter=Conformance --focus="$focus" \
  ${skip:+--skip="$skip"} --silence-skips --no-color --output-dir="$out" \
  --junit-report=junit.xml "$e2e/e2e.test" -- --kubeconfig="$kubeconfig" --provider=skeleton \
  --kubectl-path="$bin/kubectl" --allowed-not-ready-nodes=0 --dump-logs-on-failure=true \
  >"$out/e2e.log" 2>&1) || code=$?
echo "suite $(($(date +%s) - t0))" >>"$out/times"
for dir in /tmp/kts-mn/node-*; do
  cp "$dir/logs/kubelet.log" "$out/nodes/${dir##*/}-kubelet.log" 2>/dev/null || true
  cp "$dir/logs/kube-proxy.log" "$out/nodes/${dir##*/}-kube-proxy.log" 2>/dev/null || true
done
grep -E '^(Ran|SUCCESS|FAIL)' "$out/e2e.log" >&2 || true
exit "$code"
