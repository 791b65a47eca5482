/**
 * Pins a container's subPath with a bind mount, as upstream `doBindSubPath` does, and removes
 * the pins (`doCleanSubPaths`). The subPath is opened once by a shell that keeps the file
 * open; the real path of that open file (`/proc/self/fd/3`) is read back and checked here to
 * lie inside the volume's real path, and only then is that open file bind-mounted on the
 * target: a symlink swapped in before the open is seen in the real path, one swapped in after
 * it changes nothing. The target under the root dir is built from parts and walked with lstat
 * (no symbolic link, every component a directory). Needs every permission (`mount(8)`), so it
 * runs in the cgroup agent or in a kubelet run with every permission.
 *
 * @module
 */

import {
  checkSubPathSource,
  checkSubPathTarget,
  isInside,
  type SubPathBindSource,
  type SubPathBindTarget,
  subPathPodParts,
  subPathTargetParts,
} from "./volume_subpath.ts";
import { parseMountInfo } from "./volume_tmpfs.ts";
import { inMountOrder, runMountCommand } from "./mount_command.ts";
import { lstatOrUndefined, walkDirs as walkDirsAs } from "./walk_dirs.ts";

/** Binds and unbinds subPaths below one root dir. */
export interface SubPathBindExecutor {
  /** Pins `source` on the target (kept when already pinned); returns the target's path. */
  bindSubPath(
    target: SubPathBindTarget,
    source: SubPathBindSource,
  ): Promise<string>;
  /** Unmounts and removes every pin of the pod (its `volume-subpaths` directory). */
  cleanSubPaths(uid: string): Promise<void>;
}

/** How long the opening shell may take (a FIFO at the subPath would block its open). */
const OPEN_TIMEOUT_MS = 10_000;

// $1: the subPath, $2: the target. Prints the kind and the real path of what it opened, then
// mounts exactly that open file when told "bind".
const PIN_SCRIPT = `exec 3<"$1" || exit 2
if [ -d /proc/self/fd/3 ]; then printf 'd\\0'; else printf 'f\\0'; fi
readlink -z /proc/self/fd/3 || exit 2
read -r answer
[ "$answer" = bind ] || exit 3
exec mount --no-canonicalize --bind /proc/self/fd/3 "$2"`;

async function mountPoints(): Promise<Set<string>> {
  return new Set(
    parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo")).map((e) =>
      e.mountPoint
    ),
  );
}

function refuse(why: string): never {
  throw new Deno.errors.PermissionDenied(`refused subPath bind: ${why}`);
}

const walkDirs = (root: string, parts: string[], create: boolean) =>
  walkDirsAs(root, parts, create, "subPath bind");

/** Reads NUL-terminated fields from the shell's output. */
async function readFields(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  count: number,
): Promise<string[]> {
  const bytes: number[] = [];
  const fields: string[] = [];
  while (fields.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    for (const b of value) {
      if (b !== 0) {
        bytes.push(b);
        continue;
      }
      fields.push(new TextDecoder().decode(new Uint8Array(bytes)));
      bytes.length = 0;
    }
  }
  return fields;
}

/** The executor for `rootDir` (resolved once, as the tmpfs executor does). */
export function subPathBindExecutor(rootDir: string): SubPathBindExecutor {
  let root: Promise<string> | undefined;
  const realRoot = () => root ??= Deno.realPath(rootDir);
  return {
    bindSubPath: (target, source) =>
      inMountOrder(async () => {
        const why = checkSubPathTarget(target) ?? checkSubPathSource(source);
        if (why) refuse(why);
        const parts = subPathTargetParts(target);
        const base = await realRoot();
        const parent = await walkDirs(base, parts.slice(0, 2), false);
        if (!parent) {
          throw new Deno.errors.NotFound(`no pod directory for ${target.uid}`);
        }
        const dir = (await walkDirs(base, parts.slice(0, -1), true))!;
        const path = `${dir}/${parts.at(-1)}`;
        if ((await mountPoints()).has(path)) return path; // pinned at an earlier start
        const volumeRoot = await Deno.realPath(source.volumePath);
        const shell = new Deno.Command("sh", {
          args: ["-c", PIN_SCRIPT, "sh", source.path, path],
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
          signal: AbortSignal.timeout(OPEN_TIMEOUT_MS),
        }).spawn();
        const writer = shell.stdin.getWriter();
        const stderr = new Response(shell.stderr).text();
        let refusal: unknown;
        try {
          const [kind, real] = await readFields(shell.stdout.getReader(), 2);
          if (kind === undefined || real === undefined) {
            throw new Error(`cannot open subPath "${source.path}"`);
          }
          if (!isInside(real, volumeRoot)) {
            refuse(
              `"${source.path}" leads to "${real}", outside volume path "${volumeRoot}"`,
            );
          }
          const info = await lstatOrUndefined(path);
          if (info?.isSymlink) refuse(`"${path}" is a symbolic link`);
          if (!info && kind === "d") await Deno.mkdir(path, { mode: 0o750 });
          if (!info && kind !== "d") {
            await (await Deno.open(path, { createNew: true, write: true }))
              .close();
          }
          await writer.write(new TextEncoder().encode("bind\n"));
        } catch (error) {
          refusal = error;
        }
        await writer.close().catch(() => {});
        const status = await shell.status;
        const text = (await stderr).trim();
        if (refusal !== undefined) {
          if (refusal instanceof Error && text) {
            refusal.message += ` (${text})`;
          }
          throw refusal;
        }
        if (!status.success) {
          throw new Error(
            `mount of subPath "${source.path}" failed: ${
              text || `exit ${status.code}`
            }`,
          );
        }
        return path;
      }),
    cleanSubPaths: (uid) =>
      inMountOrder(async () => {
        const why = checkSubPathTarget({
          uid,
          volume: "v",
          container: "c",
          index: 0,
        });
        if (why) refuse(why);
        const base = await realRoot();
        const top = await walkDirs(base, subPathPodParts(uid), false);
        if (!top) return;
        for (const volume of await Array.fromAsync(Deno.readDir(top))) {
          const vdir = `${top}/${volume.name}`;
          if (!volume.isDirectory || volume.isSymlink) {
            refuse(`"${vdir}" is not a directory`);
          }
          for (const container of await Array.fromAsync(Deno.readDir(vdir))) {
            const cdir = `${vdir}/${container.name}`;
            if (!container.isDirectory || container.isSymlink) {
              refuse(`"${cdir}" is not a directory`);
            }
            for (const entry of await Array.fromAsync(Deno.readDir(cdir))) {
              const path = `${cdir}/${entry.name}`;
              if (entry.isSymlink) refuse(`"${path}" is a symbolic link`);
              while ((await mountPoints()).has(path)) {
                await runMountCommand("umount", ["--no-canonicalize", path]);
              }
              // never recursive: a pin still mounted would take the volume's files with it
              await Deno.remove(path);
            }
            await Deno.remove(cdir);
          }
          await Deno.remove(vdir);
        }
        await Deno.remove(top);
      }),
  };
}
