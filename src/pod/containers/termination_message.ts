/**
 * Container termination messages (kuberuntime_container.go: `makeMounts`, `getTerminationMessage`):
 * the kubelet creates an empty, world-writable file per container instance under
 * `<rootDir>/pods/<podUID>/containers/<name>/`, bind-mounts it at `terminationMessagePath`, and
 * once the container has exited reads it back (at most 4096 bytes). With `FallbackToLogsOnError`,
 * an empty file and a non-zero exit code, the tail of the container's CRI log (80 lines, at most
 * 2048 bytes) is used instead.
 *
 * File access goes through small injectable functions so the syncer and the runtime-status
 * reader can be tested without touching the host.
 *
 * @module
 */

import type { ContainerView } from "../types.ts";

/** Most bytes read from a termination-message file. */
export const MAX_TERMINATION_MESSAGE_BYTES = 4096;
/** Most log lines used by `FallbackToLogsOnError`. */
export const MAX_TERMINATION_MESSAGE_LOG_LINES = 80;
/** Most bytes of log content used by `FallbackToLogsOnError`. */
export const MAX_TERMINATION_MESSAGE_LOG_BYTES = 2048;

/** Reading side of the termination-message files (injectable for tests). */
export interface TerminationMessageReader {
  /** First `maxBytes` bytes of a file; missing or unreadable → undefined. */
  /** The last `maxBytes` bytes of a file (Go's `tail.ReadAtMost`). */
  readAtMost(path: string, maxBytes: number): Promise<Uint8Array | undefined>;
  /** The last `lines` lines of a text file; missing or unreadable → undefined. */
  readTailLines(path: string, lines: number): Promise<string | undefined>;
}

/** Writing side: creating the per-container file and removing the directories. */
export interface TerminationMessageWriter {
  /** Creates an empty file with mode 0666 (regardless of umask), creating parents. */
  createFile(path: string): Promise<void>;
  /** Removes a file or directory tree; missing is not an error. */
  remove(path: string): Promise<void>;
  /** Removes a directory only when it is empty; missing or non-empty is not an error. */
  removeEmptyDir(path: string): Promise<void>;
}

/** `<rootDir>/pods/<podUID>`: the pod's directory under the kubelet root dir. */
export function podDirectory(rootDir: string, podUid: string): string {
  return `${rootDir.replace(/\/+$/, "")}/pods/${podUid}`;
}

/** `<rootDir>/pods/<podUID>/containers/<name>`: where a container's message files live. */
export function containerDirectory(
  rootDir: string,
  podUid: string,
  containerName: string,
): string {
  return `${podDirectory(rootDir, podUid)}/containers/${containerName}`;
}

/** Eight random hex digits (the file name of one container instance's message file). */
export function randomFileId(): string {
  const [n] = crypto.getRandomValues(new Uint32Array(1));
  return n!.toString(16).padStart(8, "0");
}

/** Creates `<containerDirectory>/<random id>` and returns its host path. */
export async function createTerminationMessageFile(
  writer: TerminationMessageWriter,
  target: { rootDir: string; podUid: string; containerName: string },
): Promise<string> {
  const path = `${
    containerDirectory(target.rootDir, target.podUid, target.containerName)
  }/${randomFileId()}`;
  await writer.createFile(path);
  return path;
}

/**
 * Joins the content of CRI log lines (`<time> <stream> <tag> <content>`): full lines (`F`) end
 * with a newline, partial fragments (`P`) are glued to the next one. Malformed lines are
 * skipped. Only the last `maxBytes` bytes are kept, on a character boundary: upstream reads
 * the tail into a circular buffer, so what a dying process printed last survives.
 */
export function criLogContent(text: string, maxBytes: number): string {
  let out = "";
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const m = /^\S+ (?:stdout|stderr) (\S+) ?(.*)$/.exec(line);
    if (!m) continue;
    const partial = m[1]!.split(":")[0] === "P";
    out += partial ? m[2]! : `${m[2]!}\n`;
  }
  return keepLastBytes(out, maxBytes);
}

function keepLastBytes(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return text;
  return new TextDecoder().decode(bytes.subarray(bytes.length - maxBytes))
    .replace(/^\uFFFD+/, "");
}

