import assert from "node:assert/strict";
import {
  connectDBus,
  DBusError,
  inhibitDelayDropIn,
  KUBELET_SHUTDOWN_INHIBIT,
  logind,
  SYSTEM_BUS_SOCKET,
  writeInhibitDelayDropIn,
} from "./mod.ts";
import { FakeDBusConnection } from "./testing.ts";

const PREPARE = {
  path: "/org/freedesktop/login1",
  interface: "org.freedesktop.login1.Manager",
  member: "PrepareForShutdown",
  signature: "b",
};

Deno.test("logind().inhibitDelayMaxMs() reads InhibitDelayMaxUSec as milliseconds", async () => {
  const bus = new FakeDBusConnection();
  bus.replies.set("Get", [{ signature: "t", value: 30_000_000n }]);
  assert.equal(await logind(bus).inhibitDelayMaxMs(), 30_000);
  assert.deepEqual(bus.calls[0]!.body, [
    "org.freedesktop.login1.Manager",
    "InhibitDelayMaxUSec",
  ]);
  assert.equal(bus.calls[0]!.destination, "org.freedesktop.login1");
});

Deno.test("logind().inhibitDelayMaxMs() refuses a value that is not a uint64", async () => {
  const bus = new FakeDBusConnection();
  bus.replies.set("Get", [{ signature: "s", value: "5s" }]);
  await assert.rejects(() => logind(bus).inhibitDelayMaxMs(), /not a uint64/);
});

Deno.test("logind().reloadLogind() sends SIGHUP to systemd-logind through systemd", async () => {
  const bus = new FakeDBusConnection();
  await logind(bus).reloadLogind();
  assert.deepEqual(bus.calls.map((c) => [c.member, c.signature, c.body]), [
    ["KillUnit", "ssi", ["systemd-logind.service", "all", 1]],
  ]);
});

Deno.test("logind().watchShutdown() adds the match and passes each PrepareForShutdown value on", async () => {
  const bus = new FakeDBusConnection();
  const seen: boolean[] = [];
  await logind(bus).watchShutdown((v) => seen.push(v));
  assert.deepEqual(bus.calls.map((c) => c.member), ["AddMatch"]);
  assert.match(String(bus.calls[0]!.body![0]), /member='PrepareForShutdown'/);
  bus.emit({ ...PREPARE, body: [true] });
  // other members, objects and malformed bodies are not shutdown events
  bus.emit({ ...PREPARE, member: "PrepareForSleep", body: [true] });
  bus.emit({
    ...PREPARE,
    path: "/org/freedesktop/login1/seat/seat0",
    body: [true],
  });
  bus.emit({ ...PREPARE, body: ["yes"] });
  bus.emit({ ...PREPARE, body: [false] });
  assert.deepEqual(seen, [true, false]);
});

Deno.test("logind().inhibitShutdown() asks for upstream's delay lock on shutdown", async () => {
  const bus = new FakeDBusConnection();
  const asked: unknown[] = [];
  const lock = await logind(bus, {
    takeLock: (request) => {
      asked.push(request);
      return Promise.resolve({ fd: 7, release() {} });
    },
  }).inhibitShutdown();
  assert.equal(lock.fd, 7);
  assert.deepEqual(asked, [{
    what: "shutdown",
    who: "kubelet",
    why: "Kubelet needs time to handle node shutdown",
    mode: "delay",
  }]);
});

Deno.test("inhibitDelayDropIn() sets InhibitDelayMaxSec in the Login section", async () => {
  assert.match(inhibitDelayDropIn(30), /^\[Login\]\nInhibitDelayMaxSec=30\n/m);
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/logind.conf.d/99-kubelet.conf`;
    await writeInhibitDelayDropIn(45, { path });
    assert.match(await Deno.readTextFile(path), /InhibitDelayMaxSec=45\n/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Real logind on the system bus, with FFI for the descriptor (the node VM). */
function hasLogind(): boolean {
  try {
    Deno.statSync("/run/systemd/system");
    Deno.statSync(SYSTEM_BUS_SOCKET);
    return Deno.permissions.querySync({ name: "ffi" }).state === "granted" &&
      Deno.uid() === 0;
  } catch {
    return false;
  }
}

Deno.test({
  name: "logind().inhibitShutdown() holds a real delay lock until released",
  ignore: !hasLogind(),
  fn: async () => {
    const bus = await connectDBus();
    try {
      const who = async () => {
        const [list] = await bus.call({
          destination: "org.freedesktop.login1",
          path: "/org/freedesktop/login1",
          interface: "org.freedesktop.login1.Manager",
          member: "ListInhibitors",
        });
        return (list as unknown[][]).filter((i) =>
          i[1] === KUBELET_SHUTDOWN_INHIBIT.who && i[0] === "shutdown" &&
          i[3] === "delay"
        ).length;
      };
      const before = await who();
      const lock = await logind(bus).inhibitShutdown();
      assert.ok(lock.fd > 2);
      assert.equal(await who(), before + 1);
      lock.release();
      lock.release();
      // logind notices the closed FIFO asynchronously
      for (let i = 0; i < 50 && await who() !== before; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(await who(), before);
    } finally {
      bus.close();
    }
  },
});

Deno.test({
  name: "logind() rejects with logind's error for a bad request",
  ignore: !hasLogind(),
  fn: async () => {
    const { inhibitThroughFfi } = await import("./mod.ts");
    await assert.rejects(
      () =>
        inhibitThroughFfi(SYSTEM_BUS_SOCKET, {
          ...KUBELET_SHUTDOWN_INHIBIT,
          what: "no-such-thing",
        }),
      DBusError,
    );
  },
});
