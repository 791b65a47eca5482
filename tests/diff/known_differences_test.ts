import assert from "node:assert/strict";
import { explain } from "./known_differences.ts";

const lifecycle = (ours: string[], upstream: string[]) => ({
  pod: "default/p",
  what: "lifecycle",
  detail: `ours [${ours.join(", ")}] ≠ upstream [${upstream.join(", ")}]`,
});

Deno.test("explain: upstream's removals after the pod stopped are kept, any other order is new", () => {
  const base = ["RunPodSandbox#0", "CreateContainer app#0", "StopPodSandbox"];
  assert.ok(explain("s", lifecycle(base, [...base, "RemoveContainer app"])));
  assert.equal(
    explain(
      "s",
      lifecycle(base, [
        "RunPodSandbox#0",
        "StopPodSandbox",
        "RemoveContainer app",
      ]),
    ),
    undefined,
  );
  assert.equal(
    explain(
      "s",
      lifecycle([...base, "CreateContainer app#1"], [
        ...base,
        "RemoveContainer app",
      ]),
    ),
    undefined,
  );
});

Deno.test("explain: a mounts difference is kept only when /etc/hosts is all that differs", () => {
  const term = { containerPath: "/dev/termination-log", hostPath: "<root>/t" };
  const hosts = { containerPath: "/etc/hosts", hostPath: "<root>/h" };
  const mounts = (a: unknown[], b: unknown[]) => ({
    pod: "default/p",
    what: "container app",
    detail: `mounts: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`,
  });
  assert.ok(explain("s", mounts([term], [hosts, term])));
  assert.equal(explain("s", mounts([], [hosts, term])), undefined);
});
