import assert from "node:assert/strict";
import { RuntimeUnavailableError } from "../../src/runtime/mod.ts";
import { podYaml, startHarness } from "./_harness.ts";

const HTTPD = podYaml("web", {
  containers: [{ name: "httpd", command: ["httpd", "-f", "-p", "8080"] }],
});

Deno.test("standalone kubelet runs a static pod from the manifest directory", async () => {
  await using h = await startHarness({ manifests: { "web.yaml": HTTPD } });
  await h.settle();
  const [c, ...rest] = await h.containers("web");
  assert.equal(rest.length, 0);
  assert.equal(c?.state, "running");
  assert.equal(h.phase("web"), "Running");
  const sandboxes = [...h.runtime.sandboxes.values()];
  assert.equal(sandboxes.length, 1);
  assert.equal(sandboxes[0]!.state, "ready");
  assert.equal(sandboxes[0]!.metadata.uid, c!.podUid);
});

Deno.test("editing a manifest recreates the pod under a new UID; deleting it stops the pod", async () => {
  await using h = await startHarness({ manifests: { "web.yaml": HTTPD } });
  await h.settle();
  const [before] = await h.containers("web");
  await h.write(
    "web.yaml",
    podYaml("web", {
      containers: [{ name: "httpd", command: ["httpd", "-f", "-p", "9090"] }],
    }),
  );
  await h.settle();
  await h.tick(2000); // housekeeping
  const after = await h.containers("web");
  const running = after.filter((c) => c.state === "running");
  assert.equal(running.length, 1);
  assert.notEqual(running[0]!.id, before!.id);
  assert.notEqual(running[0]!.podUid, before!.podUid);
  assert.ok(after.every((c) => c.id !== before!.id || c.state === "exited"));
  await h.remove("web.yaml");
  await h.settle();
  assert.deepEqual(
    (await h.containers("web")).filter((c) => c.state === "running"),
    [],
  );
});

Deno.test("deleting a manifest stops a container that ignores SIGTERM within the grace period", async () => {
  await using h = await startHarness({
    manifests: {
      "stubborn.yaml": podYaml("stubborn", {
        grace: 5,
        containers: [{ name: "app", command: ["sleep", "3600"] }],
      }),
    },
    scenario: { containers: { app: { ignoreSigterm: true } } },
  });
  await h.settle();
  const [running] = await h.containers("stubborn");
  assert.equal(running?.state, "running");
  const deletedAt = h.clock.now();
  await h.remove("stubborn.yaml");
  await h.kubelet.refreshSources();
  const stillRunningAt: number[] = [];
  for (let s = 0; s < 8; s++) {
    const c = (await h.containers("stubborn")).find((x) =>
      x.id === running!.id
    );
    if (c?.state === "running") stillRunningAt.push(h.clock.now() - deletedAt);
    await h.tick(1000);
  }
  await h.kubelet.whenIdle();
  // It ignored SIGTERM, so it ran for most of the grace period, and was gone by its end.
  assert.ok(stillRunningAt.includes(4000), `running at ${stillRunningAt}`);
  assert.ok(Math.max(...stillRunningAt) < 5000, `running at ${stillRunningAt}`);
  const after = (await h.containers("stubborn")).find((x) =>
    x.id === running!.id
  );
  assert.ok(!after || after.finishedAt - deletedAt <= 5000);
  // Finished, and already forgotten by housekeeping.
  assert.equal(h.kubelet.workers.phaseOf(running!.podUid), undefined);
});

Deno.test("a crash-looping container is restarted with growing back-off delays", async () => {
  await using h = await startHarness({
    manifests: {
      "crash.yaml": podYaml("crash", {
        containers: [{ name: "crasher", command: ["sh", "-c", "exit 1"] }],
      }),
    },
  });
  await h.settle();
  const starts = new Map<string, number>();
  for (let s = 0; s < 80; s++) {
    for (const c of await h.containers("crash")) starts.set(c.id, c.startedAt);
    await h.tick(1000);
  }
  const times = [...starts.values()].sort((a, b) => a - b);
  assert.ok(times.length >= 4, `only ${times.length} starts`);
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  // As upstream: the first restart is immediate, then 10 s, 20 s, 40 s… after each exit.
  assert.ok(gaps[1]! > gaps[0]!, `gaps ${gaps.join(",")}`);
  assert.ok(gaps[2]! > gaps[1]!, `gaps ${gaps.join(",")}`);
  assert.ok(gaps[1]! >= 10_000, `second restart after ${gaps[1]} ms`);
  assert.ok(gaps[2]! >= 20_000, `third restart after ${gaps[2]} ms`);
});

