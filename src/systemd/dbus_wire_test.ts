import { deepStrictEqual, throws } from "node:assert/strict";
import {
  decodeMessage,
  encodeMessage,
  marshal,
  messageLength,
  MessageType,
  splitSignature,
  unmarshal,
} from "./dbus_wire.ts";

Deno.test("marshal() writes a string as length, bytes and a NUL", () => {
  deepStrictEqual([...marshal("s", ["ab"])], [2, 0, 0, 0, 0x61, 0x62, 0]);
});

Deno.test("marshal() pads an array to its element's alignment, not counted in its length", () => {
  // byte, 3 pad, length 8, (already 8-aligned) one uint64
  deepStrictEqual(
    [...marshal("yat", [1, [5n]])],
    [1, 0, 0, 0, 8, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0],
  );
  // an empty array of uint64 still pads to 8 after its length
  deepStrictEqual([...marshal("yat", [1, []])], [1, 0, 0, 0, 0, 0, 0, 0]);
});

Deno.test("marshal() aligns structs to 8 and writes a variant's signature first", () => {
  deepStrictEqual(
    [...marshal("ya(sv)", [7, [["a", { signature: "b", value: true }]]])],
    [
      7,
      0,
      0,
      0,
      16,
      0,
      0,
      0, // byte, pad, array length 16
      1,
      0,
      0,
      0,
      0x61,
      0, // "a"
      1,
      0x62,
      0, // signature "b"
      0,
      0,
      0, // pad to 4
      1,
      0,
      0,
      0, // true
    ],
  );
});

Deno.test("unmarshal() reads back what marshal() wrote", () => {
  const sig = "ssa(sv)a(sa(sv))bu";
  const values = [
    "kubepods.slice",
    "replace",
    [
      ["Wants", { signature: "as", value: ["-.slice"] }],
      ["MemoryMax", { signature: "t", value: 18446744073709551615n }],
      ["CPUWeight", { signature: "t", value: 39n }],
    ],
    [],
    false,
    4294967295,
  ];
  deepStrictEqual(unmarshal(sig, marshal(sig, values)), values);
});

Deno.test("splitSignature() splits complete types and rejects broken ones", () => {
  deepStrictEqual(splitSignature("sa(sv)a{sv}t"), ["s", "a(sv)", "a{sv}", "t"]);
  throws(() => splitSignature("a(sv"), /Unbalanced D-Bus signature "a\(sv"/);
  throws(() => splitSignature("z"), /Unknown D-Bus type code "z"/);
  throws(() => splitSignature("a"), /Incomplete D-Bus signature "a"/);
});

Deno.test("encodeMessage() and decodeMessage() keep the header fields and body", () => {
  const bytes = encodeMessage({
    type: MessageType.methodCall,
    serial: 3,
    destination: "org.freedesktop.systemd1",
    path: "/org/freedesktop/systemd1",
    interface: "org.freedesktop.systemd1.Manager",
    member: "StopUnit",
    signature: "ss",
    body: ["kubepods.slice", "replace"],
  });
  deepStrictEqual(messageLength(bytes), bytes.length);
  deepStrictEqual(messageLength(bytes.subarray(0, 15)), undefined);
  deepStrictEqual(decodeMessage(bytes), {
    type: MessageType.methodCall,
    flags: 0,
    serial: 3,
    destination: "org.freedesktop.systemd1",
    path: "/org/freedesktop/systemd1",
    interface: "org.freedesktop.systemd1.Manager",
    member: "StopUnit",
    signature: "ss",
    body: ["kubepods.slice", "replace"],
  });
});

Deno.test("decodeMessage() reads a big-endian reply", () => {
  // 'B', method return, no flags, v1, body 4 bytes, serial 9, fields (15 bytes): reply serial 3, sig "u"
  const bytes = new Uint8Array([
    0x42,
    2,
    0,
    1,
    0,
    0,
    0,
    4,
    0,
    0,
    0,
    9,
    0,
    0,
    0,
    0x0f,
    5,
    1,
    0x75,
    0,
    0,
    0,
    0,
    3, // (5, v "u" 3)
    8,
    1,
    0x67,
    0,
    1,
    0x75,
    0,
    0, // (8, v "g" "u")
    0,
    0,
    1,
    0, // body: uint32 256
  ]);
  const m = decodeMessage(bytes);
  deepStrictEqual([m.type, m.serial, m.replySerial, m.body], [2, 9, 3, [256]]);
});

Deno.test("decodeMessage() reads a reply carrying a unix fd: its index and the fd count", () => {
  const bytes = encodeMessage({
    type: MessageType.methodReturn,
    serial: 9,
    replySerial: 2,
    signature: "h",
    body: [0],
    unixFds: 1,
  });
  const message = decodeMessage(bytes);
  deepStrictEqual(message.unixFds, 1);
  deepStrictEqual(message.replySerial, 2);
  deepStrictEqual(message.body, [0]);
  deepStrictEqual([...marshal("h", [3])], [3, 0, 0, 0]);
});
