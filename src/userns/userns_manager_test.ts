import assert from "node:assert/strict";
import { CaptureLogger } from "../log/testing.ts";
import { mappingsFileText } from "./id_mappings.ts";
import { fixedHandlers, MemoryPodDirs } from "./testing.ts";
import {
  createUserNamespaceManager,
  type UserNamespaceOptions,
} from "./userns_manager.ts";

const SUPPORTED = fixedHandlers([
  { name: "", userNamespaces: true },
  { name: "runc", userNamespaces: true },
  { name: "kata", userNamespaces: false },
]);
const OPTIONS: UserNamespaceOptions = {
  gateEnabled: true,
  maxPods: 2,
  range: { first: 65536, length: 2 * 65536 },
};

function manager(
  files = new MemoryPodDirs(),
  options: Partial<UserNamespaceOptions> = {},
  handlers = SUPPORTED,
) {
  return createUserNamespaceManager({
    files,
    handlers,
    logger: new CaptureLogger(),
    random: () => 0,
  }, { ...OPTIONS, ...options });
}

const mapping = (hostId: number) => ({ hostId, containerId: 0, length: 65536 });

Deno.test("forPod(): hostUsers false gets a range of its own, recorded in its directory", async () => {
  const files = new MemoryPodDirs();
  const m = await manager(files);
  const got = await m.forPod({ uid: "a", hostUsers: false }, "");
  assert.deepEqual(got, {
    mode: 0,
    uids: [mapping(65536)],
    gids: [mapping(65536)],
  });
  assert.equal(
    files.dirs.get("a"),
    mappingsFileText({ hostId: 65536, length: 65536 }),
  );
  // asked again (a container of the pod, the next sync): the same range
  assert.deepEqual(await m.forPod({ uid: "a", hostUsers: false }, "runc"), got);
  // another pod gets another range
  const b = await m.forPod({ uid: "b", hostUsers: false }, "");
  assert.deepEqual(b?.uids, [mapping(131072)]);
});

Deno.test("forPod(): the node's user namespace, or none with the gate off", async () => {
  const m = await manager();
  assert.deepEqual(await m.forPod({ uid: "a" }, ""), { mode: 2 });
  assert.deepEqual(await m.forPod({ uid: "a", hostUsers: true }, "kata"), {
    mode: 2,
  });
  const off = await manager(new MemoryPodDirs(), { gateEnabled: false });
  assert.equal(await off.forPod({ uid: "a" }, ""), undefined);
  await assert.rejects(off.forPod({ uid: "a", hostUsers: false }, ""), {
    message:
      'the feature gate "UserNamespacesSupport" is disabled: can\'t set spec.HostUsers',
  });
});

Deno.test("forPod(): refused on a handler without support, nothing allocated", async () => {
  const files = new MemoryPodDirs();
  const m = await manager(files);
  await assert.rejects(m.forPod({ uid: "a", hostUsers: false }, "kata"), {
    message:
      'can\'t set `spec.hostUsers: false`, RuntimeClass handler "kata" does not support user namespaces',
  });
  const old = await manager(files, {}, fixedHandlers([]));
  await assert.rejects(old.forPod({ uid: "a", hostUsers: false }, ""), {
    message:
      "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
  });
  assert.equal(files.dirs.size, 0);
});

Deno.test("start: the ranges in the pod directories are taken back (a restart, or upstream's files)", async () => {
  const files = new MemoryPodDirs();
  files.dirs.set("a", mappingsFileText({ hostId: 65536, length: 65536 }));
  files.dirs.set("plain", undefined);
  const m = await manager(files);
  // "a" keeps its range; the first free slot for "b" is the next one
  assert.deepEqual(
    (await m.forPod({ uid: "a", hostUsers: false }, ""))?.uids,
    [mapping(65536)],
  );
  assert.deepEqual(
    (await m.forPod({ uid: "b", hostUsers: false }, ""))?.uids,
    [mapping(131072)],
  );
});

Deno.test("start: a file another kubelet could not have written stops the start", async () => {
  const files = new MemoryPodDirs();
  files.dirs.set("a", mappingsFileText({ hostId: 65536 * 9, length: 65536 }));
  await assert.rejects(manager(files), {
    message:
      "create user namespace manager: record pod mappings: id 589824 is out of range",
  });
  // with the gate off the files are not read
  await manager(files, { gateEnabled: false });
  await assert.rejects(manager(new MemoryPodDirs(), { maxPods: 4 }), {
    message:
      "create user namespace manager: kubelet user assigned IDs are not enough to support 4 pods",
  });
});

Deno.test("forPod(): a broken file of the pod is refused with upstream's prefix", async () => {
  const files = new MemoryPodDirs();
  const m = await manager(files);
  files.dirs.set("a", "{}");
  await assert.rejects(m.forPod({ uid: "a", hostUsers: false }, ""), {
    message:
      "user namespace: invalid user namespace configuration: no more than one mapping allowed.",
  });
});

Deno.test("forPod(): a failed write frees the range", async () => {
  const files = new MemoryPodDirs();
  const m = await manager(files);
  files.failWrite = new Error("disk full");
  await assert.rejects(m.forPod({ uid: "a", hostUsers: false }, ""), {
    message: "create user namespace: disk full",
  });
  files.failWrite = undefined;
  // had "a" kept slot 0, "b" would get slot 1
  assert.deepEqual(
    (await m.forPod({ uid: "b", hostUsers: false }, ""))?.uids,
    [mapping(65536)],
  );
});

Deno.test("release() and cleanupOrphans(): ranges and files of gone pods are freed", async () => {
  const files = new MemoryPodDirs();
  const m = await manager(files);
  await m.forPod({ uid: "a", hostUsers: false }, "");
  await m.forPod({ uid: "b", hostUsers: false }, "");
  await assert.rejects(m.forPod({ uid: "c", hostUsers: false }, ""), {
    message:
      "create user namespace: could not find an empty slot to allocate a user namespace",
  });
  await m.release("a");
  assert.equal(files.dirs.get("a"), undefined);
  assert.deepEqual(
    (await m.forPod({ uid: "c", hostUsers: false }, ""))?.uids,
    [mapping(65536)],
  );
  // "b" is unknown now: its directory's range goes
  await m.cleanupOrphans((uid) => uid === "c");
  assert.equal(files.dirs.get("b"), undefined);
  assert.notEqual(files.dirs.get("c"), undefined);
  // "c"'s directory vanished (removed by someone else): its range goes too
  files.dirs.delete("c");
  await m.cleanupOrphans(() => true);
  assert.deepEqual(
    (await m.forPod({ uid: "d", hostUsers: false }, ""))?.uids,
    [mapping(65536)],
  );
  assert.deepEqual(
    (await m.forPod({ uid: "e", hostUsers: false }, ""))?.uids,
    [mapping(131072)],
  );
});
