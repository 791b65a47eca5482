/**
 * Opens log files without following a symlink out of their directory (the "log mount"
 * escape: a container with a writable hostPath over the log directory plants a symlink and
 * the kubelet serves the target). Deno has no `O_NOFOLLOW`/`openat`. Container logs: every
 * component below the pod log directory is `lstat`ed and must not be a symlink. The node's
 * log directory (`/logs/`): symlinks are resolved and the result must stay inside. Either
 * way the opened file must be the very inode that was checked (a swap between the check and
 * the open is refused).
 *
 * @module
 */

import { clean, isAbs } from "../../util/posix_path.ts";
import { HttpError } from "../http_error.ts";

/** An open log file and the identity it was opened with. */
export interface OpenedLog {
  file: Deno.FsFile;
  ino: number | null;
  dev: number;
}

function refused(path: string): HttpError {
  return new HttpError(
    403,
    `Forbidden: log file "${path}" is outside the pod log directory or reached through a symlink`,
  );
}

/**
 * Opens `path` for reading when it lies below `root` and no component below `root` is a
 * symlink. @throws {HttpError} 403 for an escape, 404 when the file does not exist.
 */
export async function openLogFile(
  root: string,
  path: string,
): Promise<OpenedLog> {
  if (!isAbs(path) || !isAbs(root)) throw refused(path);
  const base = clean(root);
  const target = clean(path);
  if (!target.startsWith(base.endsWith("/") ? base : `${base}/`)) {
    throw refused(path);
  }
  const parts = target.slice(base.length).split("/").filter(Boolean);
  let at = base;
  let last: Deno.FileInfo | undefined;
  try {
    for (const part of parts) {
      at = `${at === "/" ? "" : at}/${part}`;
      last = await Deno.lstat(at);
      if (last.isSymlink) throw refused(path);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new HttpError(404, `log file "${path}" does not exist`);
    }
    throw error;
  }
  if (!last?.isFile) throw refused(path);
  const file = await Deno.open(target, { read: true });
  const opened = await file.stat();
  if (opened.ino !== last.ino || opened.dev !== last.dev) {
    file.close();
    throw refused(path);
  }
  return { file, ino: opened.ino, dev: opened.dev };
}

/** What {@linkcode resolveBelow} found. */
export interface ResolvedEntry {
  /** The path with every symlink resolved; below the root's real path. */
  realPath: string;
  info: Deno.FileInfo;
}

/**
 * Resolves `path` (already cleaned, below `root`) through its symlinks, as a file server
 * follows them, and refuses a result outside the root's real path: a symlink within the
 * directory is served, one out of it is a 403.
 * @throws {HttpError} 403 for an escape or a denied read, 404 when nothing is there.
 */
export async function resolveBelow(
  root: string,
  path: string,
): Promise<ResolvedEntry> {
  const forbidden = () =>
    new HttpError(
      403,
      `Forbidden: "${path}" is outside the node log directory`,
    );
  let base: string;
  let real: string;
  try {
    base = await Deno.realPath(root);
    real = await Deno.realPath(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new HttpError(404, "404 page not found");
    }
    if (
      error instanceof Deno.errors.PermissionDenied ||
      error instanceof Deno.errors.NotCapable
    ) {
      throw forbidden();
    }
    throw error;
  }
  const prefix = base.endsWith("/") ? base : `${base}/`;
  if (real !== base && !real.startsWith(prefix)) throw forbidden();
  return { realPath: real, info: await Deno.stat(real) };
}

/**
 * Opens a file {@linkcode resolveBelow} found, refusing it when the opened file is not the
 * one resolved (a component swapped for a symlink in between).
 * @throws {HttpError} 403.
 */
export async function openResolved(entry: ResolvedEntry): Promise<Deno.FsFile> {
  const file = await Deno.open(entry.realPath, { read: true });
  const opened = await file.stat();
  if (
    !opened.isFile || opened.ino !== entry.info.ino ||
    opened.dev !== entry.info.dev
  ) {
    file.close();
    throw new HttpError(403, "Forbidden: the file changed while opening it");
  }
  return file;
}
