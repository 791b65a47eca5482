import assert from "node:assert/strict";
import { changedPods, parseSnapshot } from "./_swap.ts";

const BEFORE = `
C 22f2ca0eb2b83 CONTAINER_EXITED ns/done once 0
S 988604e0ce868 SANDBOX_NOTREADY ns/done - 0
C 5768dd5fa2b75 CONTAINER_RUNNING ns/run main 0
S acbf6a95d3a2d SANDBOX_READY ns/run - 0
`;

Deno.test("parseSnapshot reads the swap script's lines", () => {
  const entries = parseSnapshot(BEFORE);
  assert.equal(entries.length, 4);
  assert.deepEqual(entries[0], {
    kind: "C",
    id: "22f2ca0eb2b83",
    state: "CONTAINER_EXITED",
    pod: "ns/done",
    name: "once",
    attempt: 0,
  });
  assert.throws(
    () => parseSnapshot("X 1 2 3"),
    /cannot read line "X 1 2 3"/,
  );
});

Deno.test("changedPods finds a new, a removed and a restarted container", () => {
  const before = parseSnapshot(BEFORE);
  assert.deepEqual(changedPods(before, before, ["ns/done", "ns/run"]), []);
  // the completed pod ran again; the running one's container was stopped
  const after = parseSnapshot(`
C 22f2ca0eb2b83 CONTAINER_EXITED ns/done once 0
C ee16910da2532 CONTAINER_EXITED ns/done once 0
S 988604e0ce868 SANDBOX_NOTREADY ns/done - 0
C 5768dd5fa2b75 CONTAINER_EXITED ns/run main 0
S acbf6a95d3a2d SANDBOX_READY ns/run - 0
`);
  assert.deepEqual(changedPods(before, after, ["ns/done", "ns/run"]), [
    {
      pod: "ns/done",
      gone: [],
      added: ["C ee16910da2532 CONTAINER_EXITED once"],
    },
    {
      pod: "ns/run",
      gone: ["C 5768dd5fa2b75 CONTAINER_RUNNING main"],
      added: ["C 5768dd5fa2b75 CONTAINER_EXITED main"],
    },
  ]);
  // a removed sandbox of a pod not asked about is not reported
  const removed = parseSnapshot(BEFORE).filter((e) => e.pod !== "ns/done");
  assert.deepEqual(changedPods(before, removed, ["ns/run"]), []);
  assert.equal(changedPods(before, removed, ["ns/done"]).length, 1);
});
