import assert from "node:assert/strict";
import { CpuRates, fillUsageNanoCores, usageNanoCores } from "./cpu_rate.ts";
import type { CriContainerStats, CriPodSandboxStats } from "./summary.ts";

const S = 1_000_000_000n;
const sample = (seconds: bigint, usedNs: bigint) => ({
  timestampNs: seconds * S,
  usageCoreNanoSeconds: usedNs,
});

Deno.test("usageNanoCores is the CPU time used per second between two readings", () => {
  // 3 s of CPU time over 2 s of wall time: one and a half cores
  assert.equal(
    usageNanoCores(sample(10n, 1n * S), sample(12n, 4n * S)),
    1_500_000_000,
  );
  // a third of a core, rounded down as upstream's conversion to uint64 does
  assert.equal(
    usageNanoCores(sample(0n, 0n), sample(3n, 1n * S)),
    333_333_333,
  );
});

Deno.test("usageNanoCores needs an earlier reading with less CPU time", () => {
  assert.equal(usageNanoCores(undefined, sample(1n, 5n)), undefined);
  // a restarted container's counter starts again from zero
  assert.equal(usageNanoCores(sample(1n, 9n * S), sample(2n, S)), undefined);
  assert.equal(usageNanoCores(sample(2n, 1n), sample(2n, 5n)), undefined);
  assert.equal(usageNanoCores(sample(3n, 1n), sample(2n, 5n)), undefined);
});

Deno.test("CpuRates remembers the last reading per key and forgets the unlisted", () => {
  const rates = new CpuRates();
  assert.equal(rates.observe("a", sample(1n, 0n)), undefined);
  assert.equal(rates.observe("b", sample(1n, 0n)), undefined);
  assert.equal(rates.observe("a", sample(2n, S / 2n)), 500_000_000);
  // the rate is against the reading just before, not the first one
  assert.equal(rates.observe("a", sample(4n, S / 2n + 4n * S)), 2 * 1e9);
  rates.retain(new Set(["a"]));
  assert.equal(rates.observe("b", sample(2n, S)), undefined);
  assert.equal(rates.observe("a", sample(5n, S / 2n + 5n * S)), 1e9);
});

const u = (value: bigint) => ({ value });

function container(id: string, atS: bigint, usedNs: bigint): CriContainerStats {
  return {
    attributes: { id, metadata: { name: id }, labels: {} },
    cpu: { timestamp: atS * S, usageCoreNanoSeconds: u(usedNs) },
  };
}

function pod(
  atS: bigint,
  usedNs: bigint,
  containers: CriContainerStats[],
): CriPodSandboxStats {
  return {
    attributes: {
      id: "sb",
      metadata: { name: "p", namespace: "ns", uid: "uid" },
    },
    linux: {
      cpu: { timestamp: atS * S, usageCoreNanoSeconds: u(usedNs) },
      containers,
    },
  };
}

function rates(pods: CriPodSandboxStats[]) {
  return pods.map((p) => ({
    pod: p.linux?.cpu?.usageNanoCores?.value,
    containers: p.linux?.containers.map((c) => c.cpu?.usageNanoCores?.value),
  }));
}

Deno.test("fillUsageNanoCores gives containers and sandboxes their rate from the second reading", () => {
  const cache = new CpuRates();
  const first = fillUsageNanoCores([
    pod(10n, 4n * S, [container("c1", 10n, S), container("c2", 10n, 3n * S)]),
  ], cache);
  assert.deepEqual(rates(first), [{
    pod: undefined,
    containers: [undefined, undefined],
  }]);
  const second = fillUsageNanoCores([
    pod(20n, 9n * S, [
      container("c1", 20n, 3n * S),
      container("c2", 20n, 6n * S),
    ]),
  ], cache);
  assert.deepEqual(rates(second), [{
    pod: 500_000_000n,
    containers: [200_000_000n, 300_000_000n],
  }]);
});

Deno.test("fillUsageNanoCores keeps the runtime's own rate and forgets gone containers", () => {
  const cache = new CpuRates();
  // a runtime that gives its own rate, here unlike the counters' (1 core)
  const own = (atS: bigint) => {
    const c = container("c1", atS, atS * S);
    return { ...c, cpu: { ...c.cpu!, usageNanoCores: u(42n) } };
  };
  cache.observe("/", sample(1n, 0n));
  fillUsageNanoCores(
    [pod(10n, S, [own(10n), container("c2", 10n, S)])],
    cache,
    [
      "/",
    ],
  );
  // c2 is gone from this listing: its reading is dropped, so it comes back without a rate
  fillUsageNanoCores([pod(20n, 2n * S, [own(20n)])], cache, ["/"]);
  const third = fillUsageNanoCores(
    [
      pod(30n, 3n * S, [own(30n), container("c2", 30n, 2n * S)]),
    ],
    cache,
    ["/"],
  );
  assert.deepEqual(rates(third), [{
    pod: 100_000_000n,
    containers: [42n, undefined],
  }]);
  // the extra key (the root cgroup) was kept
  assert.equal(cache.observe("/", sample(2n, S)), 1e9);
});
