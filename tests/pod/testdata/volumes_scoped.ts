/**
 * Run by volumes_permissions_test.ts under path-scoped grants (as the compiled kubelet runs):
 * sets up a pod's volumes under the root dir given as the first argument and prints the
 * results as JSON.
 */
import type { Pod } from "../../../src/api/mod.ts";
import { CaptureLogger } from "../../../src/log/testing.ts";
import { withStorageVolumes } from "../../../src/storage/mod.ts";
import {
  FakeClaimReader,
  makeClaim,
  makeVolume,
} from "../../../src/storage/testing.ts";
import { createVolumeManager } from "../../../src/volume/mod.ts";

const root = Deno.args[0]!;
const logger = new CaptureLogger();
const volumes = createVolumeManager({ logger }, { rootDir: root });
const pod = (labels: Record<string, string>, extra: unknown[] = []) =>
  ({
    metadata: { name: "p", namespace: "ns", uid: "u1", labels },
    spec: {
      containers: [{
        name: "c",
        volumeMounts: [
          { name: "data", mountPath: "/d", subPath: "a/b" },
          { name: "info", mountPath: "/i" },
          { name: "host", mountPath: "/h" },
        ],
      }],
      volumes: [
        { name: "data", emptyDir: {} },
        {
          name: "info",
          downwardAPI: {
            items: [{
              path: "labels",
              fieldRef: { fieldPath: "metadata.labels" },
            }],
          },
        },
        {
          name: "host",
          hostPath: { path: `${root}/host/made`, type: "DirectoryOrCreate" },
        },
        ...extra,
      ],
    },
  }) as unknown as Pod;
const first = await volumes.setUpPod(pod({ v: "1" }));
const second = await volumes.setUpPod(pod({ v: "2" }));
const mounts = await volumes.containerMounts(
  pod({ v: "2" }),
  pod({ v: "2" }).spec.containers[0]!,
  { expand: (s) => s, running: new Set() },
);
const labels = await Deno.readTextFile(
  `${root}/pods/u1/volumes/kubernetes.io~downward-api/info/labels`,
);
const outside = await createVolumeManager({ logger }, { rootDir: root })
  .setUpPod(
    pod({ v: "3" }, [{
      name: "etc",
      hostPath: { path: "/etc/kts-h4-nope", type: "DirectoryOrCreate" },
    }]),
  );
// a subPath inside a hostPath the grants do not cover
const subPathPod = {
  metadata: { name: "sp", namespace: "ns", uid: "u3" },
  spec: {
    containers: [{
      name: "c",
      volumeMounts: [{ name: "h", mountPath: "/h", subPath: "a" }],
    }],
    volumes: [{ name: "h", hostPath: { path: "/etc/kts-sub-nope" } }],
  },
} as unknown as Pod;
const subPathVolumes = createVolumeManager({ logger }, { rootDir: root });
const subPathSetUp = await subPathVolumes.setUpPod(subPathPod);
const subPathOutside = await subPathVolumes.containerMounts(
  subPathPod,
  subPathPod.spec.containers[0]!,
  { expand: (s) => s, running: new Set() },
).then(() => `mounted (set-up ${JSON.stringify(subPathSetUp)})`, String);
// a local PV whose directory the grants do not cover
const claims = new FakeClaimReader();
claims.addClaim(makeClaim("ns", "c1", "pv1"));
claims.addVolume(
  makeVolume("pv1", { local: { path: "/etc/kts-local-pv" } }, "claim-c1"),
);
const localPv = await withStorageVolumes(
  createVolumeManager({ logger }, { rootDir: root }),
  { claims, logger },
).setUpPod({
  metadata: { name: "pv", namespace: "ns", uid: "u2" },
  spec: {
    containers: [{
      name: "c",
      volumeMounts: [{ name: "data", mountPath: "/data" }],
    }],
    volumes: [{ name: "data", persistentVolumeClaim: { claimName: "c1" } }],
  },
} as unknown as Pod);
// deno-lint-ignore no-console
console.log(JSON.stringify({
  first,
  second,
  mounts,
  outside,
  localPv,
  subPathOutside,
  labels,
  warnings: logger.records.map((r) => r.msg),
}));
