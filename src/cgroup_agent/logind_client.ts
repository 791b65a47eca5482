/**
 * Graceful node shutdown's logind through the cgroup agent, for the kubelet under its planned
 * lists (docs/permissions.md, "The cgroup agent"): the same calls as the direct bus connection,
 * each a request on the agent's socket. The watch and each inhibitor lock have a connection of
 * their own: the agent holds a lock exactly as long as its connection lives, so releasing the
 * lock is closing that connection, and a kubelet that dies releases it too.
 *
 * @module
 */

import type { InhibitLock, Logind } from "../systemd/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import { rebuildError } from "./client.ts";
import type { ShutdownEventLine } from "./logind_relay.ts";
import type { AgentRequest } from "./validate.ts";

/** A logind call may wait for the agent to connect to the bus and for logind to answer. */
const LOGIND_TIMEOUT_MS = 45_000;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** One connection to the agent: requests answered in order, event lines handed to a listener. */
class AgentLine {
  readonly closed: Promise<void>;
  onEvent: ((event: ShutdownEventLine) => void) | undefined;
  #pending: Pending[] = [];
  #open = true;

  private constructor(readonly socket: string, readonly conn: Deno.UnixConn) {
    this.closed = this.#read();
  }

  static async open(socket: string): Promise<AgentLine> {
    try {
      return new AgentLine(
        socket,
        await Deno.connect({ transport: "unix", path: socket }),
      );
    } catch (error) {
      throw new Error(
        `cgroup agent at ${socket}: cannot connect: ${errorMessage(error)}`,
      );
    }
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for await (const chunk of this.conn.readable) {
        buffered += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          this.#dispatch(JSON.parse(line));
        }
      }
    } catch {
      // a broken connection ends like a closed one
    } finally {
      this.close();
    }
  }

  #dispatch(message: Record<string, unknown>): void {
    if (message.event === "PrepareForShutdown") {
      if (typeof message.value === "boolean") {
        this.onEvent?.({ event: "PrepareForShutdown", value: message.value });
      }
      return;
    }
    const waiting = this.#pending.shift();
    if (!waiting) return;
    if (message.ok === true) waiting.resolve(message.value);
    else {
      waiting.reject(
        rebuildError(
          (message.error ?? {}) as { name?: unknown; message?: unknown },
        ),
      );
    }
  }

  async request(req: AgentRequest): Promise<unknown> {
    if (!this.#open) {
      throw new Error(
        `cgroup agent at ${this.socket}: the connection is closed`,
      );
    }
    const answer = new Promise<unknown>((resolve, reject) =>
      this.#pending.push({ resolve, reject })
    );
    const timer = setTimeout(() => this.close(), LOGIND_TIMEOUT_MS);
    try {
      const bytes = new TextEncoder().encode(JSON.stringify(req) + "\n");
      for (let off = 0; off < bytes.length;) {
        off += await this.conn.write(bytes.subarray(off));
      }
      return await answer;
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("cgroup agent")) {
        throw error;
      }
      this.close();
      throw new Error(
        `cgroup agent at ${this.socket}: no answer to ${req.op}: ${
          errorMessage(error)
        }`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      this.conn.close();
    } catch { /* already closed */ }
    for (const waiting of this.#pending.splice(0)) {
      waiting.reject(
        new Error(`cgroup agent at ${this.socket}: the connection closed`),
      );
    }
  }
}

/**
 * logind through the agent on `socket`. Its `closed` resolves when the watch connection ends
 * (the agent restarted or lost the bus), so the caller reconnects.
 */
export async function agentLogind(socket: string): Promise<Logind> {
  const line = await AgentLine.open(socket);
  return {
    inhibitDelayMaxMs: async () =>
      Number(await line.request({ op: "logindInhibitDelay" })),
    reloadLogind: async () => {
      await line.request({ op: "logindReload" });
    },
    async inhibitShutdown(): Promise<InhibitLock> {
      const holder = await AgentLine.open(socket);
      let fd: number;
      try {
        fd = Number(await holder.request({ op: "logindInhibit" }));
      } catch (error) {
        holder.close();
        throw error;
      }
      return { fd, release: () => holder.close() };
    },
    async watchShutdown(listener) {
      line.onEvent = (event) => listener(event.value);
      await line.request({ op: "logindWatch" });
    },
    closed: line.closed,
    close: () => line.close(),
  };
}

/** Has the agent on `socket` write logind's drop-in raising `InhibitDelayMaxSec`. */
export async function agentWriteInhibitDelay(
  socket: string,
  seconds: number,
): Promise<void> {
  const line = await AgentLine.open(socket);
  try {
    await line.request({
      op: "logindWriteInhibitDelay",
      seconds: Math.round(seconds),
    });
  } finally {
    line.close();
  }
}