/**
 * The termination message of an exited container (empty when there is none), as the kubelet
 * computes it: the message file first; the log tail when the policy is `FallbackToLogsOnError`,
 * the container failed and the file is empty or missing.
 */
export async function readTerminationMessage(
  reader: TerminationMessageReader,
  view: ContainerView,
): Promise<string> {
  const fallback = view.terminationMessagePolicy === "FallbackToLogsOnError" &&
    view.exitCode !== 0 && view.reason !== "ContainerCannotRun";
  let message = "";
  if (view.terminationMessageHostPath) {
    const data = await reader.readAtMost(
      view.terminationMessageHostPath,
      MAX_TERMINATION_MESSAGE_BYTES,
    );
    if (data) message = new TextDecoder().decode(data);
  }
  if (message === "" && fallback && view.logPath) {
    const tail = await reader.readTailLines(
      view.logPath,
      MAX_TERMINATION_MESSAGE_LOG_LINES,
    );
    if (tail) message = criLogContent(tail, MAX_TERMINATION_MESSAGE_LOG_BYTES);
  }
  return message;
}

/** The runtime's own message followed by the termination message (`"<runtime>: <message>"`). */
export function withTerminationMessage(
  runtimeMessage: string,
  message: string,
): string {
  if (message === "") return runtimeMessage;
  return runtimeMessage ? `${runtimeMessage}: ${message}` : message;
}

async function readAtMost(
  path: string,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  let file: Deno.FsFile | undefined;
  try {
    file = await Deno.open(path, { read: true });
    const size = (await file.stat()).size;
    const start = Math.max(0, size - maxBytes);
    if (start > 0) await file.seek(start, Deno.SeekMode.Start);
    const buf = new Uint8Array(size - start);
    let filled = 0;
    while (filled < buf.length) {
      const n = await file.read(buf.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    return buf.slice(0, filled);
  } catch {
    return undefined;
  } finally {
    file?.close();
  }
}

const TAIL_CHUNK = 16 * 1024;
/** Never read more than this from the end of a log, however long its lines are. */
const TAIL_MAX_BYTES = 2 * 1024 * 1024;

async function readTailLines(
  path: string,
  lines: number,
): Promise<string | undefined> {
  let file: Deno.FsFile | undefined;
  try {
    file = await Deno.open(path, { read: true });
    const size = (await file.stat()).size;
    const chunks: Uint8Array[] = [];
    let start = size;
    let newlines = 0;
    // read backwards until one newline more than wanted lines (the file ends with one)
    while (start > 0 && newlines <= lines && size - start < TAIL_MAX_BYTES) {
      const len = Math.min(TAIL_CHUNK, start);
      start -= len;
      const buf = new Uint8Array(len);
      await file.seek(start, Deno.SeekMode.Start);
      let filled = 0;
      while (filled < len) {
        const n = await file.read(buf.subarray(filled));
        if (n === null) break;
        filled += n;
      }
      chunks.unshift(buf.subarray(0, filled));
      for (const b of buf.subarray(0, filled)) if (b === 0x0a) newlines++;
    }
    const all = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    const text = new TextDecoder().decode(all);
    const parts = text.split("\n");
    if (parts.at(-1) === "") parts.pop();
    // when reading stopped mid-file the first piece may be a cut line
    if (start > 0) parts.shift();
    return parts.slice(-lines).join("\n");
  } catch {
    return undefined;
  } finally {
    file?.close();
  }
}

/** Reader on the host file system. */
export const denoTerminationMessageReader: TerminationMessageReader = {
  readAtMost,
  readTailLines,
};

/** Writer on the host file system. */
export const denoTerminationMessageWriter: TerminationMessageWriter = {
  async createFile(path) {
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), {
      recursive: true,
      mode: 0o750,
    });
    const file = await Deno.open(path, {
      write: true,
      create: true,
      truncate: true,
      mode: 0o666,
    });
    file.close();
    await Deno.chmod(path, 0o666); // the umask may have cleared bits
  },
  async remove(path) {
    try {
      await Deno.remove(path, { recursive: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  },
  async removeEmptyDir(path) {
    try {
      await Deno.remove(path);
    } catch {
      // missing, or still holding other pod data
    }
  },
};
