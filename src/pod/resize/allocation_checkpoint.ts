/**
 * The allocation checkpoints of in-place resize, in upstream's file format so that a binary
 * swap keeps them both ways: `<rootDir>/allocated_pods_state` (what the node granted each
 * container) and `<rootDir>/actuated_pods_state` (what the kubelet last applied to it). Each
 * file is `{"data":"<json>","checksum":N}` where the data is
 * `{"entries":{"<uid>":{"ContainerResources":{"<name>":{limits,requests}}}}}` and the checksum
 * is FNV-1a 32 over Go's deep-hash printing of that string (`(string)` then its bytes).
 *
 * @module
 */

import type { ResourceRequirements } from "../types.ts";
import { fnv32a } from "../containers/container_hash.ts";

/** Per pod uid, per container name: the resources recorded for it. */
export type PodAllocations = Map<string, Map<string, ResourceRequirements>>;

/** Upstream's checkpoint names (`allocatedPodsStateFile`, `actuatedPodsStateFile`). */
export const ALLOCATED_PODS_STATE = "allocated_pods_state";
export const ACTUATED_PODS_STATE = "actuated_pods_state";

const ENCODER = new TextEncoder();

/** Upstream `checksum.New` over the data string. */
export function checkpointChecksum(data: string): number {
  return fnv32a(ENCODER.encode(`(string)${data}`));
}

/** Sorted keys, as Go's encoding/json writes maps. */
function sortedRecord<T>(entries: Iterable<[string, T]>): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => a < b ? -1 : 1));
}

function resourcesJson(r: ResourceRequirements): ResourceRequirements {
  const out: ResourceRequirements = {};
  for (const kind of ["limits", "requests"] as const) {
    const list = r[kind];
    if (list && Object.keys(list).length) {
      out[kind] = sortedRecord(
        Object.entries(list).map(([k, v]) => [k, String(v)]),
      );
    }
  }
  return out;
}

/** The checkpoint file's text for `allocations`. */
export function encodeCheckpoint(allocations: PodAllocations): string {
  const entries = sortedRecord(
    [...allocations].map(([uid, containers]) => [uid, {
      ContainerResources: sortedRecord(
        [...containers].map(([name, r]) => [name, resourcesJson(r)]),
      ),
    }]),
  );
  const data = JSON.stringify(
    Object.keys(entries).length ? { entries } : {},
  );
  return JSON.stringify({ data, checksum: checkpointChecksum(data) });
}

/**
 * Parses a checkpoint file's text; throws a TypeError naming `file` when it is not one or its
 * checksum does not match (upstream then refuses to start; the caller decides).
 */
export function decodeCheckpoint(text: string, file: string): PodAllocations {
  let outer: unknown;
  try {
    outer = JSON.parse(text);
  } catch (cause) {
    throw new TypeError(`${file}: not a JSON checkpoint`, { cause });
  }
  const o = outer as { data?: unknown; checksum?: unknown };
  if (typeof o?.data !== "string" || typeof o.checksum !== "number") {
    throw new TypeError(
      `${file}: expected {"data": "...", "checksum": N}; remove the file to start afresh`,
    );
  }
  if (checkpointChecksum(o.data) !== o.checksum) {
    throw new TypeError(
      `${file}: checksum mismatch (corrupt checkpoint); remove the file to start afresh`,
    );
  }
  const inner = JSON.parse(o.data) as {
    entries?: Record<
      string,
      { ContainerResources?: Record<string, ResourceRequirements> }
    >;
  };
  const out: PodAllocations = new Map();
  for (const [uid, info] of Object.entries(inner.entries ?? {})) {
    out.set(uid, new Map(Object.entries(info.ContainerResources ?? {})));
  }
  return out;
}

/** Where the checkpoints live and how they are read and written. */
export interface CheckpointFiles {
  /** The file's text, or undefined when it does not exist. */
  read(name: string): Promise<string | undefined>;
  /** Replaces the file (written aside, then renamed). */
  write(name: string, text: string): Promise<void>;
}

/** Checkpoint files in `dir` (the kubelet's root dir) on the host file system. */
export function dirCheckpointFiles(dir: string): CheckpointFiles {
  // one write per file at a time: two at once would share the temporary file, and the
  // second rename would find it gone
  const writing = new Map<string, Promise<void>>();
  const writeNow = async (name: string, text: string) => {
    const tmp = `${dir}/.${name}.tmp`;
    await Deno.writeTextFile(tmp, text, { mode: 0o600 });
    await Deno.rename(tmp, `${dir}/${name}`);
  };
  return {
    async read(name) {
      try {
        return await Deno.readTextFile(`${dir}/${name}`);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return undefined;
        throw error;
      }
    },
    write(name, text) {
      const next = (writing.get(name) ?? Promise.resolve())
        .catch(() => {})
        .then(() => writeNow(name, text));
      writing.set(name, next);
      return next;
    },
  };
}