Deno.test("restartPolicy Never and OnFailure pods run to completion without restarts", async () => {
  await using h = await startHarness({
    manifests: {
      "never.yaml": podYaml("never", {
        restartPolicy: "Never",
        containers: [{ name: "job", command: ["sh", "-c", "exit 3"] }],
      }),
      "onfail.yaml": podYaml("onfail", {
        restartPolicy: "OnFailure",
        containers: [{ name: "job", command: ["sh", "-c", "exit 0"] }],
      }),
      "retry.yaml": podYaml("retry", {
        restartPolicy: "OnFailure",
        containers: [{ name: "job", command: ["sh", "-c", "exit 1"] }],
      }),
    },
  });
  await h.settle();
  await h.tick(15_000);
  assert.equal(h.phase("never"), "Failed");
  assert.equal(h.phase("onfail"), "Succeeded");
  assert.equal(
    h.kubelet.workers.phaseOf((await h.containers("retry"))[0]!.podUid),
    "syncing",
  );
  assert.ok((await h.containers("retry")).length >= 1);
  const seenNever = new Set((await h.containers("never")).map((c) => c.id));
  await h.tick(30_000);
  // Completed pods are cleaned up, never restarted; the OnFailure failure is retried.
  for (const c of await h.containers("never")) assert.ok(seenNever.has(c.id));
  const retried = new Set<string>();
  for (let s = 0; s < 30; s++) {
    for (const c of await h.containers("retry")) retried.add(c.id);
    await h.tick(1000);
  }
  assert.ok(retried.size >= 2, `retry pod ran ${retried.size} times`);
});

Deno.test("init containers run one after another before the main container", async () => {
  await using h = await startHarness({
    manifests: {
      "init.yaml": podYaml("init", {
        initContainers: [{ name: "first", command: ["sh", "-c", "sleep 2"] }, {
          name: "second",
          command: ["sh", "-c", "sleep 1"],
        }],
        containers: [{ name: "app", command: ["sleep", "3600"] }],
      }),
    },
  });
  await h.settle();
  await h.tick(6000);
  const byName = new Map((await h.containers("init")).map((c) => [c.name, c]));
  const first = byName.get("first"),
    second = byName.get("second"),
    app = byName.get("app");
  assert.ok(first && second && app, `containers: ${[...byName.keys()]}`);
  assert.equal(app.state, "running");
  assert.ok(second.startedAt >= first.finishedAt);
  assert.ok(app.startedAt >= second.finishedAt);
  assert.equal(first.exitCode, 0);
});

Deno.test("a restarted kubelet adopts running containers and restarts none of them", async () => {
  await using h = await startHarness({
    manifests: {
      "web.yaml": HTTPD,
      "other.yaml": podYaml("other", {
        containers: [{ name: "app", command: ["sleep", "3600"] }],
      }),
    },
  });
  await h.settle();
  const ids = (await h.containers("web")).map((c) => c.id);
  const creates = h.runtime.calls.filter((m) => m === "createContainer").length;
  // While the kubelet is down, one manifest goes away.
  await h.kubelet.stop();
  await h.remove("other.yaml");
  await h.restartKubelet();
  await h.tick(3000);
  assert.deepEqual((await h.containers("web")).map((c) => c.id), ids);
  assert.equal((await h.containers("web"))[0]!.state, "running");
  assert.equal(
    h.runtime.calls.filter((m) => m === "createContainer").length,
    creates,
  );
  // The orphan is stopped only now that the file source has reported.
  assert.deepEqual(
    (await h.containers("other")).filter((c) => c.state === "running"),
    [],
  );
});

Deno.test("pods are recovered after the runtime was unavailable", async () => {
  await using h = await startHarness({ manifests: { "web.yaml": HTTPD } });
  for (let i = 0; i < 3; i++) {
    h.runtime.injectError(
      "runPodSandbox",
      new RuntimeUnavailableError("connection refused"),
    );
  }
  await h.settle();
  assert.deepEqual(await h.containers("web"), []);
  await h.tick(60_000);
  const [c] = await h.containers("web");
  assert.equal(c?.state, "running");
});

