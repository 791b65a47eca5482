/**
 * From a pod's `persistentVolumeClaim` or generic `ephemeral` volume to the PersistentVolume
 * bound to its claim, with upstream's checks and messages (desired state of world populator:
 * `createVolumeSpec`, `getPVCExtractPV`, `getPVSpec`; `ephemeral.VolumeIsForPod`). The checks
 * are pure; {@linkcode resolveClaim} reads the two objects and applies them.
 * @module
 */
import {
  ApiStatusError,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type StorageApi,
  type Volume,
} from "../api/mod.ts";
import { errorMessage } from "../util/error_message.ts";

/** What claim resolution reads from the API server. */
export type ClaimReader = Pick<
  StorageApi,
  "getPersistentVolumeClaim" | "getPersistentVolume"
>;

/** The claim a pod volume stands for. */
export interface ClaimReference {
  claimName: string;
  /** `persistentVolumeClaim.readOnly` (an ephemeral volume's claim is never read-only). */
  readOnly: boolean;
  /** A generic ephemeral volume: the claim must be controlled by the pod. */
  ephemeral: boolean;
}

/** A volume's claim, or undefined when the volume is not backed by one. */
export function claimReference(
  pod: Pod,
  volume: Volume,
): ClaimReference | undefined {
  const pvc = volume.persistentVolumeClaim as
    | { claimName?: string; readOnly?: boolean }
    | undefined;
  if (pvc) {
    return {
      claimName: pvc.claimName ?? "",
      readOnly: pvc.readOnly === true,
      ephemeral: false,
    };
  }
  if (volume.ephemeral) {
    // upstream ephemeral.VolumeClaimName
    return {
      claimName: `${pod.metadata.name ?? ""}-${volume.name}`,
      readOnly: false,
      ephemeral: true,
    };
  }
  return undefined;
}

/** Why the claim cannot be used yet (upstream `getPVCExtractPV`), or undefined. */
export function claimProblem(claim: PersistentVolumeClaim): string | undefined {
  const protectedClaim = (claim.metadata.finalizers ?? []).includes(
    "kubernetes.io/pvc-protection",
  );
  if (claim.metadata.deletionTimestamp && !protectedClaim) {
    return "PVC is being deleted";
  }
  if (claim.status?.phase !== "Bound") return "PVC is not bound";
  if (!claim.spec?.volumeName) return "PVC has empty pvc.Spec.VolumeName";
  return undefined;
}

/** Upstream `ephemeral.VolumeIsForPod`: the pod must be the claim's controller. */
export function ephemeralOwnerProblem(
  pod: Pod,
  claim: PersistentVolumeClaim,
): string | undefined {
  const controller = (claim.metadata.ownerReferences ?? []).find((o) =>
    o.controller === true
  );
  if (controller?.uid === pod.metadata.uid) return undefined;
  return `PVC ${claim.metadata.namespace}/${claim.metadata.name} was not created for pod ${pod.metadata.namespace}/${pod.metadata.name} (pod is not owner)`;
}

/** Why the PV is not (yet) the claim's (upstream `getPVSpec`), or undefined. */
export function volumeProblem(
  volume: PersistentVolume,
  claimUid: string | undefined,
): string | undefined {
  const name = volume.metadata.name;
  const ref = volume.spec?.claimRef;
  if (!ref) {
    return `found PV object ${name} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`;
  }
  if ((ref.uid ?? "") !== (claimUid ?? "")) {
    return `found PV object ${name} but its pv.Spec.ClaimRef.UID ${
      ref.uid ?? ""
    } does not point to claim.UID ${claimUid ?? ""}`;
  }
  return undefined;
}

/** An API error as client-go prints it: the server's text, without our request line. */
function apiMessage(error: unknown): string {
  return error instanceof ApiStatusError
    ? error.statusMessage
    : errorMessage(error);
}

/** A claim volume that cannot be set up now; `message` is upstream's text. */
export class ClaimError extends Error {
  override name = "ClaimError";
}

/** A bound claim and its volume. */
export interface ResolvedClaim {
  claim: PersistentVolumeClaim;
  volume: PersistentVolume;
  /** From the pod's `persistentVolumeClaim.readOnly`. */
  readOnly: boolean;
}

/**
 * Reads the claim and its bound volume and checks both.
 * @throws {ClaimError} with upstream's message (`error processing PVC ns/name: ...`).
 */
export async function resolveClaim(
  reader: ClaimReader,
  pod: Pod,
  ref: ClaimReference,
  signal?: AbortSignal,
): Promise<ResolvedClaim> {
  const namespace = pod.metadata.namespace ?? "default";
  const fail = (text: string) =>
    new ClaimError(
      `error processing PVC ${namespace}/${ref.claimName}: ${text}`,
    );
  const options = signal ? { signal } : {};
  let claim: PersistentVolumeClaim;
  try {
    claim = await reader.getPersistentVolumeClaim(
      namespace,
      ref.claimName,
      options,
    );
  } catch (error) {
    throw fail(`failed to fetch PVC from API server: ${apiMessage(error)}`);
  }
  const problem = claimProblem(claim);
  if (problem) throw fail(problem);
  if (ref.ephemeral) {
    // upstream returns this one without the PVC prefix
    const owner = ephemeralOwnerProblem(pod, claim);
    if (owner) throw new ClaimError(owner);
  }
  const name = claim.spec!.volumeName!;
  let volume: PersistentVolume;
  try {
    volume = await reader.getPersistentVolume(name, options);
  } catch (error) {
    throw fail(
      `failed to fetch PV ${name} from API server: ${apiMessage(error)}`,
    );
  }
  const wrong = volumeProblem(volume, claim.metadata.uid);
  if (wrong) throw fail(wrong);
  return { claim, volume, readOnly: ref.readOnly };
}
