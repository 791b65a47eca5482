/**
 * Fakes for the storage area: an in-memory claim reader with a call log.
 * @module
 */
import {
  ApiNotFoundError,
  type PersistentVolume,
  type PersistentVolumeClaim,
} from "../api/mod.ts";
import type { ClaimReader } from "./claims.ts";
import type { LocalBlockDevices, LocalBlockTarget } from "./storage_volumes.ts";

/** Claims and volumes held in maps; `calls` logs each read. */
export class FakeClaimReader implements ClaimReader {
  claims = new Map<string, PersistentVolumeClaim>();
  volumes = new Map<string, PersistentVolume>();
  calls: string[] = [];

  addClaim(claim: PersistentVolumeClaim): void {
    this.claims.set(
      `${claim.metadata.namespace}/${claim.metadata.name}`,
      claim,
    );
  }

  addVolume(volume: PersistentVolume): void {
    this.volumes.set(volume.metadata.name ?? "", volume);
  }

  getPersistentVolumeClaim(
    namespace: string,
    name: string,
  ): Promise<PersistentVolumeClaim> {
    this.calls.push(`pvc ${namespace}/${name}`);
    const claim = this.claims.get(`${namespace}/${name}`);
    if (!claim) {
      return Promise.reject(
        new ApiNotFoundError(
          `persistentvolumeclaims "${name}" not found`,
          { code: 404, reason: "NotFound" },
        ),
      );
    }
    return Promise.resolve(structuredClone(claim));
  }

  getPersistentVolume(name: string): Promise<PersistentVolume> {
    this.calls.push(`pv ${name}`);
    const volume = this.volumes.get(name);
    if (!volume) {
      return Promise.reject(
        new ApiNotFoundError(
          `persistentvolumes "${name}" not found`,
          { code: 404, reason: "NotFound" },
        ),
      );
    }
    return Promise.resolve(structuredClone(volume));
  }
}

/** A claim `name` in `namespace`, bound to `volumeName` (unless `phase` says otherwise). */
export function makeClaim(
  namespace: string,
  name: string,
  volumeName: string,
  over: { phase?: string; uid?: string; owner?: string } = {},
): PersistentVolumeClaim {
  return {
    metadata: {
      name,
      namespace,
      uid: over.uid ?? `claim-${name}`,
      ...(over.owner
        ? {
          ownerReferences: [{
            apiVersion: "v1",
            kind: "Pod",
            name: "p",
            uid: over.owner,
            controller: true,
          }],
        }
        : {}),
    },
    spec: { volumeName },
    status: { phase: over.phase ?? "Bound" },
  };
}

/** A PV `name` with `source`, bound to the claim with `claimUid`. */
export function makeVolume(
  name: string,
  source: Record<string, unknown>,
  claimUid?: string,
): PersistentVolume {
  return {
    metadata: { name },
    spec: {
      ...(claimUid ? { claimRef: { uid: claimUid } } : {}),
      ...source,
    },
  };
}

/**
 * A block device mounter standing in for the cgroup agent: `blockDevices` are the paths that
 * are block devices, `otherDevices` paths that are something else; a mount makes the pod's directory (as the agent does) and is logged;
 * `failUnmount` makes unmounts fail.
 */
export class FakeLocalBlockDevices implements LocalBlockDevices {
  blockDevices = new Set<string>();
  /** Paths below /dev that exist and are no block devices. */
  otherDevices = new Set<string>();
  calls: string[] = [];
  failUnmount = false;
  /** `<uid>/<pv>` → device, what is mounted now. */
  mounted = new Map<string, string>();

  constructor(readonly rootDir: string) {}

  dir(target: LocalBlockTarget): string {
    return `${this.rootDir}/pods/${target.uid}/volumes/kubernetes.io~local-volume/${target.pv}`;
  }

  async mountLocalBlock(
    target: LocalBlockTarget,
    mount: { device: string; fsType: string; readOnly: boolean },
  ): Promise<void> {
    this.calls.push(
      `mount ${target.uid}/${target.pv} ${mount.device} ${
        mount.fsType || "-"
      } ${mount.readOnly ? "ro" : "rw"}`,
    );
    await Deno.mkdir(this.dir(target), { recursive: true });
    this.mounted.set(`${target.uid}/${target.pv}`, mount.device);
  }

  async unmountLocalBlock(target: LocalBlockTarget): Promise<boolean> {
    // the pod's directory must still be there: removing it first would delete the data
    const present = await Deno.stat(this.dir(target)).then(
      () => true,
      () => false,
    );
    this.calls.push(
      `unmount ${target.uid}/${target.pv}${present ? "" : " (directory gone)"}`,
    );
    if (this.failUnmount) throw new Error("umount: target is busy");
    return this.mounted.delete(`${target.uid}/${target.pv}`);
  }

  isBlockDevice(device: string): Promise<boolean> {
    this.calls.push(`isBlockDevice ${device}`);
    if (!device.startsWith("/dev/")) {
      return Promise.reject(new Error(`${device} is not below /dev`));
    }
    if (this.blockDevices.has(device)) return Promise.resolve(true);
    if (this.otherDevices.has(device)) return Promise.resolve(false);
    return Promise.reject(new Deno.errors.NotFound(`no ${device}`));
  }
}
