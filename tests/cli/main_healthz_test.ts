/**
 * End to end through `main.ts` as a subprocess: the example configuration answers
 * `/healthz` on the configured healthz port (a free port given by `--healthz-port`, since
 * tests run in parallel and must never bind the default 10248).
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

function freePort(): number {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return (listener.addr as Deno.NetAddr).port;
}

function kill(child: Deno.ChildProcess, signal: Deno.Signal): void {
  try {
    child.kill(signal);
  } catch {
    // already exited
  }
}

interface Outcome {
  /** The `/healthz` answer, or undefined when the port was taken in between. */
  healthz?: { status: number; body: string };
  code: number;
  stderr: string;
}

async function runOnce(port: number, rootDir: string): Promise<Outcome> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "main.ts",
      "--config",
      "examples/kubelet-config.yaml",
      `--root-dir=${rootDir}`,
      `--healthz-port=${port}`,
      "--hostname-override=healthz-test-node",
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // A kubelet that never logs again must fail the test, not hang it.
  const watchdog = setTimeout(() => kill(child, "SIGKILL"), 60_000);
  const reader = child.stderr.pipeThrough(new TextDecoderStream())
    .getReader();
  let stderr = "";
  let healthz: Outcome["healthz"];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      stderr += value;
      if (stderr.includes("Failed to start healthz server")) break;
      if (stderr.includes(`"Serving healthz"`)) {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`);
        healthz = { status: r.status, body: await r.text() };
        break;
      }
    }
  } finally {
    kill(child, "SIGTERM");
  }
  // Read the rest so the child can exit and the stream is closed.
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    stderr += value;
  }
  clearTimeout(watchdog);
  const { code } = await child.status;
  return { ...(healthz ? { healthz } : {}), code, stderr };
}

Deno.test("main.ts with the example config answers /healthz on the configured port", async () => {
  const rootDir = await Deno.makeTempDir({ prefix: "kts-healthz-" });
  try {
    let outcome: Outcome | undefined;
    // A free port can be taken by a parallel test before the kubelet binds it: try again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = freePort();
      outcome = await runOnce(port, rootDir);
      if (!outcome.stderr.includes("Failed to start healthz server")) break;
    }
    assert.ok(outcome?.healthz, outcome?.stderr);
    assert.deepEqual(outcome.healthz, { status: 200, body: "ok" });
    assert.equal(outcome.code, 0, outcome.stderr);
  } finally {
    await Deno.remove(rootDir, { recursive: true });
  }
});
