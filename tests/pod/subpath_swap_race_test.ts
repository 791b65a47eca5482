/**
 * The subPath swap race (the CVE-2021-25741 class) against the real volume manager on a
 * temporary root dir: a container with a `subPath` that (re)starts while another container
 * that mounts the same volume writable runs is refused, whether that writer is a sidecar
 * (restartable init container) or an ephemeral container (`kubectl debug --target`); once no
 * writer runs, a subPath swapped for a symbolic link to `/` is refused and never resolves to
 * a host path.
 */
import assert from "node:assert/strict";
import type { Container, Pod } from "../../src/api/mod.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { createVolumeManager } from "../../src/volume/mod.ts";

const app: Container = {
  name: "app",
  image: "busybox",
  volumeMounts: [{ name: "shared", mountPath: "/data", subPath: "data" }],
};
const writes = [{ name: "shared", mountPath: "/w" }];

function podWith(writer: "sidecar" | "ephemeral"): Pod {
  return {
    metadata: { name: "race", namespace: "ns", uid: `race-${writer}` },
    spec: {
      containers: [app],
      ...(writer === "sidecar"
        ? {
          initContainers: [{
            name: "writer",
            image: "busybox",
            restartPolicy: "Always",
            volumeMounts: writes,
          }],
        }
        : {
          ephemeralContainers: [{
            name: "writer",
            image: "busybox",
            targetContainerName: "app",
            volumeMounts: writes,
          }],
        }),
      volumes: [{ name: "shared", emptyDir: {} }],
    },
  } as unknown as Pod;
}

for (const writer of ["sidecar", "ephemeral"] as const) {
  Deno.test(`subPath swap race with a running ${writer} writer: refused, and a swap to / never reaches the host`, async () => {
    const rootDir = await Deno.realPath(await Deno.makeTempDir());
    const volumes = createVolumeManager({ logger: new CaptureLogger() }, {
      rootDir,
    });
    const pod = podWith(writer);
    try {
      assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
      const expand = (s: string) => s;
      // the first start: the writer does not run yet, the subPath is made in the volume
      const first = await volumes.containerMounts(pod, app, {
        running: new Set(),
        expand,
      });
      const vol =
        `${rootDir}/pods/${pod.metadata.uid}/volumes/kubernetes.io~empty-dir/shared`;
      assert.equal(first[0]!.hostPath, `${vol}/data`);

      // the writer runs and swaps the directory for a link to the host's root
      await Deno.remove(`${vol}/data`, { recursive: true });
      await Deno.symlink("/", `${vol}/data`);
      // app restarts while the writer runs: refused before any path is resolved
      await assert.rejects(
        volumes.containerMounts(pod, app, {
          running: new Set(["writer"]),
          expand,
        }),
        (e: Error) =>
          e instanceof RangeError &&
          /cannot be mounted safely while container "writer"/.test(e.message),
      );
      // with the writer gone the swapped link is seen and refused: never "/"
      let resolved: string | undefined;
      try {
        resolved = (await volumes.containerMounts(pod, app, {
          running: new Set(),
          expand,
        }))[0]!.hostPath;
      } catch (e) {
        assert.match(String(e), /outside|escape|symlink|volume/i);
      }
      if (resolved !== undefined) {
        assert.ok(resolved.startsWith(vol + "/"), resolved);
      }
    } finally {
      await volumes.tearDownPod(pod);
      await Deno.remove(rootDir, { recursive: true });
    }
  });
}
