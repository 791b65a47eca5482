/**
 * The node e2e harness's stand-in for systemd's Restart=always on containerd
 * (tests/conformance/runtime_supervisor.ts).
 */
import assert from "node:assert/strict";
import { runtimeGone, superviseRuntime } from "./runtime_supervisor.ts";

const CONFIG = "/tmp/kts-cri-h8/containerd.toml";

Deno.test("runtimeGone() tells a running runtime from a killed, unreaped or missing one", () => {
  const running = `/usr/bin/containerd\0--config\0${CONFIG}\0`;
  assert.equal(runtimeGone("4242", running, CONFIG), false);
  assert.equal(runtimeGone("4242\n", running, CONFIG), false);
  // no pid file, garbage in it, no process, a zombie (empty command line)
  assert.equal(runtimeGone(null, running, CONFIG), true);
  assert.equal(runtimeGone("", running, CONFIG), true);
  assert.equal(runtimeGone("42x", running, CONFIG), true);
  assert.equal(runtimeGone("4242", null, CONFIG), true);
  assert.equal(runtimeGone("4242", "", CONFIG), true);
  // the pid was reused by another process, or another instance's containerd
  assert.equal(runtimeGone("4242", "/bin/sleep\x0030\0", CONFIG), true);
  assert.equal(
    runtimeGone(
      "4242",
      "/usr/bin/containerd\0--config\0/tmp/kts-cri-h8u/containerd.toml\0",
      CONFIG,
    ),
    true,
  );
});

Deno.test("superviseRuntime() starts the runtime again after it is killed, and only then", async () => {
  const dir = await Deno.makeTempDir();
  const pidFile = `${dir}/runtime.pid`;
  const config = `${dir}/fake.toml`;
  // A stand-in runtime: a long-lived process whose command line names the configuration file.
  Deno.writeTextFileSync(config, "");
  // The pid file is written once the child runs the stand-in, as the runtime's own is: right
  // after spawn() the child may still show the parent's command line.
  const start = async () => {
    const p = new Deno.Command("tail", {
      args: ["-f", config],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const deadline = Date.now() + 5000;
    while (
      !Deno.readTextFileSync(`/proc/${p.pid}/cmdline`).includes(config) &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    Deno.writeTextFileSync(pidFile, String(p.pid));
    return p;
  };
  const first = await start();
  const procs = [first];
  const sup = superviseRuntime({
    pidFile,
    configPath: config,
    intervalMs: 50,
    log: () => {},
    restart: async () => {
      procs.push(await start());
    },
  });
  try {
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(sup.restarts(), 0, "a running runtime is left alone");
    first.kill("SIGKILL");
    await first.status;
    const deadline = Date.now() + 5000;
    while (sup.restarts() === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(sup.restarts(), 1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(sup.restarts(), 1, "the new runtime is left alone");
  } finally {
    await sup.stop();
    for (const p of procs) {
      try {
        p.kill("SIGKILL");
      } catch { /* already gone */ }
      await p.status;
    }
    await Deno.remove(dir, { recursive: true });
  }
});
