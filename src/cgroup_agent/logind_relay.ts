/**
 * The agent's part of graceful node shutdown for a kubelet under its planned lists, which may
 * neither open the system bus (the bus trusts root) nor receive the inhibitor lock's file
 * descriptor (that needs FFI): the agent speaks to logind on its behalf. A lock the agent takes
 * belongs to the client connection that asked for it and is released when that connection
 * ends, as closing the descriptor would release it; `PrepareForShutdown` signals are pushed to
 * every connection that asked to watch, and those connections are closed when the agent loses
 * the bus, so the kubelet reconnects as it would to the bus itself.
 *
 * @module
 */

import {
  connectLogind,
  type Logind,
  writeInhibitDelayDropIn,
} from "../systemd/mod.ts";

/** One client connection of the agent, as the relay needs it. */
export interface AgentSession {
  /** Sends one line (an event) to the client. */
  push(line: string): void;
  /** Runs `fn` when the connection ends (at once if it has ended). */
  onClose(fn: () => void): void;
  /** Ends the connection. */
  close(): void;
}

/** The event line a watching client receives. */
export interface ShutdownEventLine {
  event: "PrepareForShutdown";
  value: boolean;
}

/** The logind operations the agent serves. */
export interface LogindRelay {
  inhibitDelayMaxMs(): Promise<number>;
  writeInhibitDelay(seconds: number): Promise<void>;
  reload(): Promise<void>;
  /** Takes the kubelet's delay lock for `session`; resolves to the descriptor number. */
  inhibit(session: AgentSession): Promise<number>;
  /** Sends `session` each `PrepareForShutdown` from now on. */
  watch(session: AgentSession): Promise<void>;
  close(): void;
}

/** Options of {@linkcode logindRelay}: tests replace the bus and the drop-in's writer. */
export interface LogindRelayOptions {
  connect?: () => Promise<Logind>;
  writeDropIn?: (seconds: number) => Promise<void>;
}

/** A relay that connects to logind at its first use and again after a lost connection. */
export function logindRelay(options: LogindRelayOptions = {}): LogindRelay {
  const connect = options.connect ?? (() => connectLogind());
  const writeDropIn = options.writeDropIn ??
    ((seconds: number) => writeInhibitDelayDropIn(seconds));
  let current: Promise<Logind> | undefined;
  let watching: Promise<void> | undefined;
  const watchers = new Set<AgentSession>();

  const bus = (): Promise<Logind> => {
    if (current) return current;
    const opening = connect();
    current = opening;
    opening.then((logind) =>
      logind.closed.then(() => {
        if (current !== opening) return;
        current = undefined;
        watching = undefined;
        for (const session of watchers) session.close();
        watchers.clear();
      }), () => {
      if (current === opening) current = undefined;
    });
    return opening;
  };

  const fanOut = (value: boolean) => {
    const line = JSON.stringify(
      { event: "PrepareForShutdown", value } satisfies ShutdownEventLine,
    );
    for (const session of watchers) session.push(line);
  };

  return {
    inhibitDelayMaxMs: async () => (await bus()).inhibitDelayMaxMs(),
    writeInhibitDelay: (seconds) => writeDropIn(seconds),
    reload: async () => (await bus()).reloadLogind(),
    async inhibit(session) {
      const lock = await (await bus()).inhibitShutdown();
      session.onClose(() => lock.release());
      return lock.fd;
    },
    async watch(session) {
      const logind = await bus();
      if (!watching) {
        const started = logind.watchShutdown(fanOut);
        watching = started;
        await started.catch((error) => {
          if (watching === started) watching = undefined;
          throw error;
        });
      } else await watching;
      watchers.add(session);
      session.onClose(() => watchers.delete(session));
    },
    close() {
      const closing = current;
      current = undefined;
      closing?.then((logind) => logind.close(), () => {});
      for (const session of watchers) session.close();
      watchers.clear();
    },
  };
}
