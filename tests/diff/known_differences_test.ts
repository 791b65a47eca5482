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

Deno.test("explain: config differences are all fixed, none is kept", () => {
  const config = (what: string, detail: string) => ({
    pod: "default/p",
    what,
    detail,
  });
  for (
    const d of [
      config(
        "sandbox",
        'linux.cgroupParent: (absent) ≠ "<kubepods>/besteffort/pod<uid>"',
      ),
      config("sandbox", 'dnsConfig: (absent) ≠ {"servers":["10.0.0.53"]}'),
      config("container app", 'linux.resources.oomScoreAdj: (absent) ≠ "1000"'),
      config(
        "container app",
        'annotations.io.kubernetes.container.type: "init" ≠ (absent)',
      ),
      config("container app", "linux.securityContext.runAsUser: (absent) ≠ {}"),
    ]
  ) {
    assert.equal(explain("s", d), undefined, d.detail);
  }
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

Deno.test("explain() keeps a subPath host path inside the volume, nothing else", () => {
  const mounts = (sub: string, host = "/tmp/h") =>
    JSON.stringify([
      {
        containerPath: "/s",
        hostPath: "<root>/pods/<uid>/volumes/kubernetes.io~empty-dir/v",
      },
      { containerPath: "/h", hostPath: host },
      { containerPath: "/sub", hostPath: sub },
    ]);
  const ours = mounts(
    "<root>/pods/<uid>/volumes/kubernetes.io~empty-dir/v/a/b",
  );
  const upstream = mounts("<root>/pods/<uid>/volume-subpaths/v/app/2");
  const d = (detail: string) => ({
    pod: "default/volumes-n",
    what: "container app",
    detail,
  });
  assert.ok(explain("volumes: x", d(`mounts: ${ours} ≠ ${upstream}`)));
  assert.equal(
    explain(
      "volumes: x",
      d(`mounts: ${
        mounts("<root>/pods/<uid>/volumes/kubernetes.io~empty-dir/v/a", "/etc")
      } ≠ ${upstream}`),
    ),
    undefined,
  );
});

Deno.test("explain: API mode keeps the env order, nothing else", () => {
  const env = (keys: string[]) =>
    JSON.stringify(keys.map((key) => ({ key, value: key.toLowerCase() })));
  const envs = (a: string[], b: string[]) => ({
    pod: "<node>/web",
    what: "container app",
    detail: `envs: ${env(a)} ≠ ${env(b)}`,
  });
  assert.ok(explain("s", envs(["A", "B"], ["B", "A"])));
  assert.equal(explain("s", envs(["A", "B"], ["B", "C"])), undefined);
  const api = (detail: string) => ({ pod: "x", what: "api", detail });
  // the status fields kubelet.ts once lacked are written now: any difference is new
  const status = (extra: Record<string, unknown>) =>
    JSON.stringify([{ name: "app", ready: true, ...extra }]);
  assert.equal(
    explain(
      "s",
      api(`containerStatuses: ${status({})} ≠ ${status({ volumeMounts: [] })}`),
    ),
    undefined,
  );
  assert.equal(
    explain("API pod", api("observedGeneration: (absent) ≠ 1")),
    undefined,
  );
});
