/**
 * Container log rotation (upstream pkg/kubelet/logs `containerLogManager`): every
 * `containerLogMonitorInterval` the running containers' CRI log files are checked; one of
 * `containerLogMaxSize` or more is renamed to `<file>.<YYYYMMDD-hhmmss>` and the runtime is told
 * to open a new one (`ReopenContainerLog`). Older rotated files are gzip-compressed and at most
 * `containerLogMaxFiles − 2` of them are kept (the live file and the newest rotation make up
 * the rest). `containerLogMaxWorkers` containers are handled at a time.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { RuntimeService } from "../../runtime/mod.ts";
import { errorMessage } from "../../util/error_message.ts";

const CONTAINER_RUNNING = 1;
const COMPRESS_SUFFIX = ".gz";
const TMP_SUFFIX = ".tmp";

/** Rotation settings from the KubeletConfiguration (already parsed). */
export interface LogRotationPolicy {
  maxSizeBytes: number;
  maxFiles: number;
  maxWorkers: number;
  monitorIntervalMs: number;
}

/** File operations of a rotation. */
export interface RotationFs {
  /** Size in bytes, undefined when the file does not exist. */
  size(path: string): Promise<number | undefined>;
  readDirNames(dir: string): Promise<string[]>;
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
  /** gzip-compresses `from` into `to` (created or truncated). */
  gzip(from: string, to: string): Promise<void>;
}

