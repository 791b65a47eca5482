/**
 * A D-Bus connection double: every call is logged, answered from `replies` by member (or with
 * an empty body), and signals are delivered with `emit`.
 *
 * @module
 */
import type { DBusCall, DBusConnection } from "./dbus_connection.ts";
import { type DBusMessage, type DBusValue, MessageType } from "./dbus_wire.ts";

/** A {@linkcode DBusConnection} for tests. */
export class FakeDBusConnection implements DBusConnection {
  readonly calls: DBusCall[] = [];
  /** Reply bodies (or errors to throw) by member name. */
  readonly replies = new Map<string, DBusValue[] | Error>();
  isClosed = false;
  #listeners = new Set<(message: DBusMessage) => void>();
  #close!: () => void;
  readonly closed: Promise<void> = new Promise((r) => this.#close = r);

  call(call: DBusCall): Promise<DBusValue[]> {
    this.calls.push(call);
    const reply = this.replies.get(call.member);
    if (reply instanceof Error) return Promise.reject(reply);
    return Promise.resolve(reply ?? []);
  }

  onSignal(listener: (message: DBusMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Delivers a signal to every listener. */
  emit(signal: Omit<DBusMessage, "type" | "serial">): void {
    for (const l of this.#listeners) {
      l({ type: MessageType.signal, serial: 1, ...signal });
    }
  }

  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.#close();
  }
}
