/**
 * hostPath `type` checks with upstream's semantics and messages (hostpath plugin `checkType`):
 * the path is looked at through symlinks, `DirectoryOrCreate` makes it with mode 0755 and
 * `FileOrCreate` with 0644 (both under the process umask) when it is missing, `""` checks
 * nothing. Paths under /dev, /proc and /sys can be looked at only with every Deno permission.
 *
 * @module
 */

/** What a type check needs from the file system. */
export interface HostPathFs {
  /** The kind of file at `path` (through symlinks), undefined when there is none. */
  kind(path: string): Promise<HostFileKind | undefined>;
  /** Creates a directory and its parents with mode 0755. */
  makeDirectory(path: string): Promise<void>;
  /** Creates an empty file with mode 0644 (keeps an existing one). */
  makeFile(path: string): Promise<void>;
}

/** File kinds hostPath types name. */
export type HostFileKind =
  | "Directory"
  | "File"
  | "Socket"
  | "CharDevice"
  | "BlockDevice"
  | "Other";

interface TypeRule {
  /** Kind the path must be. */
  kind: HostFileKind;
  /** What the error says it is not. */
  noun: string;
  /** Made when missing. */
  create?: "directory" | "file";
}

/** Every hostPath type and its rule (data, not code). */
const RULES: Readonly<Record<string, TypeRule>> = {
  DirectoryOrCreate: {
    kind: "Directory",
    noun: "a directory",
    create: "directory",
  },
  Directory: { kind: "Directory", noun: "a directory" },
  FileOrCreate: { kind: "File", noun: "a file", create: "file" },
  File: { kind: "File", noun: "a file" },
  Socket: { kind: "Socket", noun: "a socket file" },
  CharDevice: { kind: "CharDevice", noun: "a character device" },
  BlockDevice: { kind: "BlockDevice", noun: "a block device" },
};

/**
 * Checks (and for the `OrCreate` types makes) `path` as hostPath `type` demands.
 * @throws {Error} with upstream's message, e.g. `hostPath type check failed: /x is not a directory`.
 */
export async function checkHostPathType(
  fs: HostPathFs,
  path: string,
  type: string,
): Promise<void> {
  if (type === "") return;
  const rule = RULES[type];
  if (!rule) throw new Error(`${type} is an invalid volume type`);
  const kind = await fs.kind(path);
  if (kind === undefined && rule.create) {
    if (rule.create === "directory") await fs.makeDirectory(path);
    else await fs.makeFile(path);
    return;
  }
  if (kind !== rule.kind) {
    throw new Error(`hostPath type check failed: ${path} is not ${rule.noun}`);
  }
}

/**
 * A Deno permission refusal on a host path (a typed hostPath, a local PV) as the fix an
 * operator can apply; any other error is returned as it is.
 */
export function hostPathDenied(error: unknown, path: string): unknown {
  if (!(error instanceof Deno.errors.NotCapable)) return error;
  // Deno grants nothing under these by path; only every permission reaches them
  const special = /^\/(dev|proc|sys)(\/|$)/.test(path);
  return new Error(
    special
      ? `the kubelet's permissions cannot reach ${path}: paths under /dev, /proc and /sys need every permission (docs/permissions.md) (${error.message})`
      : `the kubelet's permission lists do not grant access to ${path}: build them with --host-path=<a directory that holds it> (docs/permissions.md) (${error.message})`,
  );
}

/** {@linkcode HostPathFs} on the host. */
export const denoHostPathFs: HostPathFs = {
  async kind(path) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw hostPathDenied(error, path);
    }
    if (info.isDirectory) return "Directory";
    if (info.isFile) return "File";
    if (info.isSocket) return "Socket";
    if (info.isCharDevice) return "CharDevice";
    if (info.isBlockDevice) return "BlockDevice";
    return "Other";
  },
  makeDirectory: (path) =>
    Deno.mkdir(path, { recursive: true, mode: 0o755 }).catch((error) => {
      throw hostPathDenied(error, path);
    }),
  async makeFile(path) {
    const file = await Deno.open(path, {
      create: true,
      write: true,
      mode: 0o644,
    }).catch((error) => {
      throw hostPathDenied(error, path);
    });
    file.close();
  },
};
