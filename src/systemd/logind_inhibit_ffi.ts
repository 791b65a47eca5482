/**
 * logind's `Inhibit` call, whose reply carries the lock as a unix file descriptor (the write end
 * of a FIFO logind watches). Deno's unix sockets cannot receive descriptors (no `recvmsg`
 * ancillary data), so this one call goes over a socket driven through libc by FFI: connect,
 * authenticate with `NEGOTIATE_UNIX_FD`, call, and take the descriptor from the `SCM_RIGHTS`
 * message. The connection is closed at once; the lock lives as long as the descriptor.
 *
 * Needs `--allow-ffi` (so every permission in practice): under the kubelet's planned lists
 * this is unavailable and the caller reports it.
 *
 * @module
 */

import { DBusError } from "./dbus_connection.ts";
import {
  type DBusMessage,
  decodeMessage,
  encodeMessage,
  messageLength,
  MessageType,
} from "./dbus_wire.ts";

/** A held inhibitor lock: releasing it closes the descriptor (idempotent). */
export interface InhibitLock {
  /** The descriptor number (for logs). */
  readonly fd: number;
  release(): void;
}

/** Arguments of logind's `Inhibit(what, who, why, mode)`. */
export interface InhibitRequest {
  what: string;
  who: string;
  why: string;
  mode: "block" | "delay";
}

const AF_UNIX = 1;
const SOCK_STREAM = 1;
const SOCK_CLOEXEC = 0o2000000;
const SOL_SOCKET = 1;
const SO_RCVTIMEO = 20;
const SCM_RIGHTS = 1;
const MSG_CMSG_CLOEXEC = 0x40000000;
/** How long the whole exchange may take. */
const TIMEOUT_S = 25;

const SYMBOLS = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  connect: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  setsockopt: {
    parameters: ["i32", "i32", "i32", "buffer", "u32"],
    result: "i32",
  },
  send: {
    parameters: ["i32", "buffer", "usize", "i32"],
    result: "isize",
    nonblocking: true,
  },
  recvmsg: {
    parameters: ["i32", "buffer", "i32"],
    result: "isize",
    nonblocking: true,
  },
  close: { parameters: ["i32"], result: "i32" },
  getuid: { parameters: [], result: "u32" },
} as const;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

let libc: Libc | undefined;

function openLibc(): Libc {
  libc ??= Deno.dlopen("libc.so.6", SYMBOLS).symbols;
  return libc;
}

/** Whether this process may use FFI (the descriptor needs it). */
export function canReceiveUnixFds(): boolean {
  return Deno.permissions.querySync({ name: "ffi" }).state === "granted";
}

