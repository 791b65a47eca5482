import assert from "node:assert/strict";
import {
  checkPermissions,
  createPermissionsHook,
  formatMissing,
  planPermissions,
} from "./mod.ts";
import type { PermissionGrant, PermissionPlan } from "./mod.ts";

const noFile = () => undefined;

function samplePlan(): Promise<PermissionPlan> {
  return planPermissions({
    config: {
      staticPodPath: "/etc/kubernetes/manifests",
      containerRuntimeEndpoint: "unix:///run/k3s/containerd.sock",
    },
    flags: { rootDir: "/srv/kubelet" },
  }, { readFile: noFile });
}

Deno.test("checkPermissions() reports every grant that is not granted", async () => {
  const plan = await samplePlan();
  const asked: string[] = [];
  const missing = await checkPermissions(plan, {
    query: (g: PermissionGrant) => {
      asked.push(`${g.name}:${g.value}`);
      if (g.value === "/etc/kubernetes/manifests") {
        return Promise.resolve("prompt");
      }
      if (g.value === "unix:/run/k3s/containerd.sock") {
        return Promise.resolve("denied");
      }
      return Promise.resolve("granted");
    },
  });
  assert.equal(asked.length, plan.grants.length);
  assert.deepEqual(missing.map((m) => `${m.name}:${m.value}:${m.reason}`), [
    "read:/etc/kubernetes/manifests:staticPodPath",
    "net:unix:/run/k3s/containerd.sock:containerRuntimeEndpoint",
  ]);
});

Deno.test("checkPermissions() finds nothing missing under --allow-all", async () => {
  assert.equal(
    (await Deno.permissions.query({ name: "read" })).state,
    "granted",
  );
  assert.deepEqual(await checkPermissions(await samplePlan()), []);
});

Deno.test("formatMissing() lists each grant and the exact rebuild command", () => {
  const message = formatMissing([
    {
      name: "read",
      value: "/etc/kubernetes/manifests",
      reason: "staticPodPath",
    },
    {
      name: "net",
      value: "unix:/run/k3s/containerd.sock",
      reason: "containerRuntimeEndpoint",
    },
    { name: "read", value: "/opt/my dir", reason: "tlsCertFile" },
  ], {
    configPath: "/etc/kubelet/config.yaml",
    kubeletFlags: ["--root-dir=/srv/kubelet"],
  });
  const lines = message.split("\n");
  assert.match(lines[0]!, /lacks 3 permission/);
  assert.ok(
    lines.includes(
      "  --allow-read=/etc/kubernetes/manifests  (needed by staticPodPath)",
    ),
  );
  assert.ok(
    lines.some((l) =>
      l.includes("unix:/run/k3s/containerd.sock") &&
      l.includes("containerRuntimeEndpoint")
    ),
  );
  assert.ok(lines.includes(
    "  deno task compile --permissions-from /etc/kubelet/config.yaml --root-dir=/srv/kubelet",
  ));
  assert.ok(lines.includes(
    "  '--allow-read=/etc/kubernetes/manifests,/opt/my dir' --allow-net=unix:/run/k3s/containerd.sock",
  ));
  assert.equal(formatMissing([]), "");
});

Deno.test("formatMissing() names a placeholder when no config file was used", () => {
  const message = formatMissing([{
    name: "sys",
    value: "statfs",
    reason: "x",
  }]);
  assert.match(message, /--permissions-from '<kubelet-config.yaml>'/);
});

Deno.test("permissionsHook.check() returns one message only when grants are missing", async () => {
  const ctx = {
    config: { staticPodPath: "/etc/kubernetes/manifests" },
    flags: { config: "/etc/kubelet.yaml" },
  };
  const denyManifests = createPermissionsHook({
    readFile: noFile,
    query: (g) =>
      Promise.resolve(
        g.value === "/etc/kubernetes/manifests" ? "prompt" : "granted",
      ),
  });
  const problems = await denyManifests.check(ctx);
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /staticPodPath/);
  assert.match(problems[0]!, /--permissions-from \/etc\/kubelet.yaml/);
  const allowAll = createPermissionsHook({
    readFile: noFile,
    query: () => Promise.resolve("granted"),
  });
  assert.deepEqual(await allowAll.check(ctx), []);
});

Deno.test("permissionsHook.check() turns an ungrantable value into a message", async () => {
  const hook = createPermissionsHook({
    readFile: noFile,
    query: () => Promise.resolve("granted"),
  });
  const problems = await hook.check({
    config: { containerRuntimeEndpoint: "npipe:////./pipe/containerd" },
    flags: {},
  });
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /containerRuntimeEndpoint/);
});

Deno.test("permissionsHook.flagsFor() renders the plan as flags", async () => {
  const hook = createPermissionsHook({ readFile: noFile });
  const flags = await hook.flagsFor({
    config: { containerRuntimeEndpoint: "sim://" },
    flags: { rootDir: "/tmp/kts" },
  });
  assert.ok(
    flags.includes(
      "--allow-write=/run/kubelet.ts/memory,/tmp/kts,/var/log/containers,/var/log/pods",
    ),
  );
  assert.ok(flags.every((f) => !/allow-(all|run|ffi)/.test(f)));
});

Deno.test("createPermissionsHook() grants relative command-line paths as absolute ones", async () => {
  const hook = createPermissionsHook({ readFile: noFile });
  const flags = await hook.flagsFor({
    config: { staticPodPath: "manifests", containerRuntimeEndpoint: "sim://" },
    flags: { config: "kubelet.yaml", rootDir: "/var/lib/kubelet" },
  });
  const read = flags.find((f) => f.startsWith("--allow-read="));
  assert.ok(read?.includes(`${Deno.cwd()}/kubelet.yaml`), read);
  assert.ok(read?.includes(`${Deno.cwd()}/manifests`), read);
});
