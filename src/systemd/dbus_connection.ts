/**
 * One D-Bus connection over a unix socket: the SASL `EXTERNAL` handshake (the peer's
 * credentials identify us), `Hello`, method calls matched to their replies by serial, and
 * signals handed to listeners. The socket needs read and write permission on its path.
 *
 * @module
 */

import {
  type DBusMessage,
  type DBusValue,
  decodeMessage,
  encodeMessage,
  messageLength,
  MessageType,
} from "./dbus_wire.ts";

/** The system bus's socket (upstream's go-systemd dials the same). */
export const SYSTEM_BUS_SOCKET = "/run/dbus/system_bus_socket";

/** An error reply: `name` is the D-Bus error name (`org.freedesktop.systemd1.NoSuchUnit`). */
export class DBusError extends Error {
  constructor(readonly errorName: string, message: string) {
    super(`${errorName}: ${message}`);
    this.name = "DBusError";
  }
}

/** The connection is gone (the peer closed it, or it was closed here): a new one may work. */
export class DBusDisconnectedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DBusDisconnectedError";
  }
}

/** A method call: destination, object, interface, member, and the body by signature. */
export interface DBusCall {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: DBusValue[];
}

/** What the systemd client asks of a connection. */
export interface DBusConnection {
  /** Sends the call and resolves with the reply's body; an error reply rejects with {@linkcode DBusError}. */
  call(
    call: DBusCall,
    options?: { signal?: AbortSignal },
  ): Promise<DBusValue[]>;
  /** Calls `listener` with every signal that arrives; returns the unsubscribe. */
  onSignal(listener: (message: DBusMessage) => void): () => void;
  /** Resolves once the connection is gone (closed here or by the peer). */
  readonly closed?: Promise<void>;
  close(): void;
}

/** How long a call may wait for its reply. */
const CALL_TIMEOUT_MS = 30_000;

async function readLine(
  conn: Deno.UnixConn,
  pending: { bytes: Uint8Array },
): Promise<string> {
  const chunk = new Uint8Array(4096);
  for (;;) {
    const nl = pending.bytes.indexOf(0x0a);
    if (nl >= 0) {
      const line = new TextDecoder().decode(pending.bytes.subarray(0, nl));
      pending.bytes = pending.bytes.slice(nl + 1);
      return line.replace(/\r$/, "");
    }
    const n = await conn.read(chunk);
    if (n === null) {
      throw new Error(
        "The D-Bus peer closed the connection during authentication",
      );
    }
    pending.bytes = concat(pending.bytes, chunk.subarray(0, n));
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function hex(text: string): string {
  return [...new TextEncoder().encode(text)]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Connects to `socket` (default the system bus), authenticates as `uid` (default: whatever
 * the socket's credentials say, which needs no `--allow-sys`) and says `Hello`.
 */
export async function connectDBus(
  socket: string = SYSTEM_BUS_SOCKET,
  options: { uid?: number } = {},
): Promise<DBusConnection> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  try {
    return await handshake(conn, options.uid);
  } catch (error) {
    conn.close();
    throw error;
  }
}

async function handshake(
  conn: Deno.UnixConn,
  uid: number | undefined,
): Promise<DBusConnection> {
  const pending = { bytes: new Uint8Array() };
  const send = (text: string) => conn.write(new TextEncoder().encode(text));
  // the leading NUL byte is where the server may read credentials
  await send(
    `\0AUTH EXTERNAL${uid === undefined ? "" : " " + hex(String(uid))}\r\n`,
  );
  let line = await readLine(conn, pending);
  if (line.startsWith("DATA")) {
    await send("DATA\r\n");
    line = await readLine(conn, pending);
  }
  if (!line.startsWith("OK ")) {
    throw new Error(`D-Bus authentication refused: "${line}"`);
  }
  await send("BEGIN\r\n");
  const connection = startConnection(conn, pending.bytes);
  await connection.call({
    destination: "org.freedesktop.DBus",
    path: "/org/freedesktop/DBus",
    interface: "org.freedesktop.DBus",
    member: "Hello",
  });
  return connection;
}

function startConnection(
  conn: Deno.UnixConn,
  initial: Uint8Array,
): DBusConnection {
  let serial = 0;
  let closed = false;
  const waiting = new Map<
    number,
    { resolve: (m: DBusMessage) => void; reject: (e: Error) => void }
  >();
  const listeners = new Set<(message: DBusMessage) => void>();
  let writes: Promise<unknown> = Promise.resolve();

  const failAll = (error: Error) => {
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
  };

  const readLoop = async () => {
    let buffer = initial;
    const chunk = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        let length = messageLength(buffer);
        while (length !== undefined && buffer.length >= length) {
          const message = decodeMessage(buffer.subarray(0, length));
          buffer = buffer.slice(length);
          dispatch(message);
          length = messageLength(buffer);
        }
        const n = await conn.read(chunk);
        if (n === null) break;
        buffer = concat(buffer, chunk.subarray(0, n));
      }
    } catch (error) {
      if (!closed) {
        failAll(
          new DBusDisconnectedError("The D-Bus connection failed", {
            cause: error,
          }),
        );
      }
    }
    closed = true;
    failAll(new DBusDisconnectedError("The D-Bus connection closed"));
  };

  const dispatch = (message: DBusMessage) => {
    if (message.type === MessageType.signal) {
      for (const l of listeners) l(message);
      return;
    }
    if (message.replySerial === undefined) return;
    const w = waiting.get(message.replySerial);
    if (!w) return;
    waiting.delete(message.replySerial);
    if (message.type === MessageType.error) {
      const text = typeof message.body?.[0] === "string" ? message.body[0] : "";
      w.reject(new DBusError(message.errorName ?? "unknown", text));
    } else {
      w.resolve(message);
    }
  };
  const reading = readLoop();

  return {
    closed: reading,
    async call(call, options = {}) {
      if (closed) {
        throw new DBusDisconnectedError("The D-Bus connection is closed");
      }
      const id = ++serial;
      const bytes = encodeMessage({
        type: MessageType.methodCall,
        serial: id,
        ...call,
      });
      const signal = AbortSignal.any([
        ...(options.signal ? [options.signal] : []),
        AbortSignal.timeout(CALL_TIMEOUT_MS),
      ]);
      const reply = new Promise<DBusMessage>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        signal.addEventListener("abort", () => {
          if (waiting.delete(id)) {
            reject(
              new Error(`D-Bus call ${call.member} timed out or was aborted`),
            );
          }
        }, { once: true });
      });
      writes = writes.then(() => conn.write(bytes)).catch(() => {});
      await writes;
      return (await reply).body ?? [];
    },
    onSignal(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        conn.close();
      } catch {
        // already closed by the peer
      }
      void reading;
    },
  };
}
