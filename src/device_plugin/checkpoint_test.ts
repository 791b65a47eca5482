import assert from "node:assert/strict";
import {
  decodeDeviceCheckpoint,
  encodeDeviceCheckpoint,
} from "./checkpoint.ts";

const dir = new URL("./testdata/", import.meta.url);

// Both files were written by upstream's checkpoint package (v1.34.4).
Deno.test("device checkpoint: upstream's file reads back and writes byte for byte", async () => {
  const text = (await Deno.readTextFile(new URL("upstream_checkpoint", dir)))
    .trim();
  const data = decodeDeviceCheckpoint(text, "kubelet_internal_checkpoint");
  assert.equal(data.entries.length, 1);
  const entry = data.entries[0]!;
  assert.equal(entry.podUid, "uid-1");
  assert.deepEqual([...entry.deviceIds].sort(([a], [b]) => a - b), [[-1, [
    "Dev-1",
  ]], [0, [
    "Dev-3",
    "Dev-2",
  ]]]);
  assert.deepEqual(entry.response?.envs, { A: "1" });
  assert.deepEqual(entry.response?.mounts, [{
    containerPath: "/tmp/Dev-1",
    hostPath: "/tmp/Dev-1",
    readOnly: false,
  }]);
  assert.deepEqual(data.registered.get("example.com/resource"), [
    "Dev-1",
    "Dev-2",
  ]);
  assert.equal(encodeDeviceCheckpoint(data), text);
});

Deno.test("device checkpoint: the empty one too", async () => {
  const text =
    (await Deno.readTextFile(new URL("upstream_checkpoint_empty", dir)))
      .trim();
  const data = decodeDeviceCheckpoint(text, "f");
  assert.equal(data.entries.length, 0);
  assert.equal(encodeDeviceCheckpoint(data), text);
});

Deno.test("device checkpoint: a changed file fails its checksum with a clear error", async () => {
  const text = (await Deno.readTextFile(new URL("upstream_checkpoint", dir)))
    .replace("Dev-3", "Dev-4");
  assert.throws(
    () => decodeDeviceCheckpoint(text, "/x/kubelet_internal_checkpoint"),
    /\/x\/kubelet_internal_checkpoint: checksum mismatch.*remove it/,
  );
});
