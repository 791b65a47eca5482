/**
 * `subPath` and `subPathExpr` resolution. A subPath is checked as text first (relative, no
 * `..`, upstream's messages), then resolved inside the volume one component at a time with
 * `lstat`: symlinks are followed by this code, never by the kernel, and only while they stay
 * inside the volume (upstream allows in-volume symlinks too); missing components are created as
 * directories with the volume root's mode, never through a symlink. The result is a
 * symlink-free host path inside the volume. Why that path is safe to hand to the runtime (no
 * running container can change it before the runtime mounts it) is decided by the caller, see
 * docs/volumes.md.
 *
 * @module
 */

import { hostPathDenied } from "./host_path.ts";

/** Symlinks followed while resolving one subPath (the kernel's own limit). */
const MAX_SYMLINKS = 40;

/**
 * Upstream's text checks of a subPath.
 * @throws {RangeError} `error SubPath ... must not be an absolute path` or `... must not contain '..'`.
 */
export function validateSubPath(subPath: string): void {
  if (subPath.startsWith("/")) {
    throw new RangeError(
      `error SubPath \`${subPath}\` must not be an absolute path`,
    );
  }
  if (subPath.split("/").includes("..")) {
    throw new RangeError(
      `unable to provision SubPath \`${subPath}\`: must not contain '..'`,
    );
  }
}

/** File access the resolver needs (lstat-based: nothing here follows a symlink). */
export interface SubPathFs {
  lstat(
    path: string,
  ): Promise<{ kind: "directory" | "file" | "symlink" } | undefined>;
  readLink(path: string): Promise<string>;
  /** Creates one directory (not its parents) with `mode`; an existing one is fine. */
  mkdir(path: string, mode: number): Promise<void>;
  /** The mode bits of a directory (for new components). */
  mode(path: string): Promise<number>;
}

/** {@linkcode SubPathFs} on the host. */
export const denoSubPathFs: SubPathFs = {
  async lstat(path) {
    try {
      const info = await Deno.lstat(path);
      return {
        kind: info.isSymlink
          ? "symlink"
          : info.isDirectory
          ? "directory"
          : "file",
      };
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw hostPathDenied(error, path);
    }
  },
  readLink: (path) =>
    Deno.readLink(path).catch((error) => {
      throw hostPathDenied(error, path);
    }),
  async mkdir(path, mode) {
    try {
      await Deno.mkdir(path, { mode });
      await Deno.chmod(path, mode);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) {
        throw hostPathDenied(error, path);
      }
    }
  },
  async mode(path) {
    const info = await Deno.stat(path).catch((error) => {
      throw hostPathDenied(error, path);
    });
    return (info.mode ?? 0o755) & 0o7777;
  },
};

function parts(path: string): string[] {
  return path.split("/").filter((p) => p !== "" && p !== ".");
}

/** The resolved subPath: a symlink-free host path inside the volume. */
export interface ResolvedSubPath {
  path: string;
  kind: "directory" | "file";
}

/**
 * Resolves `subPath` inside `volumeRoot` (itself symlink-free, see `Deno.realPath`), creating
 * missing directories.
 * @throws {RangeError} `subpath "..." not within volume path "..."` when a symlink leads out.
 */
export async function resolveSubPath(
  fs: SubPathFs,
  volumeRoot: string,
  subPath: string,
): Promise<ResolvedSubPath> {
  const root = volumeRoot.replace(/\/+$/, "") || "/";
  const outside = () =>
    new RangeError(
      `subpath "${root}/${subPath}" not within volume path "${root}"`,
    );
  const at = (rel: string[]) =>
    rel.length ? `${root === "/" ? "" : root}/${rel.join("/")}` : root;
  const queue = parts(subPath);
  const resolved: string[] = [];
  let kind: "directory" | "file" = "directory";
  let links = 0;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === "..") {
      if (resolved.length === 0) throw outside();
      resolved.pop();
      kind = "directory";
      continue;
    }
    if (kind === "file") {
      throw new RangeError(
        `subpath "${root}/${subPath}": "${at(resolved)}" is not a directory`,
      );
    }
    const path = at([...resolved, name]);
    let info = await fs.lstat(path);
    if (!info) {
      await fs.mkdir(path, await fs.mode(root));
      info = await fs.lstat(path);
      if (info?.kind !== "directory") throw outside();
    }
    if (info.kind === "symlink") {
      if (++links > MAX_SYMLINKS) {
        throw new RangeError(
          `subpath "${root}/${subPath}": too many levels of symbolic links`,
        );
      }
      const target = await fs.readLink(path);
      if (target.startsWith("/")) {
        // an absolute target is a host path: fine only when it names a place in the volume
        if (target !== root && !target.startsWith(`${root}/`)) throw outside();
        resolved.length = 0;
        queue.unshift(...parts(target.slice(root.length)));
      } else {
        queue.unshift(...parts(target));
      }
      continue;
    }
    resolved.push(name);
    kind = info.kind;
  }
  return { path: at(resolved), kind };
}

/** Where a container mount's subPath is pinned: `volume-subpaths/<volume>/<container>/<index>`. */
export interface SubPathPin {
  uid: string;
  volume: string;
  container: string;
  /** The mount's index in the container's `volumeMounts`. */
  index: number;
}

/** Whoever can pin subPaths with bind mounts (upstream `doBindSubPath`, `CleanSubPaths`). */
export interface SubPathBinds {
  /**
   * Bind-mounts the file or directory at `path` (checked, once opened, to lie inside
   * `volumePath`) on the pin; returns the pin's host path.
   */
  bindSubPath(
    pin: SubPathPin,
    source: { volumePath: string; path: string },
  ): Promise<string>;
  /** Unmounts and removes every pin of the pod. */
  cleanSubPaths(uid: string): Promise<void>;
}

/** The binder, or why there is none (named in the log, once). */
export type SubPathAccess = { binds: SubPathBinds } | { reason: string };
