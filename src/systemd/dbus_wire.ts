/**
 * The D-Bus wire format (little-endian out, both byte orders in): values marshalled by
 * signature and whole messages (fixed header, header fields, body). Pure: bytes in, bytes out.
 * Covers the basic types, arrays, structs, dict entries and variants. A unix file descriptor
 * (`h`) is its index into the descriptors that travel beside the message (`unixFds` of them);
 * receiving them is up to the transport.
 *
 * Values by type code: `y n q i u h` numbers, `x t` bigints, `d` number, `b` boolean, `s o g`
 * strings, `a` an array of its element's values (a dict `a{kv}` an array of `[k, v]`), `(…)`
 * an array of its fields, `v` a {@linkcode Variant}.
 *
 * @module
 */

/** A variant: a value with its own signature. */
export interface Variant {
  signature: string;
  value: DBusValue;
}

/** A marshallable value; which one depends on the signature (see the module comment). */
export type DBusValue =
  | string
  | number
  | bigint
  | boolean
  | DBusValue[]
  | Variant;

/** Message types of the fixed header. */
export const MessageType = {
  methodCall: 1,
  methodReturn: 2,
  error: 3,
  signal: 4,
} as const;

/** A decoded or to-be-encoded message. */
export interface DBusMessage {
  type: number;
  flags?: number;
  serial: number;
  path?: string;
  interface?: string;
  member?: string;
  errorName?: string;
  replySerial?: number;
  destination?: string;
  sender?: string;
  /** The body's signature ("" without a body). */
  signature?: string;
  /** How many unix file descriptors travel with the message (as ancillary data). */
  unixFds?: number;
  body?: DBusValue[];
}

const FIELD = {
  path: 1,
  interface: 2,
  member: 3,
  errorName: 4,
  replySerial: 5,
  destination: 6,
  sender: 7,
  signature: 8,
  unixFds: 9,
} as const;

const FIELD_TYPE: Record<number, string> = {
  1: "o",
  2: "s",
  3: "s",
  4: "s",
  5: "u",
  6: "s",
  7: "s",
  8: "g",
  9: "u",
};

/** End index (exclusive) of the single complete type starting at `i`. */
function typeEnd(sig: string, i: number): number {
  const c = sig[i];
  if (c === undefined) {
    throw new SyntaxError(`Incomplete D-Bus signature "${sig}"`);
  }
  if (c === "a") return typeEnd(sig, i + 1);
  if (c === "(" || c === "{") {
    const close = c === "(" ? ")" : "}";
    let j = i + 1;
    while (sig[j] !== close) {
      if (j >= sig.length) {
        throw new SyntaxError(`Unbalanced D-Bus signature "${sig}"`);
      }
      j = typeEnd(sig, j);
    }
    return j + 1;
  }
  if (!"ybnqiuxtdsogvh".includes(c)) {
    throw new SyntaxError(`Unknown D-Bus type code "${c}" in "${sig}"`);
  }
  return i + 1;
}

/** Splits a signature into its complete types (`sa(sv)` → `s`, `a(sv)`). */
export function splitSignature(sig: string): string[] {
  const types: string[] = [];
  for (let i = 0; i < sig.length;) {
    const end = typeEnd(sig, i);
    types.push(sig.slice(i, end));
    i = end;
  }
  return types;
}

