import assert from "node:assert/strict";
import { CaptureLogger } from "../log/testing.ts";
import {
  createPluginWatcher,
  highestSupportedVersion,
} from "./plugin_registration.ts";
import {
  FakeCsiNodeApi,
  FakeCsiNodeClient,
  FakeRegistrationClient,
} from "./testing.ts";
import {
  installDriver,
  registerDriver,
  unregisterDriver,
} from "./csi_node_object.ts";

Deno.test("highestSupportedVersion takes the highest 1.x and refuses the rest with upstream's text", () => {
  assert.equal(highestSupportedVersion(["0.3.0", "1.0.0", "v1.2.0"]), "v1.2.0");
  assert.equal(highestSupportedVersion(["1.10.0", "1.9.3"]), "1.10.0");
  assert.throws(
    () => highestSupportedVersion(["0.3.0", "2.0.0"]),
    /^RangeError: none of the versions specified \["0.3.0","2.0.0"\] are supported/,
  );
});

function setUp(info: {
  type?: string;
  versions?: string[];
  endpoint?: string;
}) {
  const sockets = ["/r/plugins_registry/d-reg.sock"];
  const registration = new FakeRegistrationClient({
    type: info.type ?? "CSIPlugin",
    name: "d.example.com",
    endpoint: info.endpoint ?? "/r/plugins/d/csi.sock",
    supportedVersions: info.versions ?? ["1.0.0"],
  });
  const csi = new FakeCsiNodeClient();
  csi.info = {
    nodeId: "n1",
    maxVolumesPerNode: 7,
    topology: { "zone": "a", "node": "n1" },
  };
  const api = new FakeCsiNodeApi();
  const dialed: string[] = [];
  const watcher = createPluginWatcher({
    logger: new CaptureLogger(),
    registration: () => registration,
    csi: (endpoint) => {
      dialed.push(endpoint);
      return csi;
    },
    install: (name, info) =>
      registerDriver(api, { name: "n1", uid: () => "node-uid" }, name, info),
    uninstall: (name) => unregisterDriver(api, { name: "n1" }, name),
    listSockets: () => Promise.resolve([...sockets]),
  }, { dir: "/r/plugins_registry" });
  return { watcher, registration, csi, api, sockets, dialed };
}

Deno.test("a CSI plugin socket registers: NodeGetInfo, the CSINode entry, NotifyRegistrationStatus", async () => {
  const t = setUp({});
  await t.watcher.reconcile();
  assert.deepEqual(t.dialed, ["/r/plugins/d/csi.sock"]);
  assert.deepEqual(t.registration.statuses, [{ registered: true }]);
  assert.equal(
    t.watcher.get("d.example.com")?.endpoint,
    "/r/plugins/d/csi.sock",
  );
  assert.deepEqual(t.api.nodes.get("n1"), {
    metadata: {
      name: "n1",
      ownerReferences: [{
        apiVersion: "v1",
        kind: "Node",
        name: "n1",
        uid: "node-uid",
      }],
    },
    spec: {
      drivers: [{
        name: "d.example.com",
        nodeID: "n1",
        topologyKeys: ["node", "zone"],
        allocatable: { count: 7 },
      }],
    },
  });
  // upstream's node id annotation and topology labels on the Node
  assert.deepEqual(t.api.nodeMeta.annotations, {
    "csi.volume.kubernetes.io/nodeid": '{"d.example.com":"n1"}',
  });
  assert.deepEqual(t.api.nodeMeta.labels, { node: "n1", zone: "a" });
  // the same socket is not registered twice
  await t.watcher.reconcile();
  assert.equal(t.registration.statuses.length, 1);
  // the socket goes: so does the driver
  t.sockets.length = 0;
  await t.watcher.reconcile();
  assert.equal(t.watcher.get("d.example.com"), undefined);
  assert.deepEqual(t.api.nodes.get("n1")?.spec.drivers, []);
  // the node id goes, the labels stay (as upstream)
  assert.deepEqual(t.api.nodeMeta.annotations, {});
  assert.deepEqual(t.api.nodeMeta.labels, { node: "n1", zone: "a" });
});

Deno.test("a topology segment that disagrees with a Node label fails the registration", async () => {
  const t = setUp({});
  t.api.nodeMeta.labels = { zone: "b" };
  await t.watcher.reconcile();
  assert.deepEqual(t.registration.statuses, [{
    registered: false,
    error:
      'RegisterPlugin error -- plugin registration failed with err: detected topology value collision: driver reported "zone":"a" but existing label is "zone":"b"',
  }]);
  assert.equal(t.api.nodes.size, 0);
});

Deno.test("a plugin of another type or CSI version is refused and told why", async () => {
  const other = setUp({ type: "DevicePlugin" });
  await other.watcher.reconcile();
  assert.deepEqual(other.registration.statuses, [{
    registered: false,
    error:
      "no handler registered for plugin type: DevicePlugin at socket /r/plugins_registry/d-reg.sock",
  }]);
  assert.deepEqual(other.watcher.names(), []);
  // tried again at the next pass, as upstream's reconciler does
  await other.watcher.reconcile();
  assert.equal(other.registration.statuses.length, 2);
  const old = setUp({ versions: ["0.3.0"] });
  await old.watcher.reconcile();
  assert.match(
    old.registration.statuses[0]?.error ?? "",
    /^validation failed for CSI Driver d.example.com at endpoint \/r\/plugins\/d\/csi.sock: none of the versions/,
  );
  assert.equal(old.api.writes.length, 0);
});

Deno.test("the CSINode update retries a conflict and keeps other drivers", async () => {
  const api = new FakeCsiNodeApi();
  const node = { name: "n1" };
  await installDriver(api, node, { name: "a", nodeID: "n1", topologyKeys: [] });
  await installDriver(api, node, { name: "b", nodeID: "n1", topologyKeys: [] });
  api.conflicts = 2;
  await installDriver(api, node, {
    name: "a",
    nodeID: "n2",
    topologyKeys: ["k"],
  });
  assert.deepEqual(api.nodes.get("n1")?.spec.drivers, [
    { name: "a", nodeID: "n2", topologyKeys: ["k"] },
    { name: "b", nodeID: "n1", topologyKeys: [] },
  ]);
  assert.deepEqual(api.writes, [
    "create",
    "update",
    "update",
    "update",
    "update",
  ]);
});
