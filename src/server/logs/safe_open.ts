/**
 * Opens a container log file without following a symlink out of the pod log directory (the
 * "log mount" escape: a container with a writable hostPath over the log directory plants a
 * symlink and the kubelet serves the target). Deno has no `O_NOFOLLOW`/`openat`, so every
 * component below the root is `lstat`ed and must not be a symlink, and the opened file must
 * be the very inode `lstat` saw (a swap between the check and the open is refused).
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
