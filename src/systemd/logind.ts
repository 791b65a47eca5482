/**
 * systemd-logind as a kubelet needs it for graceful node shutdown (upstream
 * `nodeshutdown/systemd`): the `InhibitDelayMaxUSec` property, a drop-in raising it and the
 * reload that applies it (SIGHUP to `systemd-logind.service` through systemd's `KillUnit`),
 * the `PrepareForShutdown` signal, and a "delay" inhibitor lock on shutdown.
 *
 * @module
 */

import {
  connectDBus,
  type DBusConnection,
  SYSTEM_BUS_SOCKET,
} from "./dbus_connection.ts";
import type { DBusMessage, Variant } from "./dbus_wire.ts";
import {
  canReceiveUnixFds,
  type InhibitLock,
  type InhibitRequest,
  inhibitThroughFfi,
} from "./logind_inhibit_ffi.ts";

const LOGIND = "org.freedesktop.login1";
const LOGIND_PATH = "/org/freedesktop/login1";
const LOGIND_MANAGER = "org.freedesktop.login1.Manager";
const SIGHUP = 1;

/** Where the drop-in raising `InhibitDelayMaxSec` goes (upstream's directory and name). */
export const LOGIND_DROP_IN = "/etc/systemd/logind.conf.d/99-kubelet.conf";

/** The lock the kubelet asks for (upstream's `InhibitShutdown` arguments). */
export const KUBELET_SHUTDOWN_INHIBIT: InhibitRequest = {
  what: "shutdown",
  who: "kubelet",
  why: "Kubelet needs time to handle node shutdown",
  mode: "delay",
};

/** The logind calls of graceful node shutdown. */
export interface Logind {
  /** logind's `InhibitDelayMaxUSec`, in ms. */
  inhibitDelayMaxMs(): Promise<number>;
  /** SIGHUP to systemd-logind (it re-reads its configuration). */
  reloadLogind(): Promise<void>;
  /** Takes the "delay" lock on shutdown. */
  inhibitShutdown(): Promise<InhibitLock>;
  /**
   * Calls `listener` with each `PrepareForShutdown` value (true: shutting down; false: the
   * shutdown was cancelled). Resolves once the match is in place.
   */
  watchShutdown(listener: (shuttingDown: boolean) => void): Promise<void>;
  /** Resolves when the bus connection is gone (watching then stops). */
  readonly closed: Promise<void>;
  close(): void;
}

/** How {@linkcode logind} takes the lock (the descriptor cannot come over a Deno socket). */
export type TakeInhibitLock = (request: InhibitRequest) => Promise<InhibitLock>;

/** logind over `bus`; `takeLock` gets the lock (default: through FFI on the system bus). */
export function logind(
  bus: DBusConnection,
  options: { takeLock?: TakeInhibitLock; socket?: string } = {},
): Logind {
  const socket = options.socket ?? SYSTEM_BUS_SOCKET;
  const takeLock = options.takeLock ??
    ((request: InhibitRequest) => {
      if (!canReceiveUnixFds()) {
        return Promise.reject(
          new Error(
            "Cannot take logind's inhibitor lock: its file descriptor needs --allow-ffi, which the planned permission lists never grant",
          ),
        );
      }
      return inhibitThroughFfi(socket, request);
    });
  return {
    async inhibitDelayMaxMs() {
      const [v] = await bus.call({
        destination: LOGIND,
        path: LOGIND_PATH,
        interface: "org.freedesktop.DBus.Properties",
        member: "Get",
        signature: "ss",
        body: [LOGIND_MANAGER, "InhibitDelayMaxUSec"],
      });
      const value = (v as Variant | undefined)?.value;
      if (typeof value !== "bigint" && typeof value !== "number") {
        throw new TypeError(
          "logind's InhibitDelayMaxUSec is not a uint64 as expected",
        );
      }
      return Number(value) / 1000;
    },
    async reloadLogind() {
      await bus.call({
        destination: "org.freedesktop.systemd1",
        path: "/org/freedesktop/systemd1",
        interface: "org.freedesktop.systemd1.Manager",
        member: "KillUnit",
        signature: "ssi",
        body: ["systemd-logind.service", "all", SIGHUP],
      });
    },
    inhibitShutdown() {
      return takeLock(KUBELET_SHUTDOWN_INHIBIT);
    },
    async watchShutdown(listener) {
      bus.onSignal((m: DBusMessage) => {
        if (
          m.interface !== LOGIND_MANAGER || m.member !== "PrepareForShutdown" ||
          m.path !== LOGIND_PATH
        ) return;
        const value = m.body?.[0];
        if (typeof value === "boolean") listener(value);
      });
      await bus.call({
        destination: "org.freedesktop.DBus",
        path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus",
        member: "AddMatch",
        signature: "s",
        body: [
          `type='signal',interface='${LOGIND_MANAGER}',member='PrepareForShutdown',path='${LOGIND_PATH}'`,
        ],
      });
    },
    closed: bus.closed ?? new Promise<void>(() => {}),
    close() {
      bus.close();
    },
  };
}

/** Connects to the system bus (or `socket`) and returns {@linkcode logind} over it. */
export async function connectLogind(
  options: { socket?: string; takeLock?: TakeInhibitLock } = {},
): Promise<Logind> {
  const bus = await connectDBus(options.socket ?? SYSTEM_BUS_SOCKET);
  return logind(bus, options);
}

/** The drop-in's text setting `InhibitDelayMaxSec` to whole `seconds`. */
export function inhibitDelayDropIn(seconds: number): string {
  return `# Written by the kubelet: room for its shutdown grace period\n[Login]\nInhibitDelayMaxSec=${
    Math.round(seconds)
  }\n`;
}

/** Writes {@linkcode inhibitDelayDropIn} at `path` (default {@linkcode LOGIND_DROP_IN}). */
export async function writeInhibitDelayDropIn(
  seconds: number,
  options: { path?: string } = {},
): Promise<void> {
  const path = options.path ?? LOGIND_DROP_IN;
  const dir = path.slice(0, path.lastIndexOf("/"));
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o755 });
    await Deno.writeTextFile(path, inhibitDelayDropIn(seconds), {
      mode: 0o644,
    });
  } catch (cause) {
    throw new Error(
      `Cannot write the logind drop-in "${path}" raising InhibitDelayMaxSec`,
      { cause },
    );
  }
}
