import assert from "node:assert/strict";
import { parseSimScenario } from "./scenario.ts";
import {
  createSimRuntimeForEndpoint,
  isSimEndpoint,
  loadSimScenario,
} from "./endpoint.ts";
import { normalizeImageRef } from "./_images.ts";
import { interpretCommand } from "./_shell.ts";

Deno.test("parseSimScenario() accepts a full scenario and names the bad field otherwise", () => {
  const ok = parseSimScenario({
    containers: { app: { exitAfterMs: 10, exitCode: 1 } },
    images: { nginx: { pullFailures: -1 } },
  });
  assert.equal(ok.containers?.["app"]?.exitCode, 1);
  assert.throws(
    () => parseSimScenario({ containers: { app: { exitAfterMs: -5 } } }),
    (e) =>
      e instanceof TypeError &&
      /field "containers\.app\.exitAfterMs"/.test(e.message),
  );
  assert.throws(
    () => parseSimScenario({ contaners: {} }),
    (e) =>
      e instanceof TypeError &&
      /Invalid simulated runtime scenario/.test(e.message),
  );
});

Deno.test("isSimEndpoint() selects only sim:// endpoints", () => {
  assert.equal(isSimEndpoint("sim://default"), true);
  assert.equal(isSimEndpoint("SIM://default"), true);
  assert.equal(isSimEndpoint("unix:///run/containerd/containerd.sock"), false);
});

Deno.test("loadSimScenario() reads default and file endpoints, rejecting others clearly", async () => {
  assert.deepEqual(await loadSimScenario("sim://default"), {});
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    await Deno.writeTextFile(
      file,
      "containers:\n  app:\n    exitAfterMs: 100\n",
    );
    const scenario = await loadSimScenario(`sim://${file}`);
    assert.equal(scenario.containers?.["app"]?.exitAfterMs, 100);
    await using runtime = await createSimRuntimeForEndpoint(`sim://${file}`);
    assert.equal((await runtime.version({})).runtimeName, "kubelet.ts-sim");
  } finally {
    await Deno.remove(file);
  }
  await assert.rejects(loadSimScenario("sim://other"), /use "sim:\/\/default"/);
  await assert.rejects(
    loadSimScenario("sim:///no/such/file.yaml"),
    /Cannot read/,
  );
});

Deno.test("normalizeImageRef() adds domain, library path and tag like containerd", () => {
  assert.equal(
    normalizeImageRef("busybox"),
    "docker.io/library/busybox:latest",
  );
  assert.equal(normalizeImageRef("user/app:1"), "docker.io/user/app:1");
  assert.equal(
    normalizeImageRef("127.0.0.1:5000/kts/busybox"),
    "127.0.0.1:5000/kts/busybox:latest",
  );
  assert.equal(normalizeImageRef("localhost/x:2"), "localhost/x:2");
});

Deno.test("interpretCommand() models sh -c output, exit codes and sleeps", () => {
  assert.deepEqual(
    interpretCommand(["sh", "-c", "echo a; echo b >&2; exit 4"]),
    {
      stdout: "a\n",
      stderr: "b\n",
      exitCode: 4,
      durationMs: 0,
    },
  );
  assert.equal(interpretCommand(["sleep", "2"])?.durationMs, 2000);
  assert.equal(interpretCommand(["sleep", "inf"])?.durationMs, Infinity);
  assert.equal(interpretCommand(["false"])?.exitCode, 1);
  assert.equal(interpretCommand(["/opt/app"]), undefined);
  assert.equal(interpretCommand(["sh", "-c", "nope"])?.exitCode, 127);
});
