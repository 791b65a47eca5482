/**
 * The node's certificate pairs under `--cert-dir`, laid out as upstream's certificate store
 * (client-go `util/certificate` fileStore) lays them out, so that either kubelet reads and
 * renews what the other wrote: each issued pair goes into `<prefix>-<time>.pem` and
 * `<prefix>-current.pem` is a symbolic link to it, replaced through `<prefix>-updated.pem`.
 * Upstream refuses to renew when the current name is a plain file ("expected ... to be a
 * symlink but it is a file"), so a plain copy is only written where there is no link to keep.
 * @module
 */

/** How the current name is made to show a newly issued pair. */
export type CurrentPairWrite =
  /** A new symbolic link to the dated file (upstream's layout). */
  | { kind: "symlink" }
  /**
   * The pair written into the file the existing link points to, keeping the link: Deno makes
   * symbolic links only with unscoped read and write grants, and replacing upstream's link by
   * a file would stop the upstream kubelet from renewing after a swap back.
   */
  | { kind: "through"; target: string }
  /** A plain file (no link exists and none can be made). */
  | { kind: "copy" };

/** What is at the current name: nothing, a file, or a link and the absolute path it resolves to. */
export type CurrentPairEntry =
  | undefined
  | { isSymlink: false }
  | { isSymlink: true; target: string };

/** Decides how a new pair becomes current (upstream `fileStore.Update`, within Deno's grants). */
export function planCurrentPair(
  current: CurrentPairEntry,
  canSymlink: boolean,
  certDir: string,
): CurrentPairWrite {
  if (canSymlink) return { kind: "symlink" };
  const dir = certDir.replace(/\/+$/, "") + "/";
  // only a link into the cert dir: the grants cover nothing else, and a link elsewhere is
  // not the store's
  if (current?.isSymlink && current.target.startsWith(dir)) {
    return { kind: "through", target: current.target };
  }
  return { kind: "copy" };
}

/**
 * Writes `text` to `<path>.tmp` and renames it into place (mode 0600). The fixed temporary
 * name is what the permission plan grants next to the kubeconfig.
 */
export async function writeFileAtomic(
  path: string,
  text: string,
): Promise<void> {
  const tmp = `${path}.tmp`;
  await Deno.writeTextFile(tmp, text, { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/** `<prefix>-YYYY-MM-DD-HH-MM-SS.pem`, upstream's dated pair name (UTC). */
export function pairFileName(prefix: string, nowMs: number): string {
  const iso = new Date(nowMs).toISOString(); // 2026-01-02T03:04:05.678Z
  return `${prefix}-${iso.slice(0, 19).replace(/[T:]/g, "-")}.pem`;
}

/** True when this process may make symbolic links (unscoped read and write). */
export function symlinksGranted(): boolean {
  return Deno.permissions.querySync({ name: "read" }).state === "granted" &&
    Deno.permissions.querySync({ name: "write" }).state === "granted";
}

async function currentEntry(path: string): Promise<CurrentPairEntry> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  if (!info.isSymlink) return { isSymlink: false };
  try {
    return { isSymlink: true, target: await Deno.realPath(path) };
  } catch (e) {
    // a dangling link: nothing to write through, so it is replaced
    if (e instanceof Deno.errors.NotFound) return { isSymlink: false };
    throw e;
  }
}

/**
 * Stores a new pair (certificate then key, PEM) as `<prefix>-<time>.pem` and makes it current;
 * returns the current name's path. `canSymlink` defaults to what Deno grants.
 */
export async function storePair(
  certDir: string,
  prefix: string,
  pem: string,
  nowMs: number,
  options: { canSymlink?: boolean } = {},
): Promise<string> {
  const absDir = certDir.startsWith("/") ? certDir : `${Deno.cwd()}/${certDir}`;
  const dated = `${absDir}/${pairFileName(prefix, nowMs)}`;
  const current = `${certDir}/${prefix}-current.pem`;
  await writeFileAtomic(dated, pem);
  const plan = planCurrentPair(
    await currentEntry(current),
    options.canSymlink ?? symlinksGranted(),
    absDir,
  );
  switch (plan.kind) {
    case "symlink": {
      // made under upstream's staging name and renamed over the current one: a reader never
      // finds it missing, and upstream's recovery finishes a move a crash interrupted
      const updated = `${certDir}/${prefix}-updated.pem`;
      await Deno.remove(updated).catch(() => {});
      await Deno.symlink(dated, updated);
      await Deno.rename(updated, current);
      break;
    }
    case "through":
      await writeFileAtomic(plan.target, pem);
      break;
    case "copy":
      await writeFileAtomic(current, pem);
  }
  return current;
}
