import assert from "node:assert/strict";
import {
  cpuListBits,
  sliceComponents,
  slicePath,
  sliceResourceProperties,
  sliceStartProperties,
  sliceUnit,
} from "./slices.ts";
import type { UnitProperty } from "./systemd_units.ts";

const INFINITY = 0xffff_ffff_ffff_ffffn;

function flat(props: UnitProperty[]): Record<string, unknown> {
  return Object.fromEntries(props.map(([n, v]) => [n, v.value]));
}

Deno.test("sliceUnit() splits a systemd path into the unit and its parent slice", () => {
  assert.deepEqual(
    sliceUnit(
      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice",
    ),
    {
      name: "kubepods-burstable-pod1_2.slice",
      parent: "kubepods-burstable.slice",
    },
  );
  assert.deepEqual(sliceUnit("/kubepods.slice"), {
    name: "kubepods.slice",
    parent: "-.slice",
  });
  assert.throws(
    () => sliceUnit("/kubepods/burstable"),
    /Cgroup "\/kubepods\/burstable" is not a systemd slice path/,
  );
});

Deno.test("sliceStartProperties() wants the parent, turns accounting on and drops default dependencies", () => {
  const props = sliceStartProperties({ name: "a-b.slice", parent: "a.slice" });
  assert.deepEqual(flat(props), {
    Description: "libcontainer container a-b.slice",
    Wants: ["a.slice"],
    MemoryAccounting: true,
    CPUAccounting: true,
    IOAccounting: true,
    TasksAccounting: true,
    DefaultDependencies: false,
  });
  assert.equal(props.find(([n]) => n === "Wants")?.[1].signature, "as");
});

Deno.test("sliceResourceProperties() maps a limited pod's settings as libcontainer does", () => {
  const props = sliceResourceProperties({
    cpuShares: 256,
    cpuQuota: 25_000,
    cpuPeriod: 100_000,
    memoryLimit: 128 * 1024 * 1024,
    pidsLimit: 64,
  }, 252);
  assert.deepEqual(flat(props), {
    MemoryMax: 134217728n,
    CPUWeight: 10n,
    CPUQuotaPeriodUSec: 100_000n,
    CPUQuotaPerSecUSec: 250_000n,
    TasksMax: 64n,
  });
  for (const [, v] of props) assert.equal(v.signature, "t");
});

Deno.test("sliceResourceProperties() rounds the quota per second up to 10 ms", () => {
  // 1 m-CPU: quota 100 µs per 100 ms = 1 ms per second, rounded up to 10 ms
  assert.equal(
    flat(sliceResourceProperties({ cpuQuota: 100, cpuPeriod: 100_000 }, 252))
      .CPUQuotaPerSecUSec,
    10_000n,
  );
  // exactly 10 ms stays
  assert.equal(
    flat(sliceResourceProperties({ cpuQuota: 1_000, cpuPeriod: 100_000 }, 252))
      .CPUQuotaPerSecUSec,
    10_000n,
  );
  // 10.001 ms goes to 20 ms
  assert.equal(
    flat(sliceResourceProperties({ cpuQuota: 1_001, cpuPeriod: 100_000 }, 252))
      .CPUQuotaPerSecUSec,
    20_000n,
  );
});

Deno.test("sliceResourceProperties() sends infinity for -1 and nothing for unset or 0", () => {
  assert.deepEqual(
    flat(sliceResourceProperties({
      cpuQuota: -1,
      cpuPeriod: 100_000,
      memoryLimit: -1,
      pidsLimit: -1,
    }, 252)),
    {
      MemoryMax: INFINITY,
      CPUQuotaPeriodUSec: 100_000n,
      CPUQuotaPerSecUSec: INFINITY,
      TasksMax: INFINITY,
    },
  );
  assert.deepEqual(sliceResourceProperties({}, 252), []);
  assert.deepEqual(
    sliceResourceProperties({ memoryLimit: 0, pidsLimit: 0, cpuQuota: 0 }, 252),
    [],
  );
});

Deno.test("sliceResourceProperties() leaves the period out before systemd 242 and caps the weight", () => {
  assert.deepEqual(
    flat(
      sliceResourceProperties({ cpuQuota: 50_000, cpuPeriod: 100_000 }, 241),
    ),
    { CPUQuotaPerSecUSec: 500_000n },
  );
  assert.deepEqual(
    flat(
      sliceResourceProperties({ cpuQuota: 50_000, cpuPeriod: 100_000 }, 242),
    ),
    { CPUQuotaPeriodUSec: 100_000n, CPUQuotaPerSecUSec: 500_000n },
  );
  assert.deepEqual(flat(sliceResourceProperties({ cpuShares: 2 }, 252)), {
    CPUWeight: 1n,
  });
  assert.deepEqual(flat(sliceResourceProperties({ cpuShares: 262_144 }, 252)), {
    CPUWeight: 10_000n,
  });
  assert.deepEqual(
    flat(sliceResourceProperties({ cpuShares: 1_000_000 }, 252)),
    {
      CPUWeight: 10_000n,
    },
  );
});

Deno.test("sliceComponents() and slicePath() convert between a slice's name and its path", () => {
  assert.deepEqual(sliceComponents("/a.slice/a-b_c.slice"), ["a", "b-c"]);
  assert.deepEqual(sliceComponents("a-b_c.slice"), ["a", "b-c"]);
  assert.deepEqual(sliceComponents("/"), []);
  assert.deepEqual(sliceComponents("-.slice"), []);
  assert.equal(
    slicePath(["kubepods", "burstable", "pod1-2"]),
    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice",
  );
  assert.equal(slicePath([]), "/");
  assert.deepEqual(
    sliceComponents(slicePath(["kube-pods", "x"])),
    ["kube-pods", "x"],
  );
});

Deno.test("cpuListBits() packs a CPU list as AllowedCPUs' bitmask, lowest CPU in the first byte's lowest bit", () => {
  assert.deepEqual(cpuListBits("0-1"), [0b11]);
  assert.deepEqual(cpuListBits("0"), [1]);
  assert.deepEqual(cpuListBits("0-3,8,10-11"), [0x0f, 0b1101]);
  assert.deepEqual(cpuListBits("9"), [0, 0b10]);
  for (const bad of ["", "a", "3-1", "1,,2", "0-99999"]) {
    assert.equal(cpuListBits(bad), undefined, bad);
  }
});

Deno.test("sliceResourceProperties() sets AllowedCPUs from a CPU list on systemd 244 and later", () => {
  const allowed = (version: number) =>
    sliceResourceProperties({ cpuSet: "0-1" }, version).find(([n]) =>
      n === "AllowedCPUs"
    );
  assert.deepEqual(allowed(252), ["AllowedCPUs", {
    signature: "ay",
    value: [3],
  }]);
  assert.equal(allowed(243), undefined);
});
