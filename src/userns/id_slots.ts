/**
 * Which ID range each pod's user namespace gets (upstream `MakeUserNsManager`, `allocateOne`,
 * `record`, `releaseWithLock`): the kubelet's IDs are cut into slots of `idsPerPod` IDs; a
 * pod takes a free slot picked as upstream's allocation bitmap picks one (a random start, then
 * the next free slot after it), or the slot its mappings file names. Pure state, no I/O.
 * @module
 */

/** Upstream's unit: every per-pod range is a multiple of it. */
export const IDS_PER_POD_UNIT = 65536;

/** The IDs the kubelet hands out, first ID and count. */
export interface KubeletIdRange {
  first: number;
  length: number;
}

/**
 * Upstream's default when the kubelet user has no subordinate IDs: every ID from 65536 up
 * (IDs below stay with the host).
 */
export const DEFAULT_KUBELET_ID_RANGE: KubeletIdRange = {
  first: 65536,
  length: 2 ** 32 - 65536,
};

/** Slots: the first slot's index (first ID / idsPerPod) and how many there are. */
export interface SlotTable {
  offset: number;
  count: number;
  idsPerPod: number;
}

/**
 * The slot table, with upstream's checks of the kubelet's range.
 * @throws {Error} with upstream's text when the range cannot hold `maxPods` aligned slots.
 */
export function slotTable(
  range: KubeletIdRange,
  idsPerPod: number,
  maxPods: number,
): SlotTable {
  if (idsPerPod % IDS_PER_POD_UNIT !== 0) {
    throw new Error(
      `kubelet user namespace length ${idsPerPod} is not a multiple of ${IDS_PER_POD_UNIT}`,
    );
  }
  if (range.first % idsPerPod !== 0) {
    throw new Error(
      `kubelet user assigned ID ${range.first} is not a multiple of ${idsPerPod}`,
    );
  }
  // mapping host ID 0 into a pod would undo the isolation
  if (range.first < idsPerPod) {
    throw new Error(
      `kubelet user assigned ID ${range.first} must be greater or equal to ${idsPerPod}`,
    );
  }
  if (range.length % idsPerPod !== 0) {
    throw new Error(
      `kubelet user assigned IDs length ${range.length} is not a multiple of ${idsPerPod}`,
    );
  }
  if (Math.floor(range.length / idsPerPod) < maxPods) {
    throw new Error(
      `kubelet user assigned IDs are not enough to support ${maxPods} pods`,
    );
  }
  return {
    offset: range.first / idsPerPod,
    count: range.length / idsPerPod,
    idsPerPod,
  };
}

/** The pods' slots. `random(n)` returns an integer in [0, n). */
export class IdSlots {
  readonly #table: SlotTable;
  readonly #random: (n: number) => number;
  readonly #used = new Set<number>();
  readonly #byPod = new Map<string, number>();

  constructor(table: SlotTable, random: (n: number) => number) {
    this.#table = table;
    this.#random = random;
  }

  /** The first host ID of the pod's range, if it has one. */
  firstIdOf(podUid: string): number | undefined {
    return this.#byPod.get(podUid);
  }

  /** The pods holding a range. */
  pods(): string[] {
    return [...this.#byPod.keys()];
  }

  /**
   * A free slot for the pod; returns its first host ID.
   * @throws {Error} with upstream's text when every slot is taken.
   */
  allocate(podUid: string): number {
    const { count, offset, idsPerPod } = this.#table;
    if (this.#used.size < count) {
      const start = this.#random(count);
      for (let i = 0; i < count; i++) {
        const slot = (start + i) % count;
        if (this.#used.has(slot)) continue;
        this.#used.add(slot);
        const first = (slot + offset) * idsPerPod;
        this.#byPod.set(podUid, first);
        return first;
      }
    }
    throw new Error(
      "could not find an empty slot to allocate a user namespace",
    );
  }

  /**
   * Takes the slot a pod's mappings file names (upstream `record`); a pod already holding
   * that slot keeps it.
   * @throws {Error} with upstream's text for a wrong length or offset, a slot outside the
   * kubelet's range, a pod that holds another slot, or a slot another pod holds.
   */
  record(podUid: string, from: number, length: number): void {
    const { offset, count, idsPerPod } = this.#table;
    if (length !== idsPerPod) {
      throw new Error(`wrong user namespace length ${length}`);
    }
    if (from % idsPerPod !== 0) {
      throw new Error(`wrong user namespace offset specified ${from}`);
    }
    const held = this.#byPod.get(podUid);
    if (held !== undefined && held !== from) {
      throw new Error(
        `different user namespace range already used by pod "${podUid}"`,
      );
    }
    const slot = from / idsPerPod - offset;
    if (slot < 0 || slot >= count) {
      throw new Error(`id ${from} is out of range`);
    }
    if (held === undefined && this.#used.has(slot)) {
      throw new Error(`range picked for pod "${podUid}" already taken`);
    }
    this.#used.add(slot);
    this.#byPod.set(podUid, from);
  }

  /** Frees the pod's slot; false when it held none. */
  release(podUid: string): boolean {
    const first = this.#byPod.get(podUid);
    if (first === undefined) return false;
    this.#byPod.delete(podUid);
    this.#used.delete(first / this.#table.idsPerPod - this.#table.offset);
    return true;
  }
}
