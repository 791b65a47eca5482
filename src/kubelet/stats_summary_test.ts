import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CpuRates } from "../server/mod.ts";
import { type StatsDeps, statsSummary } from "./stats_summary.ts";

const S = 1_000_000_000n;

/** A runtime with one ready sandbox whose container has used `usedS` seconds of CPU by `atMs`. */
function runtime(reading: () => { atMs: number; usedS: bigint }) {
  const metadata = { name: "web", namespace: "default", uid: "uid-1" };
  return {
    listPodSandbox: () =>
      Promise.resolve({
        items: [{ id: "sb1", state: 0, createdAt: 0n, metadata }],
      }),
    listContainers: () =>
      Promise.resolve({
        containers: [{ id: "c1", state: 1, createdAt: 0n, labels: {} }],
      }),
    listPodSandboxStats: () => {
      const { atMs, usedS } = reading();
      return Promise.resolve({
        stats: [{
          attributes: { id: "sb1", metadata },
          linux: {
            containers: [{
              attributes: { id: "c1", metadata: { name: "app" }, labels: {} },
              cpu: {
                timestamp: BigInt(atMs) * 1_000_000n,
                usageCoreNanoSeconds: { value: usedS * S },
              },
            }],
          },
        }],
      });
    },
    listContainerStats: () => Promise.resolve({ stats: [] }),
    imageFsInfo: () => Promise.reject(new Error("not asked")),
  } as unknown as StatsDeps["runtime"];
}

/** A cgroup v1 root whose `cpuacct.usage` is what `usedS()` says. */
function hostFiles(usedS: () => bigint) {
  return {
    exists: () => Promise.resolve(false),
    readTextFile: (path: string) =>
      path === "/sys/fs/cgroup/cpuacct/cpuacct.usage"
        ? Promise.resolve(`${usedS() * S}\n`)
        : Promise.reject(new Deno.errors.NotFound(path)),
  };
}

Deno.test("statsSummary() gives the node and each container a rate from the previous request", async () => {
  const clock = new FakeClock();
  let nodeUsed = 100n;
  let containerUsed = 1n;
  const deps: StatsDeps = {
    clock,
    runtime: runtime(() => ({ atMs: clock.now(), usedS: containerUsed })),
    nodeName: "node-a",
    rootDir: "/nonexistent-root-dir",
    startTimeMs: clock.now(),
    hostFiles: hostFiles(() => nodeUsed),
    cpuRates: new CpuRates(),
  };
  type Json = Record<string, Record<string, unknown>>;
  const cpus = async () => {
    const s = await statsSummary(deps) as unknown as {
      node: Json;
      pods: Array<{ containers: Json[] }>;
    };
    return {
      node: s.node.cpu,
      container: s.pods[0]!.containers[0]!.cpu,
    };
  };
  const first = await cpus();
  assert.equal(first.node?.usageCoreNanoSeconds, 100e9);
  assert.equal(first.node?.usageNanoCores, undefined);
  assert.equal(first.container?.usageNanoCores, undefined);
  await clock.advance(10_000);
  // 5 s of the machine's CPU and 2 s of the container's over 10 s
  nodeUsed += 5n;
  containerUsed += 2n;
  const second = await cpus();
  assert.equal(second.node?.usageNanoCores, 500_000_000);
  assert.equal(second.container?.usageNanoCores, 200_000_000);
});
