/**
 * The few systemd manager calls a cgroup driver needs (upstream goes through go-systemd's
 * `dbus.Conn` from libcontainer's systemd manager): start a transient unit and wait for its
 * job, set unit properties, stop a unit and wait, reset a failed unit, read the version.
 * Job results come from the manager's `JobRemoved` signal, as go-systemd does.
 *
 * @module
 */

import {
  connectDBus,
  type DBusConnection,
  DBusDisconnectedError,
  DBusError,
  SYSTEM_BUS_SOCKET,
} from "./dbus_connection.ts";
import type { DBusMessage, DBusValue, Variant } from "./dbus_wire.ts";

/** A unit property as sent to systemd: its name and typed value. */
export type UnitProperty = [name: string, value: Variant];

/** What a cgroup driver asks of systemd. */
export interface SystemdUnits {
  /**
   * `StartTransientUnit(name, "replace", properties)` and waits for the job; a unit that
   * already exists is left as it is (resolves `false`), a job that ends other than "done"
   * rejects.
   */
  startTransientUnit(
    name: string,
    properties: readonly UnitProperty[],
  ): Promise<boolean>;
  /** `SetUnitProperties(name, runtime=true, properties)`. */
  setUnitProperties(
    name: string,
    properties: readonly UnitProperty[],
  ): Promise<void>;
  /** `StopUnit(name, "replace")`, waits for the job, then `ResetFailedUnit`; a missing unit is fine. */
  stopUnit(name: string): Promise<void>;
  /** The manager's `Version` as a number (`252` from "252.39-1~deb12u1"); -1 when unreadable. */
  version(): Promise<number>;
  close(): void;
}

const SYSTEMD = "org.freedesktop.systemd1";
const MANAGER_PATH = "/org/freedesktop/systemd1";
const MANAGER = "org.freedesktop.systemd1.Manager";

/** How long a job may take (libcontainer waits 30 s too). */
const JOB_TIMEOUT_MS = 30_000;

/** `252.39-1~deb12u1` or `v252` → 252 (upstream `systemdVersionAtoi`); -1 when no digits lead. */
export function parseSystemdVersion(text: string): number {
  const m = /^"?v?(\d+)/.exec(text);
  return m ? Number(m[1]) : -1;
}

/** Variant helpers for the property types systemd's slices take. */
export const prop = {
  string: (name: string, value: string): UnitProperty => [name, {
    signature: "s",
    value,
  }],
  bool: (name: string, value: boolean): UnitProperty => [name, {
    signature: "b",
    value,
  }],
  uint64: (name: string, value: bigint): UnitProperty => [name, {
    signature: "t",
    value,
  }],
  strings: (name: string, value: string[]): UnitProperty => [name, {
    signature: "as",
    value,
  }],
  bytes: (name: string, value: number[]): UnitProperty => [name, {
    signature: "ay",
    value,
  }],
};

/** Connects to systemd over the system bus (default socket) and subscribes to job signals. */
export async function connectSystemd(
  socket: string = SYSTEM_BUS_SOCKET,
): Promise<SystemdUnits> {
  const bus = await connectDBus(socket);
  try {
    return await systemdUnits(bus);
  } catch (error) {
    bus.close();
    throw error;
  }
}

