import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { admissionHarness } from "../testing.ts";
import assert from "node:assert/strict";
import { createSysctlAllowlist, sysctlAdmission } from "./sysctl_admission.ts";
import type { Pod } from "../types.ts";
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

Deno.test("unsupportedPodField() names resourceClaims", () => {
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
  // raw block volumes are carried out (local PVs): no longer refused at admission
  const device = { name: "disk", devicePath: "/dev/xvda" };
  assert.equal(
    unsupportedPodField(
      pod({
        containers: [{ name: "a" }, { name: "b", volumeDevices: [device] }],
        initContainers: [{ name: "i", volumeDevices: [device] }],
      }),
    ),
    undefined,
  );
});

Deno.test("PodSyncHandler with withUnsupportedFieldRefusal() fails the pod with UnsupportedPodField and never syncs it", async () => {
  await using h = admissionHarness((statuses) =>
    withUnsupportedFieldRefusal(
      sysctlAdmission(createSysctlAllowlist([]), statuses),
    ), {
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  });
  const { synced, statuses, handler, workers } = h;
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
