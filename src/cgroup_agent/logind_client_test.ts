import * as assert from "node:assert/strict";
import { serveCgroupAgent } from "./agent.ts";
import { agentLogind, agentWriteInhibitDelay } from "./logind_client.ts";
import { logindRelay } from "./logind_relay.ts";
import { fakeHost, kernelLike } from "./testing.ts";
import { type InhibitRequest, logind } from "../systemd/mod.ts";
import { FakeDBusConnection } from "../systemd/testing.ts";

const PREPARE = {
  path: "/org/freedesktop/login1",
  interface: "org.freedesktop.login1.Manager",
  member: "PrepareForShutdown",
  signature: "b",
};

/** The agent's view of logind: a bus double, the locks it handed out, the drop-ins written. */
class LogindDouble {
  buses: FakeDBusConnection[] = [];
  requests: InhibitRequest[] = [];
  /** fd → released? */
  locks = new Map<number, boolean>();
  dropIns: number[] = [];
  #next = 40;

  relay() {
    return logindRelay({
      connect: () => {
        const bus = new FakeDBusConnection();
        bus.replies.set("Get", [{ signature: "t", value: 5_000_000n }]);
        this.buses.push(bus);
        return Promise.resolve(logind(bus, {
          takeLock: (request) => {
            this.requests.push(request);
            const fd = this.#next++;
            this.locks.set(fd, false);
            return Promise.resolve({
              fd,
              release: () => void this.locks.set(fd, true),
            });
          },
        }));
      },
      writeDropIn: (seconds) => {
        this.dropIns.push(seconds);
        return Promise.resolve();
      },
    });
  }
}

async function withRelayAgent(
  fn: (socket: string, double: LogindDouble, errors: string[]) => Promise<void>,
): Promise<void> {
  const root = await fakeHost();
  const socket = `${root}/cgroup-agent.sock`;
  const double = new LogindDouble();
  const errors: string[] = [];
  const agent = await serveCgroupAgent({
    socket,
    cgroupRoot: "/",
    root,
    fs: kernelLike,
    logind: double.relay(),
    onError: (m) => void errors.push(m),
  });
  try {
    await fn(socket, double, errors);
  } finally {
    agent.close();
    await agent.finished;
    await Deno.remove(root, { recursive: true });
  }
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(check(), what);
}

Deno.test("agentLogind() reads the inhibit delay and reloads logind through the agent", async () => {
  await withRelayAgent(async (socket, double) => {
    const l = await agentLogind(socket);
    try {
      assert.equal(await l.inhibitDelayMaxMs(), 5_000);
      await l.reloadLogind();
      assert.deepEqual(double.buses[0]!.calls.map((c) => c.member), [
        "Get",
        "KillUnit",
      ]);
    } finally {
      l.close();
    }
  });
});

Deno.test("an inhibitor lock taken through the agent is the kubelet's delay lock and lives as long as its holder", async () => {
  await withRelayAgent(async (socket, double) => {
    const l = await agentLogind(socket);
    try {
      const first = await l.inhibitShutdown();
      const second = await l.inhibitShutdown();
      assert.deepEqual(double.requests.map((r) => [r.what, r.who, r.mode]), [
        ["shutdown", "kubelet", "delay"],
        ["shutdown", "kubelet", "delay"],
      ]);
      assert.deepEqual([first.fd, second.fd], [40, 41]);
      assert.deepEqual([...double.locks.values()], [false, false]);
      // releasing one lock leaves the other held
      first.release();
      await until("the first lock is released", () => double.locks.get(40)!);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(double.locks.get(41), false);
      // the session's end (the kubelet gone) releases what it held
      l.close();
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(double.locks.get(41), false, "locks have their own lines");
      second.release();
      await until("the second lock is released", () => double.locks.get(41)!);
    } finally {
      l.close();
    }
  });
});

Deno.test("a lock holder that dies without releasing frees the lock (the agent sees its connection end)", async () => {
  await withRelayAgent(async (socket, double) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { agentLogind } from "${
          new URL("./logind_client.ts", import.meta.url).href
        }";
         const l = await agentLogind(${JSON.stringify(socket)});
         const lock = await l.inhibitShutdown();
         console.log("held", lock.fd);
         await new Promise(() => {});`,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    const { value } = await reader.read();
    assert.match(value ?? "", /^held 40/);
    assert.equal(double.locks.get(40), false);
    child.kill("SIGKILL");
    await child.status;
    await reader.cancel();
    await until(
      "the dead holder's lock is released",
      () => double.locks.get(40)!,
    );
  });
});

Deno.test("PrepareForShutdown reaches every watching kubelet connection; a lost bus ends the watch", async () => {
  await withRelayAgent(async (socket, double) => {
    const a = await agentLogind(socket);
    const b = await agentLogind(socket);
    try {
      const seenA: boolean[] = [];
      const seenB: boolean[] = [];
      await a.watchShutdown((v) => seenA.push(v));
      await b.watchShutdown((v) => seenB.push(v));
      const bus = double.buses[0]!;
      // one match on the bus serves both watchers
      assert.deepEqual(bus.calls.map((c) => c.member), ["AddMatch"]);
      bus.emit({ ...PREPARE, body: [true] });
      bus.emit({ ...PREPARE, body: [false] });
      await until("both saw both", () => seenA.length + seenB.length === 4);
      assert.deepEqual(seenA, [true, false]);
      assert.deepEqual(seenB, [true, false]);
      let ended = false;
      void a.closed.then(() => ended = true);
      bus.close();
      await until("the watch ends with the bus", () => ended);
      await b.closed;
      // the next connection gets a new bus and watches again
      const c = await agentLogind(socket);
      try {
        await c.watchShutdown(() => {});
        assert.equal(double.buses.length, 2);
        assert.deepEqual(double.buses[1]!.calls.map((x) => x.member), [
          "AddMatch",
        ]);
      } finally {
        c.close();
      }
    } finally {
      a.close();
      b.close();
    }
  });
});

Deno.test("the agent writes the inhibit-delay drop-in only for whole seconds up to an hour", async () => {
  await withRelayAgent(async (socket, double, errors) => {
    await agentWriteInhibitDelay(socket, 45);
    assert.deepEqual(double.dropIns, [45]);
    for (const seconds of [7200, 0, -5]) {
      await assert.rejects(
        () => agentWriteInhibitDelay(socket, seconds),
        (e: Error) =>
          e instanceof Deno.errors.PermissionDenied &&
          /InhibitDelayMaxSec must be a whole number of seconds from 1 to 3600/
            .test(e.message),
      );
    }
    assert.deepEqual(double.dropIns, [45]);
    assert.equal(errors.length, 3);
  });
});

Deno.test("agentLogind() names the socket when no agent listens", async () => {
  await assert.rejects(
    () => agentLogind("/nonexistent/cgroup-agent.sock"),
    /cgroup agent at \/nonexistent\/cgroup-agent\.sock: cannot connect/,
  );
});