/** The calls over an open connection (tests may pass any {@linkcode DBusConnection}). */
export async function systemdUnits(bus: DBusConnection): Promise<SystemdUnits> {
  const finished = new Map<string, string>();
  const waiters = new Map<string, (result: string) => void>();
  bus.onSignal((m: DBusMessage) => {
    if (m.interface !== MANAGER || m.member !== "JobRemoved") return;
    const job = String(m.body?.[1] ?? "");
    const result = String(m.body?.[3] ?? "");
    const waiter = waiters.get(job);
    if (waiter) {
      waiters.delete(job);
      waiter(result);
    } else {
      // the signal may overtake the reply that names the job
      finished.set(job, result);
      if (finished.size > 256) {
        finished.delete(finished.keys().next().value as string);
      }
    }
  });
  await bus.call({
    destination: "org.freedesktop.DBus",
    path: "/org/freedesktop/DBus",
    interface: "org.freedesktop.DBus",
    member: "AddMatch",
    signature: "s",
    body: [
      `type='signal',sender='${SYSTEMD}',interface='${MANAGER}',member='JobRemoved'`,
    ],
  });
  const manager = (member: string, signature = "", body: DBusValue[] = []) =>
    bus.call({
      destination: SYSTEMD,
      path: MANAGER_PATH,
      interface: MANAGER,
      member,
      ...(signature ? { signature, body } : {}),
    });
  await manager("Subscribe");

  const waitJob = (job: string, unit: string): Promise<string> => {
    const done = finished.get(job);
    if (done !== undefined) {
      finished.delete(job);
      return Promise.resolve(done);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(job);
        reject(
          new Error(`Timed out waiting for systemd's job on unit "${unit}"`),
        );
      }, JOB_TIMEOUT_MS);
      waiters.set(job, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
    });
  };
  const isError = (error: unknown, name: string) =>
    error instanceof DBusError && error.errorName === `${SYSTEMD}.${name}`;

  const resetFailed = async (name: string) => {
    try {
      await manager("ResetFailedUnit", "s", [name]);
    } catch (error) {
      if (!isError(error, "NoSuchUnit")) throw error;
    }
  };

  let version: number | undefined;
  return {
    async startTransientUnit(name, properties) {
      let job: string;
      try {
        [job] = await manager("StartTransientUnit", "ssa(sv)a(sa(sv))", [
          name,
          "replace",
          properties.map(([n, v]) => [n, v]),
          [],
        ]) as [string];
      } catch (error) {
        if (isError(error, "UnitExists")) return false;
        throw error;
      }
      const result = await waitJob(job, name);
      if (result !== "done") {
        await resetFailed(name).catch(() => {});
        throw new Error(
          `systemd could not start unit "${name}": job ${result}`,
        );
      }
      return true;
    },
    async setUnitProperties(name, properties) {
      await manager("SetUnitProperties", "sba(sv)", [
        name,
        true,
        properties.map(([n, v]) => [n, v]),
      ]);
    },
    async stopUnit(name) {
      try {
        const [job] = await manager("StopUnit", "ss", [name, "replace"]) as [
          string,
        ];
        await waitJob(job, name);
      } catch (error) {
        if (!isError(error, "NoSuchUnit")) throw error;
      }
      await resetFailed(name);
    },
    async version() {
      if (version !== undefined) return version;
      try {
        const [v] = await bus.call({
          destination: SYSTEMD,
          path: MANAGER_PATH,
          interface: "org.freedesktop.DBus.Properties",
          member: "Get",
          signature: "ss",
          body: [MANAGER, "Version"],
        });
        version = parseSystemdVersion(String((v as Variant).value));
      } catch {
        version = -1;
      }
      return version;
    },
    close() {
      bus.close();
    },
  };
}

/**
 * A {@linkcode SystemdUnits} that survives a lost bus connection (dbus-daemon or systemd
 * restarted): a call that finds the connection gone is made once more on a new one from
 * `connect`, as libcontainer's `retryOnDisconnect` does. `initial` is used first when given.
 */
export function reconnectingSystemd(
  connect: () => Promise<SystemdUnits>,
  initial?: SystemdUnits,
): SystemdUnits {
  let current: Promise<SystemdUnits> | undefined = initial
    ? Promise.resolve(initial)
    : undefined;
  const run = async <T>(call: (units: SystemdUnits) => Promise<T>) => {
    for (let attempt = 0;; attempt++) {
      const pending = current ??= connect();
      let units: SystemdUnits;
      try {
        units = await pending;
      } catch (error) {
        if (current === pending) current = undefined;
        throw error;
      }
      try {
        return await call(units);
      } catch (error) {
        if (!(error instanceof DBusDisconnectedError)) throw error;
        units.close();
        if (current === pending) current = undefined;
        if (attempt > 0) throw error;
      }
    }
  };
  return {
    startTransientUnit: (name, properties) =>
      run((u) => u.startTransientUnit(name, properties)),
    setUnitProperties: (name, properties) =>
      run((u) => u.setUnitProperties(name, properties)),
    stopUnit: (name) => run((u) => u.stopUnit(name)),
    version: () => run((u) => u.version()),
    close() {
      const pending = current;
      current = undefined;
      void pending?.then((u) => u.close(), () => {});
    },
  };
}
