import assert from "node:assert/strict";
import {
  contextFor,
  parseListsArgs,
  planFor,
  UsageError,
} from "../../scripts/permission_lists.ts";
import { makeLayout } from "./_helpers.ts";

Deno.test("parseListsArgs() keeps kubelet flags verbatim and takes its own options", () => {
  const { request, rest } = parseListsArgs(
    [
      "--permissions-from",
      "cfg.yaml",
      "--root-dir",
      "/srv/k",
      "--api-server=10.0.0.1:6443",
      "--host-path",
      "/mnt/disks",
      "--host-path=/srv/data",
      "--print-command",
      "--arch",
      "arm64",
      "--v=4",
    ],
    { valued: ["--arch"], boolean: ["--print-command"] },
  );
  assert.equal(request.permissionsFrom, "cfg.yaml");
  assert.deepEqual(request.apiServers, ["10.0.0.1:6443"]);
  assert.deepEqual(request.hostPaths, ["/mnt/disks", "/srv/data"]);
  assert.deepEqual(request.kubeletFlags, ["--root-dir", "/srv/k", "--v=4"]);
  assert.deepEqual(rest, ["--print-command", "--arch=arm64"]);
  assert.throws(() => parseListsArgs(["--permissions-from"]), UsageError);
});

Deno.test("contextFor() resolves config and flags the way the kubelet does", async () => {
  await using layout = await makeLayout();
  const ctx = await contextFor(
    {
      permissionsFrom: layout.config,
      kubeletFlags: ["--root-dir", layout.root, "--pod-manifest-path=/srv/m"],
      apiServers: [],
    },
    layout.dir,
  );
  assert.equal(ctx.flags.rootDir, layout.root);
  assert.equal(ctx.flags.config, layout.config);
  // flags win over the file, as in upstream precedence
  assert.equal(ctx.config.staticPodPath, "/srv/m");
  assert.equal(ctx.config.containerRuntimeEndpoint, "sim://");
});

Deno.test("planFor() reports an unusable config file as a usage error", async () => {
  await using layout = await makeLayout();
  await Deno.writeTextFile(layout.config, "kind: Pod\napiVersion: v1\n");
  await assert.rejects(
    planFor({
      permissionsFrom: layout.config,
      kubeletFlags: [],
      apiServers: [],
    }, layout.dir),
    (error: unknown) =>
      error instanceof UsageError &&
      error.message.includes(`--permissions-from "${layout.config}"`),
  );
});

Deno.test("planFor() without a config file plans the standard layout", async () => {
  const plan = await planFor(
    { kubeletFlags: [], apiServers: ["api:6443"] },
    "/",
  );
  assert.ok(plan.write.includes("/var/lib/kubelet"));
  assert.ok(plan.read.includes("/etc/kubernetes/manifests"));
  assert.ok(plan.net.includes("api:6443"));
  assert.ok(plan.net.includes("unix:/run/containerd/containerd.sock"));
  assert.ok(!plan.net.some((n) => n.endsWith(":10255")));
});

Deno.test("--device-plugin-socket reaches the plan as a granted socket in the device plugin folder", async () => {
  const { request } = parseListsArgs([
    "--device-plugin-socket=gpu.sock",
    "--device-plugin-socket",
    "nic.sock",
    "--v=2",
  ]);
  assert.deepEqual(request.devicePluginSockets, ["gpu.sock", "nic.sock"]);
  assert.deepEqual(request.kubeletFlags, ["--v=2"]);
  const plan = await planFor(request, "/");
  assert.ok(plan.net.includes("unix:/var/lib/kubelet/device-plugins/gpu.sock"));
  assert.ok(plan.net.includes("unix:/var/lib/kubelet/device-plugins/nic.sock"));
});
