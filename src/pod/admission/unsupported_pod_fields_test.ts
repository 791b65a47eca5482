import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { PodWorkers } from "../lifecycle/pod_workers.ts";
import { PodSyncHandler } from "../lifecycle/sync_loop.ts";
import { createSysctlAllowlist, sysctlAdmission } from "./sysctl_admission.ts";
import type { Pod, PodStatus, PodSyncer } from "../types.ts";
import {
  unsupportedPodField,
  withUnsupportedFieldRefusal,
} from "./unsupported_pod_fields.ts";

function pod(spec: Record<string, unknown> = {}, uid = "u"): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: "ns", uid },
    spec: { containers: [{ name: "c" }], ...spec },
  } as Pod;
}

Deno.test("unsupportedPodField() names resourceClaims and volumeDevices", () => {
  assert.equal(unsupportedPodField(pod()), undefined);
  assert.equal(
    unsupportedPodField(pod({ setHostnameAsFQDN: false })),
    undefined,
  );
  assert.equal(unsupportedPodField(pod({ resourceClaims: [] })), undefined);
  assert.equal(
    unsupportedPodField(pod({ setHostnameAsFQDN: true, subdomain: "s" })),
    undefined,
  );
  assert.match(
    unsupportedPodField(
      pod({ resourceClaims: [{ name: "gpu", resourceClaimName: "g" }] }),
    ) ?? "",
    /^spec\.resourceClaims: /,
  );
  const device = { name: "disk", devicePath: "/dev/xvda" };
  assert.match(
    unsupportedPodField(
      pod({
        containers: [{ name: "a" }, { name: "b", volumeDevices: [device] }],
      }),
    ) ?? "",
    /^spec\.containers\[1\]\.volumeDevices: /,
  );
  assert.match(
    unsupportedPodField(
      pod({ initContainers: [{ name: "i", volumeDevices: [device] }] }),
    ) ?? "",
    /^spec\.initContainers\[0\]\.volumeDevices: /,
  );
  assert.match(
    unsupportedPodField(
      pod({ ephemeralContainers: [{ name: "e", volumeDevices: [device] }] }),
    ) ?? "",
    /^spec\.ephemeralContainers\[0\]\.volumeDevices: /,
  );
});

Deno.test("PodSyncHandler with withUnsupportedFieldRefusal() fails the pod with UnsupportedPodField and never syncs it", async () => {
  const synced: string[] = [];
  const clock = new FakeClock();
  const syncer: PodSyncer = {
    syncPod: (w) => {
      synced.push(w.pod.metadata.uid!);
      return Promise.resolve({ terminal: false });
    },
    syncTerminatingPod: () => Promise.resolve(),
    syncTerminatedPod: () => Promise.resolve(),
  };
  await using workers = new PodWorkers(
    { syncer, clock, logger: new CaptureLogger() },
    { random: () => 0 },
  );
  const statuses = new Map<string, PodStatus>();
  const handler = new PodSyncHandler({
    workers,
    clock,
    logger: new CaptureLogger(),
    allSourcesReady: () => true,
    admission: withUnsupportedFieldRefusal(
      sysctlAdmission(createSysctlAllowlist([]), {
        setPodStatus: (p, s) => void statuses.set(p.metadata.uid!, s),
      }),
    ),
  });
  const dra = pod({ resourceClaims: [{ name: "gpu" }] }, "dra");
  // the sysctl refusal comes first, as the earlier admit handler
  const both = pod({
    resourceClaims: [{ name: "gpu" }],
    securityContext: { sysctls: [{ name: "kernel.msgmax", value: "1" }] },
  }, "both");
  handler.handlePodAdditions([dra, both, pod({}, "plain")]);
  await workers.whenIdle();
  assert.deepEqual(synced, ["plain"]);
  assert.deepEqual(statuses.get("dra"), {
    qosClass: "BestEffort",
    phase: "Failed",
    reason: "UnsupportedPodField",
    message:
      "Pod was rejected: spec.resourceClaims: dynamic resource allocation (DRA) drivers are not supported (kubelet.ts does not implement it)",
  });
  assert.equal(statuses.get("both")?.reason, "SysctlForbidden");
});
