import assert from "node:assert/strict";
import {
  kubeletIdRange,
  type KubeletIdRangeHost,
  parseGetSubIdsOutput,
  passwdHasUser,
} from "./kubelet_id_range.ts";
import { DEFAULT_KUBELET_ID_RANGE } from "./id_slots.ts";

const PASSWD = "root:x:0:0:root:/root:/bin/bash\n" +
  "kubelet:x:998:998::/nonexistent:/usr/sbin/nologin\n";

/** A host with the kubelet user, getsubids in /usr/bin, and the given answers. */
function host(over: Partial<KubeletIdRangeHost> & {
  answers?: Record<string, { code: number; stdout: string }>;
} = {}): KubeletIdRangeHost & { calls: string[] } {
  const calls: string[] = [];
  const answer = { code: 0, stdout: "0: kubelet 2147483648 7208960\n" };
  return {
    calls,
    readPasswd: () => Promise.resolve(PASSWD),
    searchPath: () => "/usr/local/bin:/usr/bin:/bin",
    isExecutable: (p) => Promise.resolve(p === "/usr/bin/getsubids"),
    mayRun: () => true,
    run: (path, args) => {
      calls.push([path, ...args].join(" "));
      return Promise.resolve(over.answers?.[args.join(" ")] ?? answer);
    },
    ...over,
  };
}

Deno.test("parseGetSubIdsOutput() reads one range and refuses anything else with upstream's texts", () => {
  assert.deepEqual(parseGetSubIdsOutput("0: kubelet 65536 2147483648\n"), {
    first: 65536,
    length: 2147483648,
  });
  assert.deepEqual(parseGetSubIdsOutput("\n0: kubelet  131072\t65536\n\n"), {
    first: 131072,
    length: 65536,
  });
  assert.throws(
    () => parseGetSubIdsOutput("0: kubelet 65536 65536\n1: kubelet 0 1\n"),
    /^Error: error parsing line "0: kubelet 65536 65536\\n1: kubelet 0 1\\n": it must contain only one line$/,
  );
  assert.throws(
    () => parseGetSubIdsOutput(""),
    /^Error: invalid line ""$/,
  );
  assert.throws(
    () => parseGetSubIdsOutput("0: kubelet 65536\n"),
    /^Error: invalid line/,
  );
  assert.throws(
    () => parseGetSubIdsOutput("0: kubelet x 65536"),
    /parsing "x": invalid syntax/,
  );
  assert.throws(
    () => parseGetSubIdsOutput("0: kubelet 65536 4294967296"),
    /parsing "4294967296": value out of range/,
  );
  assert.deepEqual(parseGetSubIdsOutput("0: kubelet 65536 4294967295"), {
    first: 65536,
    length: 4294967295,
  });
});

Deno.test("passwdHasUser() matches the whole name field only", () => {
  assert.equal(passwdHasUser(PASSWD, "kubelet"), true);
  assert.equal(passwdHasUser(PASSWD, "kube"), false);
  assert.equal(passwdHasUser("kubelets:x:1:1::/:/bin/sh\n", "kubelet"), false);
  assert.equal(passwdHasUser("#kubelet\n", "kubelet"), false);
});

Deno.test("kubeletIdRange() takes the kubelet user's subordinate IDs from getsubids", async () => {
  const h = host();
  assert.deepEqual(await kubeletIdRange(h, true), {
    range: { first: 2147483648, length: 7208960 },
  });
  assert.deepEqual(h.calls, [
    "/usr/bin/getsubids kubelet",
    "/usr/bin/getsubids -g kubelet",
  ]);
});

