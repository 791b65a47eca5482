import assert from "node:assert/strict";
import { ApiStatusError } from "../api/mod.ts";
import type { ListResult, Node, NodeWatchApi, WatchEvent } from "../api/mod.ts";
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

/** A node watch that hands out the events pushed to it, then waits for the stop. */
class FakeNodeWatch implements NodeWatchApi {
  #events: WatchEvent<Node>[] = [];
  #wake: (() => void) | undefined;
  constructor(private readonly listed: () => Node[]) {}
  push(event: WatchEvent<Node>) {
    this.#events.push(event);
    this.#wake?.();
  }
  listOwnNode(): Promise<ListResult<Node>> {
    return Promise.resolve({ items: this.listed(), resourceVersion: "1" });
  }
  async *watchOwnNode(
    _name: string,
    _version: string,
    options: { signal?: AbortSignal },
  ): AsyncIterable<WatchEvent<Node>> {
    while (!options.signal?.aborted) {
      const next = this.#events.shift();
      if (next) {
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        options.signal?.addEventListener("abort", () => resolve(), {
          once: true,
        });
      });
    }
  }
}

Deno.test("createNodeAgent(): labels others put on the Node reach its copy by the watch, before the next status update; an older version is not taken", async () => {
  const api = new FakeApiServer();
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const watch = new FakeNodeWatch(() => []);
  await using agent = createNodeAgent({
    api,
    clock,
    logger: new CaptureLogger(),
    facts: () => Promise.resolve(structuredClone(FACTS)),
    nodeWatch: watch,
  }, {
    registration: {
      nodeName: "node-a",
      hostname: "node-a",
      os: "linux",
      arch: "amd64",
    },
    updateFrequencyMs: 10_000,
    reportFrequencyMs: 10_000,
  });
  agent.start();
  await clock.advance(0);
  const registered = agent.reporter.node!;
  const labelled = (rv: string, labels: Record<string, string>): Node => ({
    ...registered,
    metadata: { ...registered.metadata, resourceVersion: rv, labels },
  });
  watch.push({ type: "MODIFIED", object: labelled("100", { zone: "a" }) });
  await clock.advance(0);
  assert.equal(agent.reporter.node?.metadata.labels?.zone, "a");
  // a late event of an older version leaves the newer copy
  watch.push({ type: "MODIFIED", object: labelled("99", { zone: "old" }) });
  await clock.advance(0);
  assert.equal(agent.reporter.node?.metadata.labels?.zone, "a");
  // another node's object is not ours
  watch.push({
    type: "MODIFIED",
    object: {
      ...labelled("101", { zone: "b" }),
      metadata: { name: "node-b", resourceVersion: "101" },
    },
  });
  await clock.advance(0);
  assert.equal(agent.reporter.node?.metadata.name, "node-a");
  await agent.stop();
});
