/**
 * The start-up step that makes `--root-dir` a shared mount (upstream `setupDataDirs` calling
 * `MakeRShared`), so that volumes under it may use `Bidirectional` and `HostToContainer`
 * propagation on hosts whose `/` is private. Run once, after the root dir exists and before
 * any pod starts or volume is mounted.
 *
 * @module
 */

import type { Logger } from "../log/mod.ts";
import {
  parseMountInfo,
  planRootShare,
  type RootShareAccess,
  rootShareFix,
} from "../cgroup_agent/mod.ts";
import { errorMessage } from "../util/error_message.ts";

/** Dependencies of {@linkcode shareRootDir}. */
export interface ShareRootDirDeps {
  logger: Logger;
  /**
   * The mount table's text for the check without a mounter, undefined when it cannot be read
   * (default: /proc/self/mountinfo when the permissions allow reading it).
   */
  readMountTable?: () => Promise<string | undefined>;
}

const MOUNT_TABLE = "/proc/self/mountinfo";

async function readOwnMountTable(): Promise<string | undefined> {
  // ask first: a kubelet started from a terminal would otherwise prompt for the grant
  const read = await Deno.permissions.query({ name: "read", path: MOUNT_TABLE })
    .catch(() => undefined);
  if (read?.state !== "granted") return undefined;
  return await Deno.readTextFile(MOUNT_TABLE).catch(() => undefined);
}

/**
 * Shares the root dir through `access`'s executor; without one only warns when the mount
 * table (if readable) shows the root on a private mount. Returns false when the kubelet must
 * stop: the executor failed (logged as an error naming `--root-dir` and the fix). A refused
 * bind (mounts below the root already) is a warning and the kubelet goes on.
 */
export async function shareRootDir(
  access: RootShareAccess | undefined,
  deps: ShareRootDirDeps,
  options: { rootDir: string },
): Promise<boolean> {
  const { logger } = deps;
  const rootDir = options.rootDir;
  if (!access) return true;
  if ("reason" in access) {
    const text = await (deps.readMountTable ?? readOwnMountTable)();
    if (text === undefined) return true;
    const root = await Deno.realPath(rootDir).catch(() => rootDir);
    const plan = planRootShare(parseMountInfo(text), root);
    if (plan.action === "nothing") return true;
    logger.warn(
      "The root directory is not on a shared mount and nothing can make it one: volumes under it cannot use Bidirectional or HostToContainer mount propagation",
      {
        rootDir,
        reason: access.reason,
        fix: `run the cgroup agent (docs/permissions.md), or ${
          rootShareFix(root)
        }`,
      },
    );
    return true;
  }
  await Deno.mkdir(rootDir, { recursive: true, mode: 0o750 }).catch(() => {});
  try {
    const plan = await access.sharer.shareRootDir();
    if (plan.action === "share") {
      logger.v(2).info("Bind-mounted the root directory as a shared mount", {
        rootDir,
      });
    } else if (plan.action === "nothing") {
      logger.v(4).info("The root directory is already on a shared mount", {
        rootDir,
        mount: plan.mountPoint,
      });
    } else {
      logger.warn(
        "The root directory is not made a shared mount: volumes under it cannot use Bidirectional or HostToContainer mount propagation",
        { rootDir, reason: plan.reason, fix: rootShareFix(rootDir) },
      );
    }
    return true;
  } catch (error) {
    logger.error(
      `Error configuring root directory "--root-dir=${rootDir}": it cannot be made a shared mount (upstream's kubelet stops here too)`,
      { err: errorMessage(error), fix: rootShareFix(rootDir) },
    );
    return false;
  }
}