Deno.test("pods from the manifest URL run beside file pods; cleanup waits for both sources", async () => {
  let body = podYaml("remote", {
    containers: [{ name: "app", command: ["sleep", "3600"] }],
  });
  let up = false;
  const fakeFetch: typeof fetch = () =>
    up
      ? Promise.resolve(new Response(body))
      : Promise.reject(new TypeError("connection refused"));
  await using h = await startHarness({
    manifests: { "web.yaml": HTTPD },
    http: { url: "http://manifests.test/node1", fetch: fakeFetch },
  });
  await h.settle();
  assert.equal(h.kubelet.podConfig.allSourcesReady(), false);
  assert.equal((await h.containers("web"))[0]?.state, "running");
  up = true;
  await h.settle();
  assert.equal(h.kubelet.podConfig.allSourcesReady(), true);
  const [remote] = await h.containers("remote");
  assert.equal(remote?.state, "running");
  body = "";
  await h.settle();
  await h.tick(3000);
  assert.deepEqual(
    (await h.containers("remote")).filter((c) => c.state === "running"),
    [],
  );
});

Deno.test("an invalid manifest is logged with its file and field while the other pods keep running", async () => {
  await using h = await startHarness({ manifests: { "web.yaml": HTTPD } });
  await h.settle();
  const [before] = await h.containers("web");
  await h.write(
    "broken.yaml",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec:\n  containers:\n  - name: app\n",
  );
  await h.settle();
  await h.tick(3000);
  const [after, ...rest] = await h.containers("web");
  assert.equal(rest.length, 0);
  assert.equal(after?.id, before?.id);
  assert.equal(after?.state, "running");
  assert.deepEqual(await h.containers("broken"), []);
  const error = h.logger.records.find((r) =>
    r.severity === "error" && r.msg.includes("broken.yaml")
  );
  assert.match(
    error?.msg ?? "",
    /spec\.containers\[0\]\.image: Required value/,
  );
});

Deno.test("pods are recreated after the runtime restarted and lost its containers", async () => {
  await using h = await startHarness({ manifests: { "web.yaml": HTTPD } });
  await h.settle();
  await h.tick(2000); // the PLEG has seen the running pod
  const [before] = await h.containers("web");
  // The runtime goes away for a few calls and comes back empty, as after a node reboot.
  for (let i = 0; i < 3; i++) {
    h.runtime.injectError(
      "listPodSandbox",
      new RuntimeUnavailableError("connection refused"),
    );
    h.runtime.injectError(
      "listContainers",
      new RuntimeUnavailableError("connection refused"),
    );
  }
  h.runtime.containers.clear();
  h.runtime.sandboxes.clear();
  await h.tick(20_000);
  await h.kubelet.whenIdle();
  const [after, ...rest] = await h.containers("web");
  assert.equal(rest.length, 0);
  assert.equal(after?.state, "running");
  assert.notEqual(after?.id, before?.id);
  assert.equal(after?.podUid, before?.podUid);
  assert.deepEqual(h.kubelet.pleg.healthy(), { ok: true });
});

Deno.test("a manifest removed and written again at once stops the pod and starts it again (same UID)", async () => {
  await using h = await startHarness({ manifests: { "web.yaml": HTTPD } });
  await h.settle();
  const [before] = await h.containers("web");
  assert.equal(before?.state, "running");
  // what the file source reports for the removal event, then for the next listing
  const pods = h.kubelet.podConfig.pods();
  h.kubelet.podConfig.set("file", []);
  h.kubelet.podConfig.set("file", pods);
  await h.settle();
  await h.tick(4000); // the stop, then housekeeping starts the UID afresh
  await h.settle();
  const after = await h.containers("web");
  const running = after.filter((c) => c.state === "running");
  assert.equal(running.length, 1);
  assert.notEqual(running[0]!.id, before!.id);
  assert.equal(running[0]!.podUid, before!.podUid);
  assert.equal(after.find((c) => c.id === before!.id)?.state, "exited");
  assert.equal(h.phase("web"), "Running");
});
