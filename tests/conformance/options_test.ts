/** `deno task conformance` options: the suites, their label filters and report directories. */
import assert from "node:assert/strict";
import { NODE_LABELS, parseOptions } from "../../scripts/conformance.ts";
import { baseConfig, E2E_NODES } from "./e2e_node.ts";

Deno.test("the default suite stays the cluster binary's NodeConformance tests", () => {
  const o = parseOptions(["--kubelet=ours"]);
  assert.equal(o.suite, "conformance");
  assert.equal(o.labelFilter, "NodeConformance");
  assert.equal(o.out, "/tmp/kts-conformance/report");
});

Deno.test("--suite=node selects sig-node and sig-storage beyond the label", () => {
  const o = parseOptions(["--suite=node"]);
  assert.equal(o.labelFilter, NODE_LABELS);
  assert.match(o.labelFilter, /\(sig-node \|\| sig-storage\)/);
  assert.match(o.labelFilter, /!NodeConformance/);
  assert.match(o.labelFilter, /!Serial && !Disruptive/);
  assert.equal(o.out, "/tmp/kts-conformance/report-node");
});

Deno.test("--suite=e2e-node starts from its NodeConformance tests; --label-filter widens", () => {
  const o = parseOptions(["--suite=e2e-node", "--kubelet=both"]);
  assert.equal(o.labelFilter, "NodeConformance");
  assert.deepEqual(o.kubelets, ["upstream", "ours"]);
  assert.equal(o.out, "/tmp/kts-conformance/report-e2e-node");
  const wide = parseOptions(["--suite=e2e-node", "--label-filter=!Serial"]);
  assert.equal(wide.labelFilter, "!Serial");
});

Deno.test("an unknown suite is refused with the choices", () => {
  assert.throws(
    () => parseOptions(["--suite=cluster"]),
    /--suite=cluster: use conformance, node or e2e-node/,
  );
});

Deno.test("the node e2e base configuration keeps the run apart from other kubelets", () => {
  const yaml = baseConfig(E2E_NODES.ours, "/tmp/kts-e2enode/ours");
  assert.match(yaml, /^cgroupRoot: \/kth8-ours$/m);
  assert.match(yaml, /^podLogsDir: \/tmp\/kts-e2enode\/ours\/pod-logs$/m);
  assert.match(yaml, /^cgroupDriver: cgroupfs$/m);
  assert.notEqual(E2E_NODES.ours.criRoot, E2E_NODES.upstream.criRoot);
  assert.notEqual(E2E_NODES.ours.bridge, E2E_NODES.upstream.bridge);
});

Deno.test("--selection names a slice of --suite=node: its label filter and focus", () => {
  const node = parseOptions(["--suite=node", "--selection=sig-node"]);
  assert.match(
    node.labelFilter,
    /^sig-node && !FeatureGate:InPlacePodVerticalScaling && /,
  );
  assert.ok(node.labelFilter.endsWith(NODE_LABELS));
  assert.equal(node.focus, "");
  const storage = parseOptions(["--suite=node", "--selection=storage"]);
  const focus = new RegExp(storage.focus);
  assert.ok(
    focus.test(
      "[sig-storage] Subpath Atomic writer volumes should support subpaths with secret pod [Conformance]",
    ),
  );
  assert.ok(
    !focus.test(
      "[sig-storage] CSI Mock volume attach CSI attach test using mock driver should require VolumeAttach",
    ),
  );
  assert.ok(
    !focus.test(
      "[sig-storage] PersistentVolumes-local [Volume type: dir] One pod requesting one prebound PVC",
    ),
  );
  assert.ok(
    !focus.test("[sig-node] ConfigMap should update ConfigMap successfully"),
  );
  const inline = new RegExp(
    parseOptions(["--suite=node", "--selection=storage-inline"]).focus,
  );
  assert.ok(
    inline.test(
      "[sig-storage] In-tree Volumes [Driver: hostPathSymlink] [Testpattern: Inline-volume (default fs)] subPath should support existing directory",
    ),
  );
  assert.ok(
    !inline.test(
      "[sig-storage] In-tree Volumes [Driver: hostPath] [Testpattern: Pre-provisioned PV (default fs)] volumes should store data",
    ),
  );
  assert.ok(
    !inline.test(
      "[sig-storage] CSI Volumes [Driver: csi-hostpath] [Testpattern: Inline-volume (default fs)] subPath should support existing directory",
    ),
  );
  // --skip still narrows a selection.
  assert.equal(
    parseOptions(["--suite=node", "--selection=storage", "--skip=Slow"]).skip,
    "Slow",
  );
});

Deno.test("--selection is refused with the choices, outside --suite=node, or beside --focus", () => {
  assert.throws(
    () => parseOptions(["--suite=node", "--selection=all"]),
    /--selection=all: use sig-node, resize, storage, storage-inline/,
  );
  assert.throws(
    () => parseOptions(["--selection=storage"]),
    /--selection=storage needs --suite=node/,
  );
  assert.throws(
    () => parseOptions(["--suite=node", "--selection=storage", "--focus=x"]),
    /leave out --label-filter= and --focus=/,
  );
});
