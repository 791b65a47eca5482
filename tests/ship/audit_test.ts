import assert from "node:assert/strict";
import { join } from "node:path";
import {
  allowedByPlan,
  type AuditRecord,
  bundleInto,
  CHILD_ENV,
  CLI_READY,
  KUBELET_READY,
  makeLayout,
  readAudit,
  type TestLayout,
} from "./_helpers.ts";
import type { PermissionPlan } from "../../src/permissions/mod.ts";

const decoder = new TextDecoder();

function outside(plan: PermissionPlan, records: AuditRecord[]): string[] {
  return [
    ...new Set(
      records
        .filter((r) => !allowedByPlan(plan, r))
        .map((r) => `${r.permission}:${r.value}`),
    ),
  ];
}

function kubelet(layout: TestLayout, bundle: string, args: string[]) {
  const audit = join(layout.dir, "audit.jsonl");
  const command = new Deno.Command(Deno.execPath(), {
    args: ["run", ...layout.denoFlags, bundle, ...layout.kubeletArgs, ...args],
    cwd: layout.dir,
    env: { ...CHILD_ENV, DENO_AUDIT_PERMISSIONS: audit },
    stdout: "piped",
    stderr: "piped",
  });
  return { audit, command };
}

Deno.test("allowedByPlan() matches paths by prefix and the rest exactly", () => {
  const plan: PermissionPlan = {
    read: ["/a/b"],
    write: [],
    net: ["127.0.0.1:1", "unix:/s"],
    env: ["X"],
    sys: ["hostname"],
    run: [],
    grants: [],
  };
  assert.ok(allowedByPlan(plan, { permission: "read", value: "/a/b/c" }));
  assert.ok(!allowedByPlan(plan, { permission: "read", value: "/a/bc" }));
  assert.ok(!allowedByPlan(plan, { permission: "write", value: "/a/b" }));
  assert.ok(allowedByPlan(plan, { permission: "net", value: "unix:/s" }));
  assert.ok(!allowedByPlan(plan, { permission: "net", value: "unix:/s2" }));
  assert.ok(!allowedByPlan(plan, { permission: "net", value: "127.0.0.1:2" }));
  assert.ok(!allowedByPlan(plan, { permission: "run", value: "/bin/sh" }));
  assert.ok(!allowedByPlan(plan, { permission: "env", value: "Y" }));
});

Deno.test({
  name: "audit: --dry-run touches only what the compile lists grant",
  ignore: !CLI_READY,
  async fn() {
    await using layout = await makeLayout();
    const bundle = await bundleInto(layout.dir);
    const { audit, command } = kubelet(layout, bundle, ["--dry-run"]);
    const result = await command.output();
    const text = decoder.decode(result.stdout) + decoder.decode(result.stderr);
    assert.equal(result.code, 0, text);
    const records = readAudit(audit);
    assert.ok(records.length > 0, "the audit log recorded nothing");
    assert.ok(
      records.some((r) => r.permission === "read" && r.value === layout.config),
      "the config file read was not audited",
    );
    assert.deepEqual(outside(layout.plan, records), []);
  },
});

/** Reads a stream to the end, calling `onText` with everything so far. */
async function drain(
  stream: ReadableStream<Uint8Array>,
  onText: (all: string) => void,
): Promise<string> {
  let all = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    all += chunk;
    onText(all);
  }
  return all;
}

const RUNNING_REGEXP =
  /ship-web[^\n]*(running|started)|(running|started)[^\n]*ship-web/i;

Deno.test({
  name:
    "audit: a static pod on the sim:// runtime touches only what the compile lists grant",
  ignore: !KUBELET_READY,
  async fn() {
    await using layout = await makeLayout();
    const bundle = await bundleInto(layout.dir);
    const { audit, command } = kubelet(layout, bundle, []);
    const child = command.spawn();
    const texts = { out: "", err: "" };
    const { promise: running, resolve } = Promise.withResolvers<boolean>();
    const check = () => {
      if (RUNNING_REGEXP.test(`${texts.out}\n${texts.err}`)) resolve(true);
    };
    const out = drain(child.stdout, (all) => {
      texts.out = all;
      check();
    });
    const err = drain(child.stderr, (all) => {
      texts.err = all;
      check();
    });
    // Give the kubelet up to 20s to report the pod running (it normally
    // takes well under a second); the assertions below do not depend on it.
    const timer = setTimeout(() => resolve(false), 20_000);
    const sawRunning = await running;
    clearTimeout(timer);
    try {
      child.kill("SIGTERM");
    } catch {
      // it already exited; the status and output below say why
    }
    const status = await child.status;
    const text = (await out) + (await err);
    assert.ok(sawRunning, `no "ship-web running" line in the output:\n${text}`);
    assert.ok(
      status.code === 0 || status.signal === "SIGTERM" || status.code === 143,
      `kubelet exited with ${JSON.stringify(status)}:\n${text}`,
    );
    assert.doesNotMatch(text, /NotCapable|Requires \w+ access/);
    const records = readAudit(audit);
    assert.ok(
      records.some((r) =>
        r.permission === "read" && r.value?.startsWith(layout.manifests)
      ),
      "the static pod directory was never read",
    );
    assert.deepEqual(outside(layout.plan, records), []);
  },
});