function alignmentOf(type: string): number {
  switch (type[0]) {
    case "y":
    case "g":
    case "v":
      return 1;
    case "n":
    case "q":
      return 2;
    case "x":
    case "t":
    case "d":
    case "(":
    case "{":
      return 8;
    default:
      return 4;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

class Writer {
  #buf = new Uint8Array(256);
  #view = new DataView(this.#buf.buffer);
  length = 0;

  #room(n: number): void {
    if (this.length + n <= this.#buf.length) return;
    const next = new Uint8Array(
      Math.max(this.#buf.length * 2, this.length + n),
    );
    next.set(this.#buf);
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }
  align(n: number): void {
    const pad = (n - (this.length % n)) % n;
    this.#room(pad);
    this.#buf.fill(0, this.length, this.length + pad);
    this.length += pad;
  }
  u8(v: number): void {
    this.#room(1);
    this.#buf[this.length++] = v;
  }
  u32(v: number): void {
    this.align(4);
    this.#room(4);
    this.#view.setUint32(this.length, v, true);
    this.length += 4;
  }
  patchU32(at: number, v: number): void {
    this.#view.setUint32(at, v, true);
  }
  fixed(type: string, v: DBusValue): void {
    const size = alignmentOf(type);
    this.align(size);
    this.#room(size);
    const at = this.length;
    switch (type) {
      case "n":
        this.#view.setInt16(at, Number(v), true);
        break;
      case "q":
        this.#view.setUint16(at, Number(v), true);
        break;
      case "i":
        this.#view.setInt32(at, Number(v), true);
        break;
      case "u":
        this.#view.setUint32(at, Number(v), true);
        break;
      case "x":
        this.#view.setBigInt64(at, BigInt(v as number | bigint), true);
        break;
      case "t":
        this.#view.setBigUint64(at, BigInt(v as number | bigint), true);
        break;
      case "d":
        this.#view.setFloat64(at, Number(v), true);
        break;
    }
    this.length += size;
  }
  bytes(b: Uint8Array): void {
    this.#room(b.length);
    this.#buf.set(b, this.length);
    this.length += b.length;
  }
  result(): Uint8Array {
    return this.#buf.slice(0, this.length);
  }
}

function writeValue(w: Writer, type: string, value: DBusValue): void {
  const c = type[0];
  switch (c) {
    case "y":
      w.u8(Number(value));
      return;
    case "b":
      w.u32(value ? 1 : 0);
      return;
    case "n":
    case "q":
    case "i":
    case "u":
    case "x":
    case "t":
    case "d":
      w.fixed(type, value);
      return;
    case "h":
      w.fixed("u", value);
      return;
    case "s":
    case "o": {
      const b = encoder.encode(String(value));
      w.u32(b.length);
      w.bytes(b);
      w.u8(0);
      return;
    }
    case "g": {
      const b = encoder.encode(String(value));
      w.u8(b.length);
      w.bytes(b);
      w.u8(0);
      return;
    }
    case "v": {
      const v = value as Variant;
      splitSignature(v.signature); // one complete type, checked before writing
      writeValue(w, "g", v.signature);
      writeValue(w, v.signature, v.value);
      return;
    }
    case "a": {
      const element = type.slice(1);
      w.u32(0);
      const lengthAt = w.length - 4;
      w.align(alignmentOf(element));
      const start = w.length;
      for (const item of value as DBusValue[]) writeValue(w, element, item);
      w.patchU32(lengthAt, w.length - start);
      return;
    }
    case "(":
    case "{": {
      w.align(8);
      const fields = splitSignature(type.slice(1, -1));
      const values = value as DBusValue[];
      fields.forEach((f, i) => writeValue(w, f, values[i] as DBusValue));
      return;
    }
  }
  throw new TypeError(`Cannot marshal D-Bus type "${type}"`);
}

/** Marshals `values` by `signature`, starting at an 8-aligned offset. */
export function marshal(
  signature: string,
  values: readonly DBusValue[],
): Uint8Array {
  const w = new Writer();
  splitSignature(signature).forEach((t, i) => {
    if (i >= values.length) {
      throw new TypeError(
        `Missing value for "${t}" of signature "${signature}"`,
      );
    }
    writeValue(w, t, values[i] as DBusValue);
  });
  return w.result();
}

class Reader {
  pos: number;
  constructor(
    readonly view: DataView,
    readonly little: boolean,
    readonly base: number,
    start: number,
  ) {
    this.pos = start;
  }
  align(n: number): void {
    const rel = this.pos - this.base;
    this.pos += (n - (rel % n)) % n;
  }
  need(n: number): void {
    if (this.pos + n > this.view.byteLength) {
      throw new SyntaxError("Truncated D-Bus message");
    }
  }
  u8(): number {
    this.need(1);
    return this.view.getUint8(this.pos++);
  }
  u32(): number {
    this.align(4);
    this.need(4);
    const v = this.view.getUint32(this.pos, this.little);
    this.pos += 4;
    return v;
  }
  text(n: number): string {
    this.need(n + 1);
    const bytes = new Uint8Array(
      this.view.buffer,
      this.view.byteOffset + this.pos,
      n,
    );
    this.pos += n + 1;
    return decoder.decode(bytes);
  }
}

function readValue(r: Reader, type: string): DBusValue {
  const c = type[0];
  switch (c) {
    case "y":
      return r.u8();
    case "b":
      return r.u32() !== 0;
    case "u":
    case "h":
      return r.u32();
    case "n":
    case "q":
    case "i":
    case "x":
    case "t":
    case "d": {
      const size = alignmentOf(type);
      r.align(size);
      r.need(size);
      const at = r.pos;
      r.pos += size;
      const v = r.view;
      if (c === "n") return v.getInt16(at, r.little);
      if (c === "q") return v.getUint16(at, r.little);
      if (c === "i") return v.getInt32(at, r.little);
      if (c === "x") return v.getBigInt64(at, r.little);
      if (c === "t") return v.getBigUint64(at, r.little);
      return v.getFloat64(at, r.little);
    }
    case "s":
    case "o":
      return r.text(r.u32());
    case "g":
      return r.text(r.u8());
    case "v": {
      const signature = r.text(r.u8());
      return { signature, value: readValue(r, signature) };
    }
    case "a": {
      const element = type.slice(1);
      const length = r.u32();
      r.align(alignmentOf(element));
      const end = r.pos + length;
      const items: DBusValue[] = [];
      while (r.pos < end) items.push(readValue(r, element));
      return items;
    }
    case "(":
    case "{": {
      r.align(8);
      return splitSignature(type.slice(1, -1)).map((f) => readValue(r, f));
    }
  }
  throw new SyntaxError(`Cannot unmarshal D-Bus type "${type}"`);
}

/** Unmarshals values of `signature` from `bytes` (aligned from its start). */
export function unmarshal(
  signature: string,
  bytes: Uint8Array,
  options: { littleEndian?: boolean } = {},
): DBusValue[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new Reader(view, options.littleEndian ?? true, 0, 0);
  return splitSignature(signature).map((t) => readValue(r, t));
}

/** Encodes a whole message (little-endian, protocol version 1). */
export function encodeMessage(message: DBusMessage): Uint8Array {
  const signature = message.signature ?? "";
  const body = signature
    ? marshal(signature, message.body ?? [])
    : new Uint8Array();
  const fields: DBusValue[] = [];
  for (const [name, code] of Object.entries(FIELD)) {
    const value = message[name as keyof typeof FIELD];
    if (value === undefined || value === "") continue;
    fields.push([code, { signature: FIELD_TYPE[code]!, value }]);
  }
  const w = new Writer();
  w.u8(0x6c); // 'l'
  w.u8(message.type);
  w.u8(message.flags ?? 0);
  w.u8(1);
  w.u32(body.length);
  w.u32(message.serial);
  writeValue(w, "a(yv)", fields);
  w.align(8);
  w.bytes(body);
  return w.result();
}

/** Bytes the message at the start of `bytes` needs in all, or undefined before 16 bytes. */
export function messageLength(bytes: Uint8Array): number | undefined {
  if (bytes.length < 16) return undefined;
  const little = bytes[0] === 0x6c;
  const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
  const bodyLength = view.getUint32(4, little);
  const fieldsLength = view.getUint32(12, little);
  const header = 16 + fieldsLength + ((8 - (fieldsLength % 8)) % 8);
  return header + bodyLength;
}

/** Decodes one whole message (as long as {@linkcode messageLength} says). */
export function decodeMessage(bytes: Uint8Array): DBusMessage {
  const little = bytes[0] === 0x6c;
  if (!little && bytes[0] !== 0x42) {
    throw new SyntaxError(`Bad D-Bus byte order mark ${bytes[0]}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new Reader(view, little, 0, 12);
  const message: DBusMessage = {
    type: view.getUint8(1),
    flags: view.getUint8(2),
    serial: view.getUint32(8, little),
  };
  const bodyLength = view.getUint32(4, little);
  const names = Object.fromEntries(
    Object.entries(FIELD).map(([k, v]) => [v, k]),
  ) as Record<number, keyof typeof FIELD>;
  for (const field of readValue(r, "a(yv)") as DBusValue[][]) {
    const name = names[field[0] as number];
    const value = (field[1] as Variant).value;
    if (name === "replySerial" || name === "unixFds") {
      message[name] = value as number;
    } else if (name) message[name] = value as string;
  }
  r.align(8);
  if (bodyLength > 0 && message.signature) {
    const body = new Reader(view, little, r.pos, r.pos);
    message.body = splitSignature(message.signature).map((t) =>
      readValue(body, t)
    );
  }
  return message;
}
