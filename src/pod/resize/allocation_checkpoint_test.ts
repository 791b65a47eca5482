import assert from "node:assert/strict";
import {
  checkpointChecksum,
  decodeCheckpoint,
  dirCheckpointFiles,
  encodeCheckpoint,
} from "./allocation_checkpoint.ts";

const UPSTREAM = new URL("./testdata/allocated_pods_state", import.meta.url);

Deno.test("decodeCheckpoint() reads a file the upstream kubelet wrote, and encodeCheckpoint() writes it back byte for byte", async () => {
  const text = await Deno.readTextFile(UPSTREAM);
  const state = decodeCheckpoint(text, "allocated_pods_state");
  assert.equal(state.size, 6);
  assert.deepEqual(
    state.get("0ff79d00-4c3a-41fd-b58e-aa9dbbbad3aa")?.get("fail"),
    { requests: { cpu: "5m", memory: "10Mi" } },
  );
  assert.equal(encodeCheckpoint(state), text.trim());
});

Deno.test("checkpointChecksum() is FNV-1a 32 over Go's deep-hash printing of the data string", () => {
  // computed with go-spew's printer and hash/fnv, as upstream's checksum package does
  const data =
    `{"entries":{"u1":{"ContainerResources":{"c1":{"limits":{"cpu":"200m"},"requests":{"cpu":"100m","memory":"64Mi"}}}}}}`;
  assert.equal(checkpointChecksum(data), 1724236417);
});

Deno.test("decodeCheckpoint() refuses a corrupt file, naming it and the fix", () => {
  const good = encodeCheckpoint(
    new Map([["u1", new Map([["c1", { requests: { cpu: "1" } }]])]]),
  );
  const bad = good.replace(`\\"1\\"`, `\\"2\\"`);
  assert.throws(
    () => decodeCheckpoint(bad, "allocated_pods_state"),
    /allocated_pods_state: checksum mismatch.*remove the file/,
  );
  assert.throws(
    () => decodeCheckpoint("{", "actuated_pods_state"),
    /actuated_pods_state: not a JSON checkpoint/,
  );
  assert.equal(encodeCheckpoint(new Map()).startsWith(`{"data":"{}"`), true);
});

Deno.test("dirCheckpointFiles(): concurrent writes of one checkpoint all land, the last one wins", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-checkpoint-" });
  try {
    const files = dirCheckpointFiles(dir);
    const texts = Array.from({ length: 30 }, (_, i) => `{"n":${i}}`);
    await Promise.all(texts.map((t) => files.write("allocated_pods_state", t)));
    assert.equal(await files.read("allocated_pods_state"), texts.at(-1));
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name),
      ["allocated_pods_state"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
