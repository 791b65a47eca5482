/**
 * Which devices a container gets (upstream `ManagerImpl.devicesToAllocate`
 * without a topology manager or the plugin's preferred allocation): the ones
 * it already holds, else devices an init container of the same pod released,
 * else free healthy ones, in id order. Pure; errors carry upstream's texts.
 *
 * @module
 */

/** What the decision reads. */
export interface AllocationInput {
  podUid: string;
  containerName: string;
  resource: string;
  /** The container's limit for the resource. */
  required: number;
  /** Devices this container already holds (a restart), if any. */
  held?: ReadonlySet<string>;
  /** Healthy devices of the resource; undefined when no plugin registered it. */
  healthy: ReadonlySet<string> | undefined;
  /** Devices held by any container now. */
  inUse: ReadonlySet<string>;
  /** Devices the pod's finished init containers hold, reusable by this one. */
  reusable?: ReadonlySet<string>;
}

/** A refusal with upstream's message. */
export class AllocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AllocationError";
  }
}

/**
 * The new devices to give the container: `[]` when it holds what it needs.
 * @throws {AllocationError} when the resource is unknown, unhealthy or short.
 */
export function devicesToAllocate(input: AllocationInput): string[] {
  const { resource, required } = input;
  const held = input.held;
  let needed = required;
  if (held) {
    needed -= held.size;
    if (needed !== 0) {
      throw new AllocationError(
        `pod "${input.podUid}" container "${input.containerName}" changed request for resource "${resource}" from ${held.size} to ${required}`,
      );
    }
  }
  const healthy = input.healthy;
  if (!healthy) {
    throw new AllocationError(
      `cannot allocate unregistered device ${resource}`,
    );
  }
  if (healthy.size === 0) {
    throw new AllocationError(
      `no healthy devices present; cannot allocate unhealthy devices ${resource}`,
    );
  }
  if (held && ![...held].every((id) => healthy.has(id))) {
    throw new AllocationError(
      `previously allocated devices are no longer healthy; cannot allocate unhealthy devices ${resource}`,
    );
  }
  if (needed === 0) return [];
  const chosen: string[] = [];
  for (const id of [...(input.reusable ?? [])].sort()) {
    if (chosen.length === needed) break;
    chosen.push(id);
  }
  if (chosen.length === needed) return chosen;
  const available = [...healthy].filter((id) =>
    !input.inUse.has(id) && !chosen.includes(id)
  ).sort();
  const stillNeeded = needed - chosen.length;
  if (available.length < stillNeeded) {
    throw new AllocationError(
      `requested number of devices unavailable for ${resource}. Requested: ${stillNeeded}, Available: ${available.length}`,
    );
  }
  return [...chosen, ...available.slice(0, stillNeeded)];
}

/** Upstream `admission` `unexpectedAdmissionError`: the pod's rejection. */
export function allocationRefusal(
  error: unknown,
): { reason: string; message: string } {
  const detail = error instanceof Error ? error.message : String(error);
  return {
    reason: "UnexpectedAdmissionError",
    message: `Allocate failed due to ${detail}, which is unexpected`,
  };
}
