import assert from "node:assert/strict";
import {
  containerHashString,
  fnv32a,
  hashContainer,
} from "./container_hash.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("fnv32a() matches the published FNV-1a test vectors", () => {
  assert.equal(fnv32a(enc("")), 0x811c9dc5);
  assert.equal(fnv32a(enc("a")), 0xe40c292c);
  assert.equal(fnv32a(enc("foobar")), 0xbf9cf968);
});

Deno.test("hashContainer() is stable for the same name and image", () => {
  const a = hashContainer({ name: "app", image: "nginx:1.27" });
  const b = hashContainer({ name: "app", image: "nginx:1.27" });
  assert.equal(a, b);
  assert.ok(a >= 0 && a <= 0xffffffff);
});

Deno.test("hashContainer() changes when the image or the name changes", () => {
  const base = hashContainer({ name: "app", image: "nginx:1.27" });
  assert.notEqual(hashContainer({ name: "app", image: "nginx:1.28" }), base);
  assert.notEqual(hashContainer({ name: "web", image: "nginx:1.27" }), base);
});

Deno.test("hashContainer() ignores fields the API does not allow to change", () => {
  const base = hashContainer({ name: "app", image: "busybox" });
  const withCommand = hashContainer(
    {
      name: "app",
      image: "busybox",
      command: ["sleep", "1"],
      env: [{ name: "A", value: "1" }],
    } as Parameters<typeof hashContainer>[0],
  );
  assert.equal(withCommand, base);
});

Deno.test("containerHashString() is lower-case hex of the hash", () => {
  const c = { name: "app", image: "busybox" };
  const s = containerHashString(c);
  assert.match(s, /^[0-9a-f]{1,8}$/);
  assert.equal(parseInt(s, 16), hashContainer(c));
});

Deno.test("hashContainer() equals FNV-1a over the printed byte-slice dump", () => {
  const c = { name: "app", image: "nginx:1.27" };
  const json = new TextEncoder().encode(`{"image":"nginx:1.27","name":"app"}`);
  const dump = `([]uint8)[${json.join(" ")}]`;
  assert.equal(hashContainer(c), fnv32a(new TextEncoder().encode(dump)));
});

Deno.test("containerHashString() notices an image changed on the same object", () => {
  const c = { name: "app", image: "nginx:1" };
  const before = containerHashString(c);
  c.image = "nginx:2";
  assert.notEqual(containerHashString(c), before);
  assert.equal(containerHashString(c), hashContainer(c).toString(16));
});
