import assert from "node:assert/strict";
import { explain } from "./known_differences.ts";

const lifecycle = (ours: string[], upstream: string[]) => ({
  pod: "default/p",
  what: "lifecycle",
  detail: `ours [${ours.join(", ")}] ≠ upstream [${upstream.join(", ")}]`,
});

Deno.test("explain: container removals may differ, any other step or order is new", () => {
  const base = ["RunPodSandbox#0", "CreateContainer app#0", "StopPodSandbox"];
  assert.ok(explain("s", lifecycle(base, [...base, "RemoveContainer app"])));
  assert.ok(
    explain(
      "s",
      lifecycle(base, [
        "RunPodSandbox#0",
        "CreateContainer app#0",
        "RemoveContainer app",
        "StopPodSandbox",
      ]),
    ),
  );
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

Deno.test("explain: in the crash loop scenario only, one side may have restarted more often", () => {
  const start = [
    "RunPodSandbox#0",
    "CreateContainer app#0",
    "StartContainer app",
  ];
  const more = [...start, "CreateContainer app#1", "StartContainer app"];
  assert.ok(
    explain(
      "crash loop backs off",
      lifecycle(more, [...start, "RemoveContainer app"]),
    ),
  );
  assert.equal(explain("other", lifecycle(more, start)), undefined);
  assert.equal(
    explain(
      "crash loop backs off",
      lifecycle([...start, "StopPodSandbox"], more),
    ),
    undefined,
  );
});
