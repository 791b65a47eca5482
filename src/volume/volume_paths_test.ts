import assert from "node:assert/strict";
import {
  DEFAULT_MEMORY_VOLUME_DIR,
  memoryVolumeDirFor,
} from "./volume_paths.ts";

Deno.test("memoryVolumeDirFor(): the default root dir keeps the default directory; any other root gets its own, stable one", () => {
  assert.equal(
    memoryVolumeDirFor("/var/lib/kubelet"),
    DEFAULT_MEMORY_VOLUME_DIR,
  );
  assert.equal(
    memoryVolumeDirFor("/var/lib/kubelet/"),
    DEFAULT_MEMORY_VOLUME_DIR,
  );
  const a = memoryVolumeDirFor("/tmp/node-a/root");
  const b = memoryVolumeDirFor("/tmp/node-b/root");
  assert.match(a, /^\/run\/kubelet\.ts\/memory\/root-[0-9a-f]{16}$/);
  assert.notEqual(a, b);
  assert.equal(memoryVolumeDirFor("/tmp/node-a/root/"), a);
  assert.equal(memoryVolumeDirFor("/tmp/node-a/root"), a);
});
