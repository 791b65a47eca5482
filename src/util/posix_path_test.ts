import assert from "node:assert/strict";
import { abs, clean, dir, isAbs, join } from "./posix_path.ts";

// Expected values follow Go's documented path/filepath rules on Unix (and
// were confirmed with go1.26: filepath.Clean, Dir, Join, Abs).

function table(fn: (path: string) => string, cases: [string, string][]) {
  for (const [input, want] of cases) assert.equal(fn(input), want, input);
}

Deno.test("clean() follows filepath.Clean", () => {
  table(clean, [
    ["", "."],
    [".", "."],
    ["/", "/"],
    ["//", "/"],
    ["a/b/", "a/b"],
    ["manifests/", "manifests"],
    ["./a", "a"],
    ["a/../..", ".."],
    ["/../a", "/a"],
    ["a//b", "a/b"],
    ["/a/b/../../..", "/"],
    ["../a/./b/", "../a/b"],
    ["a/b/../c/.", "a/c"],
    ["/var/log/pods/", "/var/log/pods"],
  ]);
});

Deno.test("dir() follows filepath.Dir", () => {
  table(dir, [
    ["", "."],
    [".", "."],
    ["/", "/"],
    ["//", "/"],
    ["a/b/", "a/b"],
    ["./a", "."],
    ["a//b", "a"],
    ["/../a", "/"],
    ["/etc/kubernetes/kubelet.conf", "/etc/kubernetes"],
    ["a/b/../c/.", "a/c"],
  ]);
});

Deno.test("join() follows filepath.Join", () => {
  const cases: Array<[string[], string]> = [
    [["/etc/kubernetes", "manifests/"], "/etc/kubernetes/manifests"],
    [["", ""], ""],
    [[], ""],
    [["a", ""], "a"],
    [["", "/b"], "/b"],
    [["/etc", "../x/"], "/x"],
    [["a/", "/b/"], "a/b"],
  ];
  for (const [parts, want] of cases) {
    assert.equal(join(...parts), want, JSON.stringify(parts));
  }
});

Deno.test("abs() and isAbs() follow filepath.Abs and IsAbs", () => {
  assert.equal(
    abs("manifests/", "/etc/kubernetes"),
    "/etc/kubernetes/manifests",
  );
  assert.equal(abs("/a/./b/", "/cwd"), "/a/b");
  assert.equal(abs("", "/cwd/"), "/cwd");
  assert.equal(isAbs("/a"), true);
  assert.equal(isAbs("a/b"), false);
  assert.equal(isAbs(""), false);
});