/** The host file system; gzip through the web `CompressionStream`. */
export const denoRotationFs: RotationFs = {
  async size(path) {
    try {
      return (await Deno.stat(path)).size;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
  },
  async readDirNames(dir) {
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    return names;
  },
  rename: (from, to) => Deno.rename(from, to),
  async remove(path) {
    try {
      await Deno.remove(path, { recursive: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  },
  async gzip(from, to) {
    const source = await Deno.open(from, { read: true });
    const target = await Deno.open(to, {
      write: true,
      create: true,
      truncate: true,
      mode: 0o644,
    });
    await source.readable.pipeThrough(new CompressionStream("gzip")).pipeTo(
      target.writable,
    );
  },
};

/** Upstream `isInUse`: temporary files never are, an uncompressed file with a `.gz` twin is not. */
export function splitUnusedLogs(
  paths: readonly string[],
): { inUse: string[]; unused: string[] } {
  const inUse: string[] = [];
  const unused: string[] = [];
  const all = new Set(paths);
  for (const p of paths) {
    const used = !p.endsWith(TMP_SUFFIX) &&
      (p.endsWith(COMPRESS_SUFFIX) || !all.has(p + COMPRESS_SUFFIX));
    (used ? inUse : unused).push(p);
  }
  return { inUse, unused };
}

/** Upstream `removeExcessLogs`: the oldest go until `maxFiles − 2` rotated files are left. */
export function excessLogs(
  paths: readonly string[],
  maxFiles: number,
): { remove: string[]; keep: string[] } {
  const sorted = [...paths].sort();
  const keepCount = Math.max(0, maxFiles - 2);
  const cut = Math.max(0, sorted.length - keepCount);
  return { remove: sorted.slice(0, cut), keep: sorted.slice(cut) };
}

/** Go's `20060102-150405` layout in local time, the rotated file's suffix. */
export function rotationTimestamp(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}${two(d.getMonth() + 1)}${two(d.getDate())}-${
    two(d.getHours())
  }${two(d.getMinutes())}${two(d.getSeconds())}`;
}

/** Dependencies of {@linkcode ContainerLogManager}. */
export interface LogManagerDeps {
  runtime: Pick<
    RuntimeService,
    "listContainers" | "containerStatus" | "reopenContainerLog"
  >;
  clock: Clock;
  logger: Logger;
  fs?: RotationFs;
  /** Told after a rotation, so a hard log link can show the new file (container_log_links.ts). */
  onRotated?: (rotation: {
    containerId: string;
    logPath: string;
    labels: Readonly<Record<string, string>>;
  }) => Promise<void>;
}

interface ContainerLogInfo {
  logPath: string;
  labels: Readonly<Record<string, string>>;
}

/** Rotates container logs on a timer; see the module comment. */
export class ContainerLogManager {
  #deps: LogManagerDeps;
  #policy: LogRotationPolicy;
  #fs: RotationFs;
  /**
   * Log path and labels per running container, as its first status gave them. Both are set
   * when the runtime creates a container and never change, so a pass asks only about
   * containers it has not seen (upstream asks about every one, every pass: 11 calls/s at
   * 110 pods for nothing).
   */
  #known = new Map<string, ContainerLogInfo>();

  constructor(deps: LogManagerDeps, policy: LogRotationPolicy) {
    this.#deps = deps;
    this.#policy = policy;
    this.#fs = deps.fs ?? denoRotationFs;
  }

  /** Runs rotation passes every monitor interval until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.rotateLogs(signal).catch((error) => {
        if (signal.aborted) return;
        this.#deps.logger.warn("Failed to rotate container logs", {
          err: errorMessage(error),
        });
      });
      await this.#deps.clock.sleep(this.#policy.monitorIntervalMs, signal)
        .catch(() => {});
    }
  }

  /** One pass over the running containers (upstream `rotateLogs`). */
  async rotateLogs(signal?: AbortSignal): Promise<void> {
    const call = signal ? { signal } : {};
    const { containers } = await this.#deps.runtime.listContainers({}, call);
    const queue = containers.filter((c) => c.state === CONTAINER_RUNNING).map(
      (c) => c.id,
    );
    const running = new Set(queue);
    for (const id of this.#known.keys()) {
      if (!running.has(id)) this.#known.delete(id);
    }
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        await this.#processContainer(id, signal).catch((error) => {
          this.#deps.logger.warn("Failed to rotate log for container", {
            containerID: id,
            err: errorMessage(error),
          });
        });
      }
    };
    await Promise.all(
      Array.from({ length: Math.max(1, this.#policy.maxWorkers) }, worker),
    );
  }

  async #processContainer(id: string, signal?: AbortSignal): Promise<void> {
    const { runtime } = this.#deps;
    const call = signal ? { signal } : {};
    let info = this.#known.get(id);
    if (!info) {
      const { status } = await runtime.containerStatus(
        { containerId: id },
        call,
      );
      info = { logPath: status?.logPath ?? "", labels: status?.labels ?? {} };
      this.#known.set(id, info);
    }
    const path = info.logPath;
    if (!path) return;
    let size = await this.#fs.size(path);
    if (size === undefined) {
      // a rotation whose reopen failed may have lost the live file: ask for it again
      await runtime.reopenContainerLog({ containerId: id }, call);
      size = await this.#fs.size(path);
      if (size === undefined) return;
    }
    if (size < this.#policy.maxSizeBytes) return;
    await this.#rotate(id, path, signal);
    await this.#deps.onRotated?.({
      containerId: id,
      logPath: path,
      labels: info.labels,
    });
  }

  /** Upstream `rotateLog`: tidy the rotated files, compress them, rotate the live one. */
  async #rotate(id: string, path: string, signal?: AbortSignal): Promise<void> {
    const slash = path.lastIndexOf("/");
    const dir = path.slice(0, slash);
    const base = path.slice(slash + 1);
    const rotated = (await this.#fs.readDirNames(dir))
      .filter((n) => n.startsWith(`${base}.`))
      .map((n) => `${dir}/${n}`);
    const { inUse, unused } = splitUnusedLogs(rotated);
    for (const p of unused) await this.#fs.remove(p);
    const { remove, keep } = excessLogs(inUse, this.#policy.maxFiles);
    for (const p of remove) await this.#fs.remove(p);
    for (const p of keep) {
      if (p.endsWith(COMPRESS_SUFFIX)) continue;
      const tmp = p + TMP_SUFFIX;
      try {
        await this.#fs.gzip(p, tmp);
        await this.#fs.rename(tmp, p + COMPRESS_SUFFIX);
        await this.#fs.remove(p);
      } catch (error) {
        await this.#fs.remove(tmp);
        throw error;
      }
    }
    const target = `${path}.${rotationTimestamp(this.#deps.clock.now())}`;
    await this.#fs.rename(path, target);
    try {
      await this.#deps.runtime.reopenContainerLog(
        { containerId: id },
        signal ? { signal } : {},
      );
    } catch (error) {
      // put the file back so the next pass can try again
      await this.#fs.rename(target, path).catch(() => {});
      throw new Error(
        `failed to reopen container log "${id}": ${errorMessage(error)}`,
        { cause: error },
      );
    }
  }
}
