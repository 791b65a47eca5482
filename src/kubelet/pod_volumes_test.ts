import assert from "node:assert/strict";
import { type PodVolumesFs, readPodVolumes } from "./pod_volumes.ts";

const FIGURES = {
  capacityBytes: 1000,
  availableBytes: 400,
  inodes: 100,
  inodesFree: 60,
};

/** Directories by path; usage per volume path; statfs answers for every path but "nofs". */
function fakeFs(
  dirs: Record<string, string[]>,
  usage: Record<string, { bytes: number; inodes: number }>,
): PodVolumesFs {
  return {
    readDirNames: (path) => Promise.resolve(dirs[path] ?? []),
    usage: (path) =>
      path in usage
        ? Promise.resolve(usage[path]!)
        : Promise.reject(new Deno.errors.PermissionDenied(path)),
    statfs: (path) =>
      Promise.resolve(path.endsWith("nofs") ? undefined : FIGURES),
    // a memory-backed emptyDir is a filesystem of its own
    device: (path) => Promise.resolve(path.endsWith("/mem") ? 2 : 1),
  };
}

const V = "/var/lib/kubelet/pods/u1/volumes";

Deno.test("each measured volume of a pod, with its usage and filesystem", async () => {
  const fs = fakeFs({
    [V]: [
      "kubernetes.io~empty-dir",
      "kubernetes.io~host-path",
      "kubernetes.io~projected",
    ],
    [`${V}/kubernetes.io~empty-dir`]: ["cache", "mem", "nofs", "unreadable"],
    [`${V}/kubernetes.io~host-path`]: ["data"],
    [`${V}/kubernetes.io~projected`]: ["kube-api-access-x"],
  }, {
    [`${V}/kubernetes.io~empty-dir/cache`]: { bytes: 4096, inodes: 2 },
    [`${V}/kubernetes.io~empty-dir/nofs`]: { bytes: 1, inodes: 1 },
    [`${V}/kubernetes.io~empty-dir/mem`]: { bytes: 8, inodes: 1 },
    [`${V}/kubernetes.io~host-path/data`]: { bytes: 9, inodes: 9 },
    [`${V}/kubernetes.io~projected/kube-api-access-x`]: {
      bytes: 3000,
      inodes: 9,
    },
  });
  const got = await readPodVolumes(
    fs,
    "/var/lib/kubelet/",
    ["u1", "u2"],
    () => 5,
  );
  assert.deepEqual([...got.keys()], ["u1"]);
  assert.deepEqual(got.get("u1"), [
    {
      name: "cache",
      timeMs: 5,
      usedBytes: 4096,
      inodesUsed: 2,
      fs: FIGURES,
      localEphemeral: true,
    },
    { name: "mem", timeMs: 5, usedBytes: 8, inodesUsed: 1, fs: FIGURES },
    {
      name: "nofs",
      timeMs: 5,
      usedBytes: 1,
      inodesUsed: 1,
      localEphemeral: true,
    },
    {
      name: "kube-api-access-x",
      timeMs: 5,
      usedBytes: 3000,
      inodesUsed: 9,
      fs: FIGURES,
    },
  ]);
});

Deno.test("without device numbers no volume counts as ephemeral storage", async () => {
  const fs: PodVolumesFs = {
    ...fakeFs({
      [V]: ["kubernetes.io~empty-dir"],
      [`${V}/kubernetes.io~empty-dir`]: ["cache"],
    }, { [`${V}/kubernetes.io~empty-dir/cache`]: { bytes: 4096, inodes: 2 } }),
    device: (path) => Promise.reject(new Deno.errors.PermissionDenied(path)),
  };
  const got = await readPodVolumes(fs, "/var/lib/kubelet", ["u1"], () => 5);
  assert.equal(got.get("u1")?.[0]?.localEphemeral, undefined);
  assert.equal(got.get("u1")?.[0]?.usedBytes, 4096);
});
