import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { admissionHarness } from "../testing.ts";
import assert from "node:assert/strict";
import { createSysctlAllowlist, sysctlAdmission } from "./sysctl_admission.ts";
import type { Pod } from "../types.ts";
import {
  APPARMOR_NOT_ENABLED,
  appArmorHostError,
  appArmorRefusal,
  appArmorRequired,
  withAppArmorAdmission,
} from "./apparmor_admission.ts";

const ANNOTATION = "container.apparmor.security.beta.kubernetes.io/c";

function pod(
  spec: Record<string, unknown> = {},
  annotations?: Record<string, string>,
  uid = "u",
): Pod {
  return {
    metadata: {
      name: `p-${uid}`,
      namespace: "ns",
      uid,
      ...(annotations ? { annotations } : {}),
    },
    spec: { containers: [{ name: "c" }], ...spec },
  } as Pod;
}

function withProfile(type: string) {
  return { securityContext: { appArmorProfile: { type } } };
}

Deno.test("appArmorRequired() is true for any profile but Unconfined, in fields or annotations", () => {
  assert.equal(appArmorRequired(pod()), false);
  assert.equal(appArmorRequired(pod(withProfile("Unconfined"))), false);
  assert.equal(appArmorRequired(pod(withProfile("RuntimeDefault"))), true);
  assert.equal(
    appArmorRequired(
      pod({ containers: [{ name: "c", ...withProfile("Localhost") }] }),
    ),
    true,
  );
  assert.equal(
    appArmorRequired(pod({
      containers: [{ name: "c", ...withProfile("Unconfined") }],
    })),
    false,
  );
  for (const field of ["initContainers", "ephemeralContainers"]) {
    assert.equal(
      appArmorRequired(pod({
        [field]: [{ name: "x", ...withProfile("RuntimeDefault") }],
      })),
      true,
      field,
    );
  }
  assert.equal(
    appArmorRequired(pod({}, { [ANNOTATION]: "unconfined" })),
    false,
  );
  assert.equal(
    appArmorRequired(pod({}, { [ANNOTATION]: "runtime/default" })),
    true,
  );
  assert.equal(
    appArmorRequired(pod({}, { [ANNOTATION]: "localhost/k8s-deny-write" })),
    true,
  );
  assert.equal(appArmorRequired(pod({}, { other: "runtime/default" })), false);
});

Deno.test("appArmorHostError() accepts only Y and refuses when the switch is unknown", () => {
  assert.equal(appArmorHostError("Y\n"), undefined);
  assert.equal(appArmorHostError("N\n"), APPARMOR_NOT_ENABLED);
  assert.equal(appArmorHostError(""), APPARMOR_NOT_ENABLED);
  assert.equal(
    appArmorHostError(new Error("permission denied")),
    "AppArmor support of the host is unknown: cannot read /sys/module/apparmor/parameters/enabled: permission denied",
  );
});

Deno.test("appArmorRefusal() refuses a pending pod asking for AppArmor on a host without it", () => {
  const asks = pod({}, {
    [ANNOTATION]: "localhost/k8s-apparmor-example-deny-write",
  });
  assert.deepEqual(appArmorRefusal(asks, APPARMOR_NOT_ENABLED), {
    reason: "AppArmor",
    message: "Cannot enforce AppArmor: AppArmor is not enabled on the host",
  });
  assert.equal(appArmorRefusal(asks, undefined), undefined);
  assert.equal(appArmorRefusal(pod(), APPARMOR_NOT_ENABLED), undefined);
  const running = { ...asks, status: { phase: "Running" } } as Pod;
  assert.equal(appArmorRefusal(running, APPARMOR_NOT_ENABLED), undefined);
  const pending = { ...asks, status: { phase: "Pending" } } as Pod;
  assert.equal(
    appArmorRefusal(pending, APPARMOR_NOT_ENABLED)?.reason,
    "AppArmor",
  );
});

Deno.test("PodSyncHandler with withAppArmorAdmission() fails the pod with reason AppArmor and never syncs it", async () => {
  await using h = admissionHarness((statuses) =>
    withAppArmorAdmission(
      sysctlAdmission(createSysctlAllowlist([]), statuses),
      APPARMOR_NOT_ENABLED,
    ), {
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  });
  const { synced, statuses, handler, workers } = h;
  handler.handlePodAdditions([
    pod(withProfile("RuntimeDefault"), undefined, "confined"),
    pod(withProfile("Unconfined"), undefined, "plain"),
  ]);
  await workers.whenIdle();
  assert.deepEqual(synced, ["plain"]);
  assert.deepEqual(statuses.get("confined"), {
    qosClass: "BestEffort",
    phase: "Failed",
    reason: "AppArmor",
    message:
      "Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host",
  });
});
