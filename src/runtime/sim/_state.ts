/** State records of the simulated runtime and the lookups containerd does on them. */

import { NotFoundError, RuntimeError } from "../errors.ts";
import type { SimContainerBehavior } from "./scenario.ts";

/** A pod sandbox as the sim keeps it. */
export interface SimSandbox {
  id: string;
  /** Reserved name `<pod>_<ns>_<uid>_<attempt>`. */
  name: string;
  metadata: { name: string; uid: string; namespace: string; attempt: number };
  state: "ready" | "notready";
  createdAt: number;
  ip: string;
  hostNetwork: boolean;
  hostname: string;
  logDirectory: string;
  runtimeHandler: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A container as the sim keeps it. */
export interface SimContainer {
  id: string;
  sandboxId: string;
  /** Reserved name `<container>_<pod>_<ns>_<uid>_<attempt>`. */
  name: string;
  metadata: { name: string; attempt: number };
  image: string;
  imageRef: string;
  command: string[];
  state: "created" | "running" | "exited";
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  /** When a running container exits by itself (ms epoch); Infinity = never. */
  exitAt: number;
  plannedExitCode: number;
  /** Whether SIGTERM is ignored (stop waits the timeout, then SIGKILL). */
  ignoreSigterm: boolean;
  /** Exit code when SIGTERM ends the process. */
  sigtermExitCode: number;
  behavior: SimContainerBehavior;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  logPath: string;
  log: string[];
  mounts: { containerPath: string; hostPath: string; readonly: boolean }[];
  resources: {
    cpuShares: bigint;
    cpuQuota: bigint;
    cpuPeriod: bigint;
    memoryLimitInBytes: bigint;
  } | undefined;
}

/** A random 64-hex-digit id like containerd's. */
export function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Milliseconds (epoch) to CRI nanoseconds. */
export function toNanos(ms: number): bigint {
  return BigInt(Math.round(ms)) * 1_000_000n;
}

/**
 * Finds by full id or unique id prefix, like containerd's truncindex.
 * @throws NotFoundError when nothing matches; RuntimeError (Unknown) on an
 * empty or ambiguous id
 */
export function lookup<T>(
  map: Map<string, T>,
  id: string | undefined,
  kind: "sandbox" | "container",
): T {
  if (!id) {
    throw new RuntimeError(
      2,
      `an error occurred when try to find ${kind} "": Prefix can't be empty`,
    );
  }
  const exact = map.get(id);
  if (exact) return exact;
  let found: T | undefined;
  let count = 0;
  for (const [key, value] of map) {
    if (key.startsWith(id)) {
      found = value;
      count++;
    }
  }
  if (count > 1) {
    throw new RuntimeError(2, `${kind} id prefix "${id}" is ambiguous`);
  }
  if (!found) {
    const what = kind === "sandbox" ? "sandbox" : "container";
    throw new NotFoundError(
      `an error occurred when try to find ${what} "${id}": not found`,
    );
  }
  return found;
}

/** Like {@linkcode lookup} but `undefined` instead of NotFound. */
export function find<T>(
  map: Map<string, T>,
  id: string | undefined,
  kind: "sandbox" | "container",
): T | undefined {
  try {
    return lookup(map, id, kind);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** True when every selector pair is present in `labels`. */
export function labelsMatch(
  labels: Record<string, string>,
  selector: Record<string, string> | undefined,
): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector)) {
    if (labels[key] !== value) return false;
  }
  return true;
}

/** Go `time.RFC3339Nano`-style timestamp for a CRI log line. */
export function logTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-01-01T00:00:00.123Z
  return `${iso.slice(0, 23)}000000Z`;
}

/** Appends text as CRI log lines (`<ts> <stream> F <line>`). */
export function appendLog(
  log: string[],
  ms: number,
  stream: "stdout" | "stderr",
  text: string,
): void {
  if (!text) return;
  const lines = text.endsWith("\n")
    ? text.slice(0, -1).split("\n")
    : text.split("\n");
  for (const line of lines) log.push(`${logTimestamp(ms)} ${stream} F ${line}`);
}
