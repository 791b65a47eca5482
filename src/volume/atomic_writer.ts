/**
 * Writes a volume's whole file set so readers see either the old set or the new one, never a
 * mix (upstream `AtomicWriter`): the files go into a new `..<timestamp>` directory, a
 * `..data_tmp` symlink to it is renamed over `..data`, and each top-level name is a symlink
 * through `..data`. The previous timestamped directory and names no longer in the payload go
 * afterwards. Only paths this writer made are removed, and removal never follows a symlink
 * (the CVE-2017-1002102 class); payload paths are relative and never step out with `..`.
 *
 * @module
 */

/** One file of a payload. */
export interface PayloadFile {
  /** Text, or bytes as given (Secret values and ConfigMap `binaryData` need not be UTF-8). */
  data: string | Uint8Array;
  /** File mode (e.g. 0o644). */
  mode: number;
}

const DATA_DIR = "..data";
const DATA_TMP = "..data_tmp";
const TIMESTAMPED_REGEXP = /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.[^/]+$/;

/**
 * Checks a payload path as upstream `validatePath` does: not empty, relative, at most 4096
 * characters, no `..` component, no name over 255 characters, no first name starting `..`
 * (the writer's own `..data` and timestamped names).
 * @throws {RangeError} naming the rule broken.
 */
export function validatePayloadPath(path: string): void {
  if (path === "") throw new RangeError("invalid path: must not be empty");
  if (path.length > 4096) {
    throw new RangeError(
      `invalid path: must be less than or equal to 4096 characters`,
    );
  }
  if (path.startsWith("/")) {
    throw new RangeError(`invalid path: must be relative path: ${path}`);
  }
  const parts = path.split("/");
  if (parts.includes("..")) {
    throw new RangeError(`invalid path: must not contain '..': ${path}`);
  }
  if (parts.some((p) => p.length > 255)) {
    throw new RangeError(
      "invalid path: filenames must be less than or equal to 255 characters",
    );
  }
  if (parts[0]!.startsWith("..")) {
    throw new RangeError(`invalid path: must not start with '..': ${path}`);
  }
}

/**
 * A valid payload path in its clean form (upstream `validatePayload` keeps `filepath.Clean`
 * of each path): `./x` and `a//b/` become `x` and `a/b`. A path naming the volume directory
 * itself (`.`, `./`) or whose clean form starts with `..` (`./..data`) is refused: writing it
 * would replace the volume's own directory or the writer's `..data`.
 * @throws {RangeError} naming the rule broken.
 */
export function cleanPayloadPath(path: string): string {
  validatePayloadPath(path);
  const clean = path.split("/").filter((p) => p !== "" && p !== ".").join("/");
  if (clean === "") {
    throw new RangeError(
      `invalid path: must name a file inside the volume, not the volume itself: ${path}`,
    );
  }
  validatePayloadPath(clean);
  return clean;
}

/**
 * The payload with every path in its clean form; of two paths with one clean form the later
 * wins, as in upstream's map.
 * @throws {RangeError} for a path {@linkcode cleanPayloadPath} refuses.
 */
export function cleanPayload(
  payload: ReadonlyMap<string, PayloadFile>,
): Map<string, PayloadFile> {
  const out = new Map<string, PayloadFile>();
  for (const [path, file] of payload) out.set(cleanPayloadPath(path), file);
  return out;
}

function timestampPrefix(now: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `..${p(now.getUTCFullYear(), 4)}_${p(now.getUTCMonth() + 1)}_${
    p(now.getUTCDate())
  }_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${
    p(now.getUTCSeconds())
  }.`;
}

/** The target of the symlink at `path`; undefined when there is none (or it is no symlink). */
async function readLinkOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.readLink(path);
  } catch {
    return undefined;
  }
}

/** Relative paths of the regular files under `dir` (symlinks are not followed). */
async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory) {
      out.push(...await listFiles(`${dir}/${entry.name}`, rel));
    } else out.push(rel);
  }
  return out;
}

async function sameAsWritten(
  dir: string,
  payload: ReadonlyMap<string, PayloadFile>,
): Promise<boolean> {
  // a directory another writer is sweeping away is simply not the same
  const files = await listFiles(dir).catch(() => undefined);
  if (!files) return false;
  if (files.length !== payload.size) return false;
  for (const [path, file] of payload) {
    try {
      const info = await Deno.lstat(`${dir}/${path}`);
      if (!info.isFile || ((info.mode ?? 0) & 0o7777) !== file.mode) {
        return false;
      }
      const onDisk = await Deno.readFile(`${dir}/${path}`);
      if (!sameBytes(onDisk, bytesOf(file.data))) return false;
    } catch {
      return false;
    }
  }
  return true;
}

