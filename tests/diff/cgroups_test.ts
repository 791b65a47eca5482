import assert from "node:assert/strict";
import { maskCgroupPath, podNames, snapshotCgroups } from "./cgroups.ts";
import { compareCgroups } from "./run.ts";

const UID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
const CTR = "c".repeat(64);

Deno.test("maskCgroupPath names pods, hides container IDs, keeps unknown pods", () => {
  const names = new Map([[UID, "web-n"]]);
  assert.equal(
    maskCgroupPath(`/kubepods/burstable/pod${UID}/${CTR}`, names),
    "<root>/kubepods/burstable/pod<web-n>/<container>",
  );
  assert.equal(
    maskCgroupPath("/kubepods/podother", names),
    "<root>/kubepods/podother",
  );
});

Deno.test("podNames reads UIDs and names from RunPodSandbox calls only", () => {
  const names = podNames([
    {
      start: "",
      durationMs: 1,
      method: "/runtime.v1.RuntimeService/RunPodSandbox",
      request: { config: { metadata: { name: "web-n", uid: UID } } },
    },
    {
      start: "",
      durationMs: 1,
      method: "/runtime.v1.RuntimeService/PodSandboxStatus",
      request: { config: { metadata: { name: "x", uid: "other" } } },
    },
  ]);
  assert.deepEqual([...names], [[UID, "web-n"]]);
});

Deno.test("snapshotCgroups reads the written files below kubepods in each hierarchy", async () => {
  const mount = await Deno.makeTempDir();
  try {
    const pod = `${mount}/cpu/r/kubepods/burstable/pod${UID}`;
    await Deno.mkdir(`${pod}/${CTR}`, { recursive: true });
    await Deno.writeTextFile(`${mount}/cpu/r/kubepods/cpu.shares`, "1792\n");
    await Deno.writeTextFile(`${pod}/cpu.shares`, "92\n");
    await Deno.writeTextFile(`${pod}/cpu.stat`, "nr_periods 0\n");
    await Deno.writeTextFile(`${pod}/${CTR}/cpu.shares`, "2\n");
    await Deno.mkdir(`${mount}/hugetlb/r/kubepods`, { recursive: true });
    await Deno.writeTextFile(
      `${mount}/hugetlb/r/kubepods/hugetlb.2MB.limit_in_bytes`,
      "0",
    );
    const snap = await snapshotCgroups("/r", new Map([[UID, "web-n"]]), mount);
    assert.deepEqual(snap.dirs, [
      "cpu:<root>/kubepods",
      "cpu:<root>/kubepods/burstable",
      "cpu:<root>/kubepods/burstable/pod<web-n>",
      "cpu:<root>/kubepods/burstable/pod<web-n>/<container>",
      "hugetlb:<root>/kubepods",
    ]);
    assert.deepEqual(snap.files, {
      "cpu:<root>/kubepods/cpu.shares": "1792",
      "cpu:<root>/kubepods/burstable/pod<web-n>/cpu.shares": "92",
      "hugetlb:<root>/kubepods/hugetlb.2MB.limit_in_bytes": "0",
    });
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("compareCgroups reports leftover directories and differing files", () => {
  const snap = (dirs: string[], files: Record<string, string>) => ({
    dirs,
    files,
  });
  const diffs = compareCgroups(
    new Map([[
      "after",
      snap(["cpu:<root>/kubepods", "cpu:<root>/x"], {
        "cpu:<root>/kubepods/cpu.shares": "2",
      }),
    ]]),
    new Map([[
      "after",
      snap(["cpu:<root>/kubepods"], {
        "cpu:<root>/kubepods/cpu.shares": "1792",
      }),
    ]]),
  );
  assert.deepEqual(diffs.map((d) => `${d.what}: ${d.detail}`), [
    "cgroups after: directory only in ours: cpu:<root>/x",
    'cgroups after: cpu:<root>/kubepods/cpu.shares: "2" ≠ "1792"',
  ]);
});
