import assert from "node:assert/strict";
import { planPermissions, toDenoFlags } from "./mod.ts";
import type { PermissionPlan } from "./mod.ts";

function plan(lists: Partial<PermissionPlan>): PermissionPlan {
  return {
    read: [],
    write: [],
    net: [],
    env: [],
    sys: [],
    run: [],
    grants: [],
    ...lists,
  };
}

Deno.test("toDenoFlags() renders one scoped flag per non-empty list", () => {
  assert.deepEqual(
    toDenoFlags(plan({
      read: ["/a", "/b"],
      net: ["unix:/s.sock", "0.0.0.0:10250"],
      sys: ["hostname"],
      run: [],
    })),
    [
      "--allow-read=/a,/b",
      "--allow-net=unix:/s.sock,0.0.0.0:10250",
      "--allow-sys=hostname",
    ],
  );
});

Deno.test("toDenoFlags() never emits an unscoped flag for an empty list", async () => {
  assert.deepEqual(toDenoFlags(plan({})), []);
  const flags = toDenoFlags(
    await planPermissions({ config: {}, flags: {} }, {
      readFile: () => undefined,
    }),
  );
  for (const flag of flags) {
    assert.match(flag, /^--allow-(read|write|net|env|sys)=./);
  }
});

Deno.test("toDenoFlags() escapes commas in values as double commas", () => {
  assert.deepEqual(toDenoFlags(plan({ write: ["/data/a,b", "/c"] })), [
    "--allow-write=/data/a,,b,/c",
  ]);
});
