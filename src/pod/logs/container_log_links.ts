/**
 * The legacy container log links log shippers read (upstream kuberuntime `legacyLogSymlink`):
 * `/var/log/containers/<pod>_<namespace>_<container>-<containerID>.log` → the CRI log file
 * `<podLogsDir>/<ns>_<pod>_<uid>/<container>/<N>.log`. Made after the container starts (only
 * when its log file exists), removed with the container, and stale ones (their log file gone,
 * their container not running) removed by container GC.
 *
 * Deno creates symbolic links only with unscoped read and write permission. Under the planned,
 * path-scoped lists the link is a hard link instead (`Deno.link` is scoped to both paths): it
 * shows the same file and content; the log rotation links the new file again after each
 * rotation, so a link always shows the live log. docs/permissions.md gives the reasoning.
 *
 * @module
 */

import type { Logger } from "../../log/mod.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Upstream's legacy container log directory. */
export const CONTAINER_LOGS_DIR = "/var/log/containers";
const LOG_SUFFIX = ".log";
/** ext4's longest file name. */
const MAX_FILE_NAME = 255;

/**
 * The link path for a container (upstream `logSymlink`): the name, without `.log`, is cut to
 * 255 − 4 characters.
 */
export function legacyLogLinkPath(
  dir: string,
  ref: {
    podName: string;
    podNamespace: string;
    containerName: string;
    containerId: string;
  },
): string {
  let name =
    `${ref.podName}_${ref.podNamespace}_${ref.containerName}-${ref.containerId}`;
  name = name.slice(0, MAX_FILE_NAME - LOG_SUFFIX.length);
  return `${dir.replace(/\/+$/, "")}/${name}${LOG_SUFFIX}`;
}

/** The container ID a link name ends with (upstream `getContainerIDFromLegacyLogSymlink`). */
export function containerIdFromLinkName(name: string): string | undefined {
  if (!name.endsWith(LOG_SUFFIX)) return undefined;
  const stem = name.slice(0, -LOG_SUFFIX.length);
  const dash = stem.lastIndexOf("-");
  if (dash < 0) return undefined;
  const id = stem.slice(dash + 1);
  return id === "" ? undefined : id;
}

/** How a link is made and inspected. */
export interface LogLinkFs {
  /** "symlink" with unscoped read and write permission, else "hardlink". */
  readonly kind: "symlink" | "hardlink";
  exists(path: string): Promise<boolean>;
  /** Replaces whatever is at `path` with a link to `target`. */
  link(target: string, path: string): Promise<void>;
  /** Removes `path`; a missing path is not an error. */
  remove(path: string): Promise<void>;
  readDirNames(dir: string): Promise<string[]>;
  /** True when the link no longer shows a live log file (dangling symlink, last hard link). */
  isStale(path: string): Promise<boolean>;
  mkdir(dir: string): Promise<void>;
}

function unscopedGranted(name: "read" | "write"): boolean {
  return Deno.permissions.querySync({ name }).state === "granted";
}

async function removeQuiet(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * The host's links: symbolic ones when Deno allows them, hard links otherwise (`kind` forces
 * one, for tests).
 */
export function denoLogLinkFs(
  options: { kind?: "symlink" | "hardlink" } = {},
): LogLinkFs {
  const kind = options.kind ??
    (unscopedGranted("read") && unscopedGranted("write")
      ? "symlink"
      : "hardlink");
  return {
    kind,
    async exists(path) {
      try {
        await Deno.lstat(path);
        return true;
      } catch {
        return false;
      }
    },
    async link(target, path) {
      // made beside it and renamed over it, so a reader never finds the link missing; the dot
      // name still ends in .log, so the stale-link sweep removes one a crash leaves behind
      const slash = path.lastIndexOf("/");
      const temp = `${path.slice(0, slash + 1)}.new-${path.slice(slash + 1)}`;
      await removeQuiet(temp);
      if (kind === "symlink") await Deno.symlink(target, temp);
      else await Deno.link(target, temp);
      await Deno.rename(temp, path);
      // rename(2) leaves both names when they already are one file
      await removeQuiet(temp);
    },
    remove: removeQuiet,
    async readDirNames(dir) {
      const names: string[] = [];
      try {
        for await (const e of Deno.readDir(dir)) names.push(e.name);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      return names;
    },
    async isStale(path) {
      const info = await Deno.lstat(path);
      if (info.isSymlink) {
        try {
          await Deno.stat(path);
          return false;
        } catch (error) {
          return error instanceof Deno.errors.NotFound;
        }
      }
      // a hard link whose pod log file was removed is the file's only name left
      return info.isFile && info.nlink === 1;
    },
    async mkdir(dir) {
      await Deno.mkdir(dir, { recursive: true, mode: 0o755 });
    },
  };
}

/** Identity of a container for its link. */
export interface LogLinkRef {
  podName: string;
  podNamespace: string;
  containerName: string;
  containerId: string;
}

/** Makes, refreshes and removes container log links. */
export class ContainerLogLinks {
  readonly dir: string;
  #fs: LogLinkFs;
  #logger: Logger;
  #ready: Promise<void> | undefined;

  constructor(
    deps: { fs: LogLinkFs; logger: Logger },
    options: { dir?: string } = {},
  ) {
    this.#fs = deps.fs;
    this.#logger = deps.logger;
    this.dir = options.dir ?? CONTAINER_LOGS_DIR;
  }

  /** What links are made of on this host. */
  get kind(): "symlink" | "hardlink" {
    return this.#fs.kind;
  }

  /**
   * Links the container's log file after it started (upstream: only when the file exists, so
   * no dangling link is made). Failures are logged, never thrown, as upstream.
   */
  async link(ref: LogLinkRef, logFile: string): Promise<void> {
    const path = legacyLogLinkPath(this.dir, ref);
    try {
      this.#ready ??= this.#fs.mkdir(this.dir);
      await this.#ready;
      if (!await this.#fs.exists(logFile)) return;
      await this.#fs.link(logFile, path);
    } catch (error) {
      this.#ready = undefined;
      this.#logger.warn("Failed to create legacy container log link", {
        path,
        containerID: ref.containerId,
        containerLogPath: logFile,
        err: errorMessage(error),
      });
    }
  }

  /** Removes the container's link (with the container). */
  async remove(ref: LogLinkRef): Promise<void> {
    await this.#fs.remove(legacyLogLinkPath(this.dir, ref));
  }

  /**
   * Upstream's dead-link sweep: every `*.log` here whose log file is gone is removed, unless
   * `isRunning` says its container still runs.
   * @returns how many links were removed
   */
  async removeStale(
    isRunning: (containerId: string) => Promise<boolean>,
  ): Promise<number> {
    let removed = 0;
    for (const name of await this.#fs.readDirNames(this.dir)) {
      if (!name.endsWith(LOG_SUFFIX)) continue;
      const path = `${this.dir}/${name}`;
      try {
        if (!await this.#fs.isStale(path)) continue;
        const id = containerIdFromLinkName(name);
        if (id && await isRunning(id)) continue;
        await this.#fs.remove(path);
        removed++;
      } catch (error) {
        this.#logger.warn("Failed to remove a dead container log link", {
          path,
          err: errorMessage(error),
        });
      }
    }
    return removed;
  }
}
