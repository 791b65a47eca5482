import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { admissionHarness } from "../testing.ts";
import assert from "node:assert/strict";
import {
  createSysctlAllowlist,
  normalizeSysctlName,
  safeSysctls,
  sysctlAdmission,
  SysctlAllowlist,
} from "./sysctl_admission.ts";
import type { Pod } from "../types.ts";

function pod(
  sysctls: { name: string; value: string }[],
  spec: Partial<Pod["spec"]> = {},
): Pod {
  return {
    metadata: { name: "p", namespace: "ns", uid: "u" },
    spec: {
      containers: [{ name: "c" }],
      securityContext: { sysctls },
      ...spec,
    },
  };
}

Deno.test("safeSysctls() drops the sysctls the kernel is too old for, and all gated ones when unknown", () => {
  const all = safeSysctls("6.8.0-45-generic");
  assert.equal(all.length, 12);
  assert.ok(all.includes("net.ipv4.tcp_rmem"));
  const old = safeSysctls("4.14.1");
  assert.ok(old.includes("net.ipv4.tcp_keepalive_time"));
  assert.ok(!old.includes("net.ipv4.tcp_rmem"));
  assert.deepEqual(safeSysctls(undefined), [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
  ]);
});

Deno.test("normalizeSysctlName() turns slash-separated names into the dotted form", () => {
  assert.equal(
    normalizeSysctlName("net/ipv4/conf/eth0.100/forwarding"),
    "net.ipv4.conf.eth0/100.forwarding",
  );
  assert.equal(
    normalizeSysctlName("kernel.shm_rmid_forced"),
    "kernel.shm_rmid_forced",
  );
});

Deno.test("SysctlAllowlist.admit() allows safe sysctls and rejects others with SysctlForbidden", () => {
  const list = createSysctlAllowlist([], { kernelRelease: "6.1.0" });
  assert.deepEqual(list.admit(pod([])), { admit: true });
  assert.deepEqual(
    list.admit(
      pod([{ name: "net.ipv4.ip_local_port_range", value: "1024 65000" }]),
    ),
    { admit: true },
  );
  assert.deepEqual(list.admit(pod([{ name: "kernel.msgmax", value: "1" }])), {
    admit: false,
    reason: "SysctlForbidden",
    message: 'forbidden sysctl: "kernel.msgmax" not allowlisted',
  });
});

Deno.test("SysctlAllowlist.admit() takes allowedUnsafeSysctls names and prefixes", () => {
  const list = createSysctlAllowlist(["kernel.msg*", "net.core.somaxconn"]);
  assert.deepEqual(list.admit(pod([{ name: "kernel.msgmax", value: "1" }])), {
    admit: true,
  });
  assert.deepEqual(
    list.admit(pod([{ name: "net/core/somaxconn", value: "1024" }])),
    { admit: true },
  );
});

Deno.test("SysctlAllowlist.admit() refuses namespaced sysctls that would reach the host's namespace", () => {
  const list = createSysctlAllowlist(["kernel.msg*"]);
  assert.deepEqual(
    list.admit(
      pod([{ name: "net.ipv4.tcp_syncookies", value: "1" }], {
        hostNetwork: true,
      }),
    ),
    {
      admit: false,
      reason: "SysctlForbidden",
      message:
        'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled',
    },
  );
  const ipc = list.admit(
    pod([{ name: "kernel.msgmax", value: "1" }], { hostIPC: true }),
  );
  assert.equal(ipc.admit, false);
});

Deno.test("SysctlAllowlist refuses patterns outside a known namespace or malformed", () => {
  assert.throws(
    () => new SysctlAllowlist(["vm.swappiness"]),
    /not known to be namespaced/,
  );
  assert.throws(
    () => new SysctlAllowlist(["Net.Bad"]),
    /must have at most 253 characters/,
  );
});

Deno.test("PodSyncHandler with sysctlAdmission() fails a forbidden pod and never syncs it", async () => {
  await using h = admissionHarness(
    (statuses) => sysctlAdmission(createSysctlAllowlist([]), statuses),
    {
      clock: new FakeClock(),
      logger: new CaptureLogger(),
    },
  );
  const { synced, statuses, handler, workers } = h;
  const bad = pod([{ name: "kernel.msgmax", value: "1" }]);
  const good = {
    ...pod([]),
    metadata: { name: "ok", namespace: "ns", uid: "v" },
  };
  handler.handlePodAdditions([bad, good]);
  handler.handlePodUpdates([bad]);
  await workers.whenIdle();
  assert.deepEqual(synced, ["v"]);
  assert.deepEqual(statuses.get("u"), {
    qosClass: "BestEffort",
    phase: "Failed",
    reason: "SysctlForbidden",
    message:
      'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted',
  });
  assert.equal(handler.pods().length, 2);
});

Deno.test("safeSysctls() keeps a gated sysctl on a kernel exactly at its version", () => {
  // upstream getSafeSysctlAllowlist: kernelVersion.AtLeast(the sysctl's minimum)
  const at = (release: string) => safeSysctls(release);
  for (const release of ["4.15.0-213-generic", "4.15", "5.0.0", "4.16.1"]) {
    const why = `kernel ${release} is at least 4.15`;
    assert.ok(at(release).includes("net.ipv4.tcp_rmem"), why);
    assert.ok(at(release).includes("net.ipv4.tcp_wmem"), why);
  }
  assert.ok(!at("4.14.336").includes("net.ipv4.tcp_wmem"));
  assert.ok(at("4.5.0").includes("net.ipv4.tcp_keepalive_time"));
  assert.ok(!at("4.5.0").includes("net.ipv4.tcp_fin_timeout"));
  assert.ok(at("4.6.0").includes("net.ipv4.tcp_fin_timeout"));
  assert.ok(at("3.16.0").includes("net.ipv4.ip_local_reserved_ports"));
  assert.ok(!at("3.15.0").includes("net.ipv4.ip_local_reserved_ports"));
  assert.deepEqual(
    createSysctlAllowlist([], { kernelRelease: "4.15.0" }).admit(
      pod([{ name: "net.ipv4.tcp_rmem", value: "4096 87380 6291456" }]),
    ),
    { admit: true },
  );
});