function hex(text: string): string {
  return [...new TextEncoder().encode(text)]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A blocking unix-socket connection through libc that collects received descriptors. */
class FfiSocket {
  readonly fds: number[] = [];
  #buffer: Uint8Array = new Uint8Array();
  constructor(readonly c: Libc, readonly fd: number) {}

  static open(c: Libc, path: string): FfiSocket {
    const fd = c.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw new Error("Cannot create a unix socket for logind");
    const socket = new FfiSocket(c, fd);
    // struct sockaddr_un: sa_family (u16) then the NUL-terminated path
    const address = new Uint8Array(110);
    new DataView(address.buffer).setUint16(0, AF_UNIX, true);
    address.set(new TextEncoder().encode(path), 2);
    if (c.connect(fd, address, address.length) !== 0) {
      socket.close();
      throw new Error(`Cannot connect to the system bus at "${path}"`);
    }
    const timeval = new BigInt64Array([BigInt(TIMEOUT_S), 0n]);
    c.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, timeval, 16);
    return socket;
  }

  async send(bytes: Uint8Array): Promise<void> {
    for (let at = 0; at < bytes.length;) {
      const rest = bytes.slice(at);
      const n = Number(
        await this.c.send(this.fd, rest, BigInt(rest.length), 0),
      );
      if (n <= 0) throw new Error("Cannot write to the system bus");
      at += n;
    }
  }

  /** One `recvmsg`: appends the data, keeps every `SCM_RIGHTS` descriptor. */
  async #receive(): Promise<void> {
    const data = new Uint8Array(64 * 1024);
    const control = new Uint8Array(256);
    const iov = new BigUint64Array([
      BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(data))),
      BigInt(data.length),
    ]);
    // struct msghdr (64-bit): name, namelen+pad, iov, iovlen, control, controllen, flags+pad
    const header = new BigUint64Array([
      0n,
      0n,
      BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(iov))),
      1n,
      BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(control))),
      BigInt(control.length),
      0n,
    ]);
    const n = Number(
      await this.c.recvmsg(this.fd, header, MSG_CMSG_CLOEXEC),
    );
    if (n <= 0) {
      throw new Error(
        n === 0
          ? "The system bus closed the connection"
          : "No answer from the system bus (timed out)",
      );
    }
    this.#buffer = concat(this.#buffer, data.subarray(0, n));
    const controlLength = Number(header[5]);
    const view = new DataView(control.buffer);
    // struct cmsghdr: len (size_t), level (i32), type (i32), data; each padded to 8
    for (let at = 0; at + 16 <= controlLength;) {
      const length = Number(view.getBigUint64(at, true));
      if (length < 16) break;
      const level = view.getInt32(at + 8, true);
      const type = view.getInt32(at + 12, true);
      if (level === SOL_SOCKET && type === SCM_RIGHTS) {
        for (let i = at + 16; i + 4 <= at + length; i += 4) {
          this.fds.push(view.getInt32(i, true));
        }
      }
      at += Math.ceil(length / 8) * 8;
    }
  }

  async readLine(): Promise<string> {
    for (;;) {
      const nl = this.#buffer.indexOf(0x0a);
      if (nl >= 0) {
        const line = new TextDecoder().decode(this.#buffer.subarray(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
        return line.replace(/\r$/, "");
      }
      await this.#receive();
    }
  }

  async readMessage(): Promise<DBusMessage> {
    for (;;) {
      const length = messageLength(this.#buffer);
      if (length !== undefined && this.#buffer.length >= length) {
        const message = decodeMessage(this.#buffer.subarray(0, length));
        this.#buffer = this.#buffer.slice(length);
        return message;
      }
      await this.#receive();
    }
  }

  close(): void {
    this.c.close(this.fd);
  }
}

function lockOf(c: Libc, fd: number): InhibitLock {
  let open = true;
  return {
    fd,
    release() {
      if (!open) return;
      open = false;
      c.close(fd);
    },
  };
}

/**
 * Calls logind's `Inhibit` on the bus at `socket` and returns the lock it hands back. Rejects
 * with {@linkcode DBusError} when logind refuses.
 */
export async function inhibitThroughFfi(
  socket: string,
  request: InhibitRequest,
): Promise<InhibitLock> {
  const c = openLibc();
  const bus = FfiSocket.open(c, socket);
  try {
    await bus.send(
      new TextEncoder().encode(
        `\0AUTH EXTERNAL ${hex(String(c.getuid()))}\r\n`,
      ),
    );
    const ok = await bus.readLine();
    if (!ok.startsWith("OK ")) {
      throw new Error(`D-Bus authentication refused: "${ok}"`);
    }
    await bus.send(new TextEncoder().encode("NEGOTIATE_UNIX_FD\r\n"));
    const agree = await bus.readLine();
    if (agree !== "AGREE_UNIX_FD") {
      throw new Error(
        `The system bus does not pass file descriptors: "${agree}"`,
      );
    }
    const hello = encodeMessage({
      type: MessageType.methodCall,
      serial: 1,
      destination: "org.freedesktop.DBus",
      path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus",
      member: "Hello",
    });
    const inhibit = encodeMessage({
      type: MessageType.methodCall,
      serial: 2,
      destination: "org.freedesktop.login1",
      path: "/org/freedesktop/login1",
      interface: "org.freedesktop.login1.Manager",
      member: "Inhibit",
      signature: "ssss",
      body: [request.what, request.who, request.why, request.mode],
    });
    await bus.send(
      concat(new TextEncoder().encode("BEGIN\r\n"), concat(hello, inhibit)),
    );
    for (;;) {
      const reply = await bus.readMessage();
      if (reply.replySerial !== 2) continue;
      if (reply.type === MessageType.error) {
        const text = typeof reply.body?.[0] === "string" ? reply.body[0] : "";
        throw new DBusError(reply.errorName ?? "unknown", text);
      }
      const index = Number(reply.body?.[0]);
      // only this reply carries descriptors on this connection
      const fd = bus.fds[index];
      if (fd === undefined) {
        throw new Error("logind's Inhibit reply carried no file descriptor");
      }
      // keep the one descriptor that is the lock; close any other
      for (const other of bus.fds) if (other !== fd) c.close(other);
      return lockOf(c, fd);
    }
  } finally {
    bus.close();
  }
}
