import assert from "node:assert/strict";
import {
  DEFAULT_KUBELET_ID_RANGE,
  IdSlots,
  type SlotTable,
  slotTable,
} from "./id_slots.ts";

Deno.test("slotTable(): upstream's default range holds 65535 pods from 65536 on", () => {
  assert.deepEqual(slotTable(DEFAULT_KUBELET_ID_RANGE, 65536, 110), {
    offset: 1,
    count: 65535,
    idsPerPod: 65536,
  });
});

Deno.test("slotTable(): upstream's refusals of the kubelet's range", () => {
  const r = (first: number, length: number) => ({ first, length });
  const cases: [() => unknown, string][] = [
    [
      () => slotTable(r(65536, 65536 * 10), 1000, 1),
      "kubelet user namespace length 1000 is not a multiple of 65536",
    ],
    // the default range starts at 65536: any larger per-pod length is refused
    [
      () => slotTable(DEFAULT_KUBELET_ID_RANGE, 131072, 1),
      "kubelet user assigned ID 65536 is not a multiple of 131072",
    ],
    [
      () => slotTable(r(0, 65536 * 10), 65536, 1),
      "kubelet user assigned ID 0 must be greater or equal to 65536",
    ],
    [
      () => slotTable(r(65536, 65536 * 10 + 1), 65536, 1),
      "kubelet user assigned IDs length 655361 is not a multiple of 65536",
    ],
    [
      () => slotTable(r(65536, 65536 * 109), 65536, 110),
      "kubelet user assigned IDs are not enough to support 110 pods",
    ],
  ];
  for (const [call, message] of cases) assert.throws(call, { message });
  // exactly enough is fine
  assert.equal(slotTable(r(65536, 65536 * 110), 65536, 110).count, 110);
});

const TABLE: SlotTable = { offset: 2, count: 3, idsPerPod: 65536 };

Deno.test("IdSlots.allocate(): a random start, then the next free slot, wrapping", () => {
  const starts = [1, 1, 1, 1, 0];
  const slots = new IdSlots(TABLE, (n) => {
    assert.equal(n, 3);
    return starts.shift()!;
  });
  // slot 1 of the table is ID (1 + offset 2) * 65536
  assert.equal(slots.allocate("a"), 3 * 65536);
  assert.equal(slots.allocate("b"), 4 * 65536);
  assert.equal(slots.allocate("c"), 2 * 65536);
  assert.equal(slots.firstIdOf("b"), 4 * 65536);
  assert.throws(() => slots.allocate("d"), {
    message: "could not find an empty slot to allocate a user namespace",
  });
  assert.equal(slots.release("b"), true);
  assert.equal(slots.release("b"), false);
  assert.equal(slots.allocate("d"), 4 * 65536);
  assert.deepEqual(slots.pods().sort(), ["a", "c", "d"]);
});

Deno.test("IdSlots.record(): the file's slot is taken; upstream's refusals", () => {
  const slots = new IdSlots(TABLE, () => 0);
  slots.record("a", 3 * 65536, 65536);
  // the same again is fine (the pod's own file read back)
  slots.record("a", 3 * 65536, 65536);
  const cases: [() => void, string][] = [
    [
      () => slots.record("b", 4 * 65536, 1000),
      "wrong user namespace length 1000",
    ],
    [
      () => slots.record("b", 4 * 65536 + 1, 65536),
      "wrong user namespace offset specified 262145",
    ],
    [
      () => slots.record("a", 4 * 65536, 65536),
      'different user namespace range already used by pod "a"',
    ],
    [() => slots.record("b", 65536, 65536), "id 65536 is out of range"],
    [() => slots.record("b", 5 * 65536, 65536), "id 327680 is out of range"],
    [
      () => slots.record("b", 3 * 65536, 65536),
      'range picked for pod "b" already taken',
    ],
  ];
  for (const [call, message] of cases) assert.throws(call, { message });
  // an allocation never hands out a recorded slot
  assert.equal(slots.allocate("c"), 2 * 65536);
  assert.equal(slots.allocate("d"), 4 * 65536);
});
