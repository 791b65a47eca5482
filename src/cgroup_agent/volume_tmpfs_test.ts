import * as assert from "node:assert/strict";
import {
  checkTmpfsSize,
  checkTmpfsTarget,
  isTmpfsMountPoint,
  parseMountInfo,
  tmpfsMountOptions,
  tmpfsNoswapSupported,
} from "./volume_tmpfs.ts";
import { checkRequest, parseRequest } from "./validate.ts";
import { agentScope } from "./validate.ts";

const ok = {
  uid: "0b6f7c7e-5d0e-4a59-9d1e-2f0f5a0c9e11",
  plugin: "kubernetes.io~secret",
  name: "creds",
};

Deno.test("checkTmpfsTarget() allows one volume directory of the memory-backed kinds", () => {
  assert.equal(checkTmpfsTarget(ok), undefined);
  assert.equal(
    checkTmpfsTarget({ ...ok, uid: "5d41402abc4b2a76b9719d911017c592" }),
    undefined,
  );
  for (
    const plugin of [
      "kubernetes.io~projected",
      "kubernetes.io~downward-api",
      "kubernetes.io~empty-dir",
    ]
  ) {
    assert.equal(checkTmpfsTarget({ ...ok, plugin }), undefined);
  }
});

Deno.test("checkTmpfsTarget() refuses escapes and other kinds", () => {
  const bad: [string, Partial<typeof ok>][] = [
    ["uid ..", { uid: ".." }],
    ["uid with a slash", { uid: "a/../../etc" }],
    ["uid with a dot", { uid: "a.b" }],
    ["empty uid", { uid: "" }],
    ["uid with NUL", { uid: "a\0b" }],
    ["uid too long", { uid: "a".repeat(65) }],
    ["configMap", { plugin: "kubernetes.io~configmap" }],
    ["hostPath", { plugin: "kubernetes.io~host-path" }],
    ["plugin ..", { plugin: ".." }],
    ["plugin path", { plugin: "kubernetes.io~secret/../../x" }],
    ["name ..", { name: ".." }],
    ["name .", { name: "." }],
    ["name with a slash", { name: "a/b" }],
    ["name uppercase", { name: "A" }],
    ["empty name", { name: "" }],
    ["name too long", { name: "a".repeat(64) }],
  ];
  for (const [what, change] of bad) {
    assert.notEqual(checkTmpfsTarget({ ...ok, ...change }), undefined, what);
  }
  assert.notEqual(
    checkTmpfsTarget({ ...ok, uid: 7 } as unknown as typeof ok),
    undefined,
  );
});

Deno.test("the agent's table passes tmpfs requests through the same checks", () => {
  const scope = agentScope({ cgroupRoot: "/" }, "v2");
  const mount = parseRequest(
    JSON.stringify({ op: "mountVolumeTmpfs", target: ok, sizeBytes: 1 << 20 }),
  );
  assert.ok(!("error" in mount));
  assert.equal(checkRequest(scope, mount), undefined);
  for (
    const req of [
      { op: "mountVolumeTmpfs", target: { ...ok, name: "../x" }, sizeBytes: 1 },
      { op: "mountVolumeTmpfs", target: ok, sizeBytes: -1 },
      { op: "mountVolumeTmpfs", target: ok, sizeBytes: 1.5 },
      {
        op: "unmountVolumeTmpfs",
        target: { ...ok, plugin: "kubernetes.io~host-path" },
      },
    ]
  ) {
    const parsed = parseRequest(JSON.stringify(req));
    assert.ok(!("error" in parsed));
    assert.match(checkRequest(scope, parsed) ?? "", /refuses/);
  }
  // a path instead of parts, or options of the caller's own, are not part of the protocol
  assert.ok(
    "error" in
      parseRequest(
        JSON.stringify({ op: "mountVolumeTmpfs", path: "/etc", sizeBytes: 1 }),
      ),
  );
  assert.ok(
    "error" in
      parseRequest(
        JSON.stringify({ op: "unmountVolumeTmpfs", target: "/etc" }),
      ),
  );
});

Deno.test("tmpfs options are upstream's: size and noswap only", () => {
  assert.equal(tmpfsMountOptions(1048576, true), "size=1048576,noswap");
  assert.equal(tmpfsMountOptions(0, false), "");
  assert.equal(checkTmpfsSize(0), undefined);
  assert.notEqual(checkTmpfsSize("1,exec"), undefined);
  assert.equal(tmpfsNoswapSupported("6.4.0", false), true);
  assert.equal(tmpfsNoswapSupported("6.18.44-fc", false), true);
  assert.equal(tmpfsNoswapSupported("7.0", false), true);
  assert.equal(tmpfsNoswapSupported("6.3.9", false), false);
  assert.equal(tmpfsNoswapSupported("5.15.0", false), false);
  assert.equal(tmpfsNoswapSupported("6.8.0", true), false);
});

Deno.test("parseMountInfo() reads mount points (escaped) and types", () => {
  const text = [
    "36 25 0:32 / /var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/s rw,relatime - tmpfs tmpfs rw,size=1024k",
    "37 25 0:33 / /a\\040b rw - ext4 /dev/vda rw",
    "38 36 0:34 / /over rw - tmpfs tmpfs rw",
    "39 36 0:35 / /over rw - overlay overlay rw",
    "garbage",
  ].join("\n");
  const entries = parseMountInfo(text);
  assert.equal(entries.length, 4);
  assert.equal(entries[1]!.mountPoint, "/a b");
  assert.ok(
    isTmpfsMountPoint(
      entries,
      "/var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/s",
    ),
  );
  assert.ok(!isTmpfsMountPoint(entries, "/a b"));
  // the top-most mount decides
  assert.ok(!isTmpfsMountPoint(entries, "/over"));
  assert.ok(!isTmpfsMountPoint(entries, "/var/lib/kubelet/pods/u"));
});