Deno.test("kubeletIdRange() keeps upstream's default without the gate, the user or the tool", async () => {
  const def = { range: DEFAULT_KUBELET_ID_RANGE };
  const off = host();
  assert.deepEqual(await kubeletIdRange(off, false), def);
  assert.deepEqual(off.calls, []);
  assert.deepEqual(
    await kubeletIdRange(
      host({ readPasswd: () => Promise.resolve("root:x:0:0::/:/bin/sh\n") }),
      true,
    ),
    def,
  );
  assert.deepEqual(
    await kubeletIdRange(
      host({ readPasswd: () => Promise.resolve(undefined) }),
      true,
    ),
    def,
  );
  assert.deepEqual(
    await kubeletIdRange(
      host({ isExecutable: () => Promise.resolve(false) }),
      true,
    ),
    def,
  );
  // a relative search path entry is never searched
  const relative = host({
    searchPath: () => ".:bin",
    isExecutable: () => Promise.resolve(true),
  });
  assert.deepEqual(await kubeletIdRange(relative, true), def);
  assert.deepEqual(relative.calls, []);
});

Deno.test("kubeletIdRange() takes the first getsubids on the search path, the default path without one", async () => {
  const both = host({
    isExecutable: (p) =>
      Promise.resolve(
        p === "/usr/local/bin/getsubids" || p === "/usr/bin/getsubids",
      ),
  });
  await kubeletIdRange(both, true);
  assert.equal(both.calls[0], "/usr/local/bin/getsubids kubelet");
  const looked: string[] = [];
  const noPath = host({
    searchPath: () => undefined,
    isExecutable: (p) => {
      looked.push(p);
      return Promise.resolve(p === "/sbin/getsubids");
    },
  });
  await kubeletIdRange(noPath, true);
  assert.deepEqual(looked, [
    "/usr/local/sbin/getsubids",
    "/usr/local/bin/getsubids",
    "/usr/sbin/getsubids",
    "/usr/bin/getsubids",
    "/sbin/getsubids",
  ]);
  assert.equal(noPath.calls[0], "/sbin/getsubids kubelet");
});

Deno.test("kubeletIdRange() warns, never silently, when the permission lists keep it from the tool", async () => {
  const noRun = await kubeletIdRange(host({ mayRun: () => false }), true);
  assert.deepEqual(noRun.range, DEFAULT_KUBELET_ID_RANGE);
  assert.match(
    noRun.warning ?? "",
    /"kubelet" user exists, but this kubelet may not run \/usr\/bin\/getsubids, .*--getsubids=\/usr\/bin\/getsubids/,
  );
  const noLook = await kubeletIdRange(
    host({ isExecutable: () => Promise.resolve("denied") }),
    true,
  );
  assert.deepEqual(noLook.range, DEFAULT_KUBELET_ID_RANGE);
  assert.match(
    noLook.warning ?? "",
    /may not look for getsubids \(\/usr\/local\/bin\/getsubids is not granted\).*--getsubids=\/usr\/bin\/getsubids/,
  );
  // a granted copy further down the path is used
  const partly = host({
    isExecutable: (p) =>
      Promise.resolve(p === "/usr/bin/getsubids" ? true : "denied"),
  });
  assert.deepEqual(await kubeletIdRange(partly, true), {
    range: { first: 2147483648, length: 7208960 },
  });
});

Deno.test("kubeletIdRange() refuses to start on a failing tool or different user and group ranges", async () => {
  await assert.rejects(
    kubeletIdRange(
      host({ answers: { "kubelet": { code: 1, stdout: "" } } }),
      true,
    ),
    /^Error: error retrieving additional uids for user "kubelet": exit status 1$/,
  );
  await assert.rejects(
    kubeletIdRange(
      host({ answers: { "-g kubelet": { code: 1, stdout: "" } } }),
      true,
    ),
    /^Error: error retrieving additional gids for user "kubelet"$/,
  );
  await assert.rejects(
    kubeletIdRange(
      host({
        answers: {
          "-g kubelet": { code: 0, stdout: "0: kubelet 65536 65536\n" },
        },
      }),
      true,
    ),
    /^Error: mismatched subuids and subgids for user "kubelet"$/,
  );
  // an existing user with no range: the remote source is taken to be down
  await assert.rejects(
    kubeletIdRange(
      host({
        answers: {},
        run: () => Promise.resolve({ code: 0, stdout: "" }),
      }),
      true,
    ),
    /^Error: invalid line ""$/,
  );
});
