import assert from "node:assert/strict";
import { ApiStatusError } from "../api/mod.ts";
import { FakeApiServer } from "../api/testing.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createNodeAgent } from "./node_agent.ts";
import type { NodeFacts } from "./node_status_setters.ts";

const FACTS: NodeFacts = {
  hostname: "node-a",
  nodeIPs: [],
  cpuCores: 1,
  memoryBytes: 2 ** 30,
  maxPods: 110,
  nodeInfo: {
    machineID: "",
    systemUUID: "",
    bootID: "",
    kernelVersion: "6",
    osImage: "Linux",
    kubeletVersion: "v1.34.0",
    operatingSystem: "linux",
    architecture: "amd64",
  },
  containerRuntimeVersion: "containerd://1.7.0",
  kubeletPort: 10250,
  runtimeConditions: [],
};

Deno.test("createNodeAgent() keeps the lease heartbeat going while node status updates fail", async () => {
  const api = new FakeApiServer();
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  await using agent = createNodeAgent({
    api,
    clock,
    logger: new CaptureLogger(),
    facts: () => Promise.resolve(structuredClone(FACTS)),
  }, {
    registration: {
      nodeName: "node-a",
      hostname: "node-a",
      os: "linux",
      arch: "amd64",
    },
    updateFrequencyMs: 10_000,
    reportFrequencyMs: 10_000,
    leaseDurationSeconds: 40,
  });
  agent.start();
  await clock.advance(0);
  const uid = api.nodes.get("node-a")!.metadata.uid;
  for (let i = 0; i < 100; i++) {
    api.injectError(
      "patchNodeStatus",
      new ApiStatusError("etcd is slow", { code: 504 }),
    );
  }
  await clock.advance(40_000);
  const lease = api.leases.get("kube-node-lease/node-a")!;
  assert.equal(lease.spec.renewTime, "2026-01-01T00:00:40.000000Z");
  assert.equal(lease.metadata.ownerReferences?.[0]?.uid, uid);
  await agent.stop();
  await agent.stop();
});
