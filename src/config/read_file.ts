/**
 * Reading config files with Go-like error texts and a size bound.
 * @module
 */
import { errorMessage } from "../util/error_message.ts";

/** Config files larger than this are rejected before reading. */
export const MAX_CONFIG_FILE_BYTES = 10 * 1024 * 1024;

/** Go's `*PathError` text for a Deno file-system error. */
export function goPathError(op: string, path: string, err: unknown): string {
  if (err instanceof Deno.errors.NotFound) {
    return `${op} ${path}: no such file or directory`;
  }
  if (err instanceof Deno.errors.PermissionDenied) {
    return `${op} ${path}: permission denied`;
  }
  if (err instanceof Deno.errors.NotCapable) {
    return `${op} ${path}: permission denied (the Deno sandbox does not allow reading this path; grant it with --allow-read)`;
  }
  if (err instanceof Deno.errors.NotADirectory) {
    return `${op} ${path}: not a directory`;
  }
  if (err instanceof Deno.errors.IsADirectory) {
    return `read ${path}: is a directory`;
  }
  return `${op} ${path}: ${errorMessage(err)}`;
}

/**
 * Reads a UTF-8 text file of at most MAX_CONFIG_FILE_BYTES. Throws Error
 * with Go-like text (`open /x: no such file or directory`).
 */
export async function readBoundedTextFile(path: string): Promise<string> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (err) {
    throw new Error(goPathError("open", path, err), { cause: err });
  }
  if (info.isDirectory) {
    throw new Error(`read ${path}: is a directory`);
  }
  if (info.size > MAX_CONFIG_FILE_BYTES) {
    throw new Error(
      `file is ${info.size} bytes, larger than the 10 MiB limit for kubelet config files; shrink the file`,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (err) {
    throw new Error(goPathError("open", path, err), { cause: err });
  }
  if (bytes.length > MAX_CONFIG_FILE_BYTES) {
    throw new Error(
      `file is ${bytes.length} bytes, larger than the 10 MiB limit for kubelet config files; shrink the file`,
    );
  }
  return new TextDecoder().decode(bytes);
}
