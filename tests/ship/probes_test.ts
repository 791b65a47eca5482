import assert from "node:assert/strict";
import { join } from "node:path";
import { CHILD_ENV, makeLayout, ROOT } from "./_helpers.ts";

Deno.test("compile lists: negative probes all fail with NotCapable", async () => {
  await using layout = await makeLayout();
  // A live socket inside the granted (read+write) root dir: only the missing
  // `unix:` net grant may stop the connection.
  const otherSocket = join(layout.root, "other.sock");
  using listener = Deno.listen({ transport: "unix", path: otherSocket });
  const probe = join(ROOT, "tests/ship/testdata/probe.ts");
  const result = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-config",
      ...layout.denoFlags,
      probe,
      layout.config,
      otherSocket,
    ],
    cwd: layout.dir,
    env: CHILD_ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(result.stderr);
  assert.equal(result.code, 0, stderr);
  const results = JSON.parse(new TextDecoder().decode(result.stdout)) as Record<
    string,
    string
  >;
  const { controlReadGrantedFile, ...probes } = results;
  assert.equal(controlReadGrantedFile, "ok");
  assert.equal(Object.keys(probes).length, 9);
  for (const [name, outcome] of Object.entries(probes)) {
    assert.equal(outcome, "NotCapable", `${name} should be NotCapable`);
  }
  assert.equal(listener.addr.transport, "unix");
});

Deno.test("compile lists: never contain all/run/ffi or an unscoped flag", async () => {
  await using layout = await makeLayout();
  for (const flag of layout.denoFlags) {
    assert.doesNotMatch(flag, /allow-(all|run|ffi|import)|^-A$/);
    if (flag !== "--no-prompt") assert.match(flag, /^--allow-\w+=./);
  }
  assert.ok(layout.plan.write.includes(layout.root));
  assert.ok(layout.plan.read.includes(layout.manifests));
});
