/**
 * The pods' user namespaces (upstream `UsernsManager`): at start the ranges recorded in the
 * pod directories are taken back; a pod with `hostUsers: false` gets its recorded range or a
 * new one, written to its directory before the runtime sees it; a terminated or orphaned pod
 * frees its range and its file. Decisions are in `id_slots.ts`, `id_mappings.ts` and
 * `pod_user_namespace.ts`; files go through {@linkcode PodDirFiles}.
 * @module
 */
import type { Logger } from "../log/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import { mappingsFileText, parseMappingsFile } from "./id_mappings.ts";
import {
  DEFAULT_KUBELET_ID_RANGE,
  IDS_PER_POD_UNIT,
  IdSlots,
  type KubeletIdRange,
  slotTable,
} from "./id_slots.ts";
import {
  type HandlerFeatures,
  handlerRefusal,
  NODE_USER_NAMESPACE,
  podUserNamespace,
  type UserNamespaceInit,
  userNamespaceMode,
} from "./pod_user_namespace.ts";

/** The mappings file of each pod directory. */
export interface PodDirFiles {
  /** The file's text; undefined when there is none. */
  read(podUid: string): Promise<string | undefined>;
  /** Replaces the file atomically and durably. */
  write(podUid: string, text: string): Promise<void>;
  /** Removes the file; a missing one is no error. */
  remove(podUid: string): Promise<void>;
  /** The UIDs of the pod directories; none when the pods directory is missing. */
  listPods(): Promise<string[]>;
}

/** The runtime handlers and their features, as the CRI `Status` answer last reported them. */
export interface HandlerFeatureSource {
  handlers(signal?: AbortSignal): Promise<readonly HandlerFeatures[]>;
}

/** What {@linkcode createUserNamespaceManager} works with. */
export interface UserNamespaceDeps {
  files: PodDirFiles;
  handlers: HandlerFeatureSource;
  logger: Logger;
  /** An integer in [0, n) (the random start of a slot search). */
  random?: (n: number) => number;
}

/** The kubelet settings the manager follows. */
export interface UserNamespaceOptions {
  /** The `UserNamespacesSupport` feature gate. */
  gateEnabled: boolean;
  /** `userNamespaces.idsPerPod`; 0 or absent → 65536. */
  idsPerPod?: number;
  maxPods: number;
  /** The IDs to hand out; absent → upstream's default (65536 and up). */
  range?: KubeletIdRange;
}

/** The pod fields the manager reads. */
export interface UserNamespacePod {
  uid: string;
  hostUsers?: boolean;
}

/** The manager. */
export interface UserNamespaceManager {
  /**
   * The CRI user namespace option of a pod's sandbox and containers; undefined → none is
   * sent (gate off, `hostUsers` unset).
   * @throws {Error} with upstream's text when the pod cannot have what it asks for.
   */
  forPod(
    pod: UserNamespacePod,
    runtimeHandler: string,
    signal?: AbortSignal,
  ): Promise<UserNamespaceInit | undefined>;
  /** Frees a terminated pod's range and removes its file (upstream `Release`). */
  release(podUid: string): Promise<void>;
  /**
   * Frees the ranges of pods the kubelet no longer knows: pod directories of unknown pods,
   * and ranges whose pod directory is gone (upstream `CleanupOrphanedPodUsernsAllocations`).
   */
  cleanupOrphans(known: (podUid: string) => boolean): Promise<void>;
}

const randomIndex = (n: number) => Math.floor(Math.random() * n);

/**
 * Builds the manager and takes back the ranges recorded in the pod directories.
 * @throws {Error} naming the problem when the kubelet's ID range does not fit the settings
 * or a recorded range is invalid (the kubelet does not start, as upstream's).
 */
export async function createUserNamespaceManager(
  deps: UserNamespaceDeps,
  options: UserNamespaceOptions,
): Promise<UserNamespaceManager> {
  const idsPerPod = options.idsPerPod || IDS_PER_POD_UNIT;
  let slots: IdSlots;
  try {
    slots = new IdSlots(
      slotTable(
        options.range ?? DEFAULT_KUBELET_ID_RANGE,
        idsPerPod,
        options.maxPods,
      ),
      deps.random ?? randomIndex,
    );
  } catch (cause) {
    throw new Error(
      `create user namespace manager: ${errorMessage(cause)}`,
      { cause },
    );
  }
  const { files, logger } = deps;
  const take = (uid: string, text: string) => {
    const range = parseMappingsFile(text);
    slots.record(uid, range.hostId, range.length);
    return range;
  };
  const release = async (uid: string) => {
    if (!slots.release(uid)) return;
    logger.v(5).info("Releasing pod user namespace allocation", {
      podUID: uid,
    });
    await files.remove(uid).catch(() => {});
  };
  if (options.gateEnabled) {
    for (const uid of await files.listPods()) {
      try {
        const text = await files.read(uid);
        if (text) take(uid, text);
      } catch (cause) {
        throw new Error(
          `create user namespace manager: record pod mappings: ${
            errorMessage(cause)
          }`,
          { cause },
        );
      }
    }
  }
  return {
    async forPod(pod, runtimeHandler, signal) {
      const mode = userNamespaceMode(pod.hostUsers, options.gateEnabled);
      if (mode === "none") return undefined;
      if (mode === "node") return NODE_USER_NAMESPACE;
      const refusal = handlerRefusal(
        await deps.handlers.handlers(signal),
        runtimeHandler,
      );
      if (refusal) throw new Error(refusal);
      const text = await files.read(pod.uid);
      if (text) {
        try {
          return podUserNamespace(take(pod.uid, text));
        } catch (cause) {
          throw new Error(`user namespace: ${errorMessage(cause)}`, { cause });
        }
      }
      let hostId: number;
      try {
        hostId = slots.allocate(pod.uid);
      } catch (cause) {
        throw new Error(`create user namespace: ${errorMessage(cause)}`, {
          cause,
        });
      }
      logger.v(5).info("New pod user namespace allocation", {
        podUID: pod.uid,
      });
      const range = { hostId, length: idsPerPod };
      try {
        await files.write(pod.uid, mappingsFileText(range));
      } catch (cause) {
        await release(pod.uid);
        throw new Error(`create user namespace: ${errorMessage(cause)}`, {
          cause,
        });
      }
      return podUserNamespace(range);
    },
    async release(uid) {
      if (!options.gateEnabled) return;
      await release(uid);
    },
    async cleanupOrphans(known) {
      if (!options.gateEnabled) return;
      const found = new Set(await files.listPods());
      for (const uid of found) if (!known(uid)) await release(uid);
      for (const uid of slots.pods()) if (!found.has(uid)) await release(uid);
    },
  };
}