const encoder = new TextEncoder();

function bytesOf(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function topLevelNames(paths: Iterable<string>): Set<string> {
  return new Set([...paths].map((p) => p.split("/")[0]!));
}

/** How the files reach the volume, see {@linkcode writeAtomically}. */
export type WriterLayout = "symlinks" | "files";

/**
 * The layout the process can make: `symlinks` needs unscoped read and write (Deno refuses
 * `Deno.symlink` under path-scoped grants), else `files`.
 */
export function writerLayoutForPermissions(): WriterLayout {
  const granted = (name: "read" | "write") =>
    Deno.permissions.querySync({ name }).state === "granted";
  return granted("read") && granted("write") ? "symlinks" : "files";
}

async function writeFiles(
  dir: string,
  payload: ReadonlyMap<string, PayloadFile>,
): Promise<void> {
  for (const [path, file] of payload) {
    const full = `${dir}/${path}`;
    const parent = full.slice(0, full.lastIndexOf("/"));
    if (parent !== dir) {
      await Deno.mkdir(parent, { recursive: true, mode: 0o755 });
    }
    await Deno.writeFile(full, bytesOf(file.data), { mode: file.mode });
    await Deno.chmod(full, file.mode);
  }
}

/** Replaces `path` with a symlink to `target` in one rename. */
async function swapSymlink(target: string, path: string): Promise<void> {
  // a name of its own, so two writers of one volume never take each other's link
  const tmp = `${path.slice(0, path.lastIndexOf("/"))}/${DATA_TMP}.${
    crypto.randomUUID().slice(0, 8)
  }`;
  await Deno.symlink(target, tmp);
  await Deno.rename(tmp, path);
}

/**
 * Makes `targetDir` hold exactly `payload`; returns false when it already did (nothing
 * written). Layout `symlinks` (default) is upstream's: every file of the set changes at once.
 * Layout `files`, for path-scoped permissions, writes each file to a `..tmp.` name in the
 * volume and renames it into place: each file changes atomically, the set file by file, and
 * there is no `..data`; on a volume in upstream's layout whose links cover the payload it writes
 * inside the current `..data` directory instead and keeps the links (a swap back to the upstream
 * kubelet, docs/swap.md).
 * @throws {RangeError} for a bad payload path; file errors as they come.
 */
export async function writeAtomically(
  targetDir: string,
  payload: ReadonlyMap<string, PayloadFile>,
  options: { now?: Date; layout?: WriterLayout } = {},
): Promise<boolean> {
  payload = cleanPayload(payload);
  await Deno.mkdir(targetDir, { recursive: true, mode: 0o755 });
  const oldName = await readLinkOrUndefined(`${targetDir}/${DATA_DIR}`);
  const old = oldName && TIMESTAMPED_REGEXP.test(oldName) ? oldName : undefined;
  if (options.layout === "files") {
    return await writeFileByFile(targetDir, payload, old);
  }
  if (old && await sameAsWritten(`${targetDir}/${old}`, payload)) return false;

  const tsDir = await Deno.makeTempDir({
    dir: targetDir,
    prefix: timestampPrefix(options.now ?? new Date()),
  });
  await Deno.chmod(tsDir, 0o755);
  await writeFiles(tsDir, payload);
  const tsName = tsDir.slice(tsDir.lastIndexOf("/") + 1);
  await swapSymlink(tsName, `${targetDir}/${DATA_DIR}`);

  const wanted = topLevelNames(payload.keys());
  for (const name of wanted) {
    const link = `${targetDir}/${name}`;
    const current = await readLinkOrUndefined(link);
    if (current === `${DATA_DIR}/${name}`) continue;
    if (
      current === undefined && await Deno.lstat(link).catch(() => undefined)
    ) {
      // a file of the "files" layout: only our own regular files are replaced
      await removeOwnFile(link);
    }
    await swapSymlink(`${DATA_DIR}/${name}`, link);
  }
  // names of the old set that the new one lacks: only our own symlinks go
  for await (const entry of Deno.readDir(targetDir)) {
    if (entry.name.startsWith("..") || wanted.has(entry.name)) continue;
    const target = await readLinkOrUndefined(`${targetDir}/${entry.name}`);
    if (target === `${DATA_DIR}/${entry.name}`) {
      await removeIfPresent(`${targetDir}/${entry.name}`, false);
    }
  }
  if (old && old !== tsName) {
    await removeIfPresent(`${targetDir}/${old}`, true);
  }
  return true;
}

/** Removes `path` (a tree with `recursive`); already gone is fine (another writer's sweep). */
async function removeIfPresent(
  path: string,
  recursive: boolean,
): Promise<void> {
  try {
    await Deno.remove(path, { recursive });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** Removes a regular file or a directory tree (never through a symlink). */
async function removeOwnFile(path: string): Promise<void> {
  const info = await Deno.lstat(path);
  if (info.isFile || info.isDirectory || info.isSymlink) {
    await Deno.remove(path, { recursive: info.isDirectory });
  }
}

/** True when every top-level name of `payload` is a link into `..data` (upstream's layout). */
async function linkedThroughData(
  targetDir: string,
  payload: ReadonlyMap<string, PayloadFile>,
): Promise<boolean> {
  for (const name of topLevelNames(payload.keys())) {
    const target = await readLinkOrUndefined(`${targetDir}/${name}`);
    if (target !== `${DATA_DIR}/${name}`) return false;
  }
  return true;
}

/**
 * The files layout on a volume in upstream's layout that already links every name (the upstream
 * kubelet wrote it before a swap): each file is renamed into place inside the current
 * timestamped directory, and `..data` and the links stay. Replacing the links by files would
 * freeze the volume after a swap back: upstream's writer keeps a name that is not a link as it
 * is (`createUserVisibleFiles`), so its updates would never show.
 */
async function writeThroughData(
  targetDir: string,
  payload: ReadonlyMap<string, PayloadFile>,
  timestamped: string,
): Promise<boolean> {
  const dataDir = `${targetDir}/${timestamped}`;
  if (await sameAsWritten(dataDir, payload)) return false;
  for (const [path, file] of payload) {
    const full = `${dataDir}/${path}`;
    const parent = full.slice(0, full.lastIndexOf("/"));
    const name = full.slice(full.lastIndexOf("/") + 1);
    if (parent !== dataDir) {
      await Deno.mkdir(parent, { recursive: true, mode: 0o755 });
    }
    const tmp = `${parent}/..tmp.${name}`;
    await Deno.writeFile(tmp, bytesOf(file.data), { mode: file.mode });
    await Deno.chmod(tmp, file.mode);
    await Deno.rename(tmp, full);
  }
  // files that left the payload go from the data directory, with their links
  for (const rel of await listFiles(dataDir)) {
    if (payload.has(rel)) continue;
    await removeIfPresent(`${dataDir}/${rel}`, false);
    const top = rel.split("/")[0]!;
    const link = `${targetDir}/${top}`;
    if (
      top === rel && await readLinkOrUndefined(link) === `${DATA_DIR}/${top}`
    ) {
      await removeIfPresent(link, false);
    }
  }
  return true;
}

async function writeFileByFile(
  targetDir: string,
  payload: ReadonlyMap<string, PayloadFile>,
  oldTimestamped: string | undefined,
): Promise<boolean> {
  if (oldTimestamped && await linkedThroughData(targetDir, payload)) {
    return await writeThroughData(targetDir, payload, oldTimestamped);
  }
  if (!oldTimestamped && await sameAsWritten(targetDir, payload)) return false;
  for (const [path, file] of payload) {
    const full = `${targetDir}/${path}`;
    const parent = full.slice(0, full.lastIndexOf("/"));
    const name = full.slice(full.lastIndexOf("/") + 1);
    const top = `${targetDir}/${path.split("/")[0]}`;
    // a symlink of the other layout in the way: replaced, never followed
    if ((await Deno.lstat(top).catch(() => undefined))?.isSymlink) {
      await Deno.remove(top);
    }
    if (parent !== targetDir) {
      await Deno.mkdir(parent, { recursive: true, mode: 0o755 });
    }
    const tmp = `${parent}/..tmp.${name}`;
    await Deno.writeFile(tmp, bytesOf(file.data), { mode: file.mode });
    await Deno.chmod(tmp, file.mode);
    await Deno.rename(tmp, full);
  }
  const wanted = topLevelNames(payload.keys());
  for await (const entry of Deno.readDir(targetDir)) {
    if (wanted.has(entry.name)) continue;
    const path = `${targetDir}/${entry.name}`;
    if (entry.name === DATA_DIR || TIMESTAMPED_REGEXP.test(entry.name)) {
      await Deno.remove(path, { recursive: !entry.isSymlink });
    } else if (!entry.name.startsWith("..")) {
      await removeOwnFile(path);
    }
  }
  // names below the top level that left the payload
  for (const name of wanted) {
    const top = `${targetDir}/${name}`;
    if (!(await Deno.lstat(top)).isDirectory) continue;
    for (const rel of await listFiles(top, name)) {
      if (!payload.has(rel)) await Deno.remove(`${targetDir}/${rel}`);
    }
  }
  return true;
}
