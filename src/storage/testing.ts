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
