/**
 * The devices each registered resource advertises, their health, and what the
 * node reports for them (upstream `ManagerImpl` `genericDeviceUpdateCallback`,
 * `PluginDisconnected`/`markResourceUnhealthy` and `GetCapacity`). No I/O:
 * times are passed in.
 *
 * @module
 */

/** Upstream's device health values. */
export const HEALTHY = "Healthy";

/** Upstream `endpointStopGracePeriod`: a gone plugin's resource stays listed this long. */
export const ENDPOINT_STOP_GRACE_MS = 5 * 60_000;

/** One device as a plugin lists it. */
export interface DeviceInfo {
  id: string;
  health: string;
  /** NUMA node ids from the device's topology (empty: none). */
  numaNodes: number[];
}

/** What the node status reports for device plugin resources. */
export interface DeviceCapacity {
  /** Every device, healthy or not, per resource. */
  capacity: Record<string, number>;
  /** Healthy devices per resource. */
  allocatable: Record<string, number>;
  /** Resources whose plugin has been gone past the grace period (reported as 0 once). */
  removed: string[];
}

interface ResourceState {
  devices: Map<string, DeviceInfo>;
  /** When the plugin's stream ended; undefined while it is connected. */
  stoppedAtMs?: number;
}

/** The advertised devices of every resource. */
export class DeviceInventory {
  #resources = new Map<string, ResourceState>();

  /** A plugin (re-)registered: its resource is live again; its devices come with the stream. */
  connected(resource: string): void {
    const state = this.#resources.get(resource);
    if (state) delete state.stoppedAtMs;
    else this.#resources.set(resource, { devices: new Map() });
  }

  /** A `ListAndWatch` message: the whole device list replaces the previous one. */
  update(resource: string, devices: DeviceInfo[]): void {
    const state = this.#resources.get(resource) ?? { devices: new Map() };
    state.devices = new Map(devices.map((d) => [d.id, d]));
    this.#resources.set(resource, state);
  }

  /**
   * The plugin's stream ended: every device turns unhealthy (allocatable 0) and
   * the grace period starts; capacity stays until it expires.
   */
  disconnected(resource: string, nowMs: number): void {
    const state = this.#resources.get(resource);
    if (!state) return;
    for (const [id, d] of state.devices) {
      state.devices.set(id, { ...d, health: "Unhealthy" });
    }
    state.stoppedAtMs = nowMs;
  }

  /** Whether `resource` is one a plugin advertises (upstream `isDevicePluginResource`). */
  has(resource: string): boolean {
    return this.#resources.has(resource);
  }

  /** Ids of the healthy devices of `resource`; undefined when no plugin registered it. */
  healthy(resource: string): Set<string> | undefined {
    const state = this.#resources.get(resource);
    if (!state) return undefined;
    return new Set(
      [...state.devices.values()].filter((d) => d.health === HEALTHY).map((d) =>
        d.id
      ),
    );
  }

  /** The device `id` of `resource`. */
  device(resource: string, id: string): DeviceInfo | undefined {
    return this.#resources.get(resource)?.devices.get(id);
  }

  /** Every resource's device ids, for the checkpoint's `RegisteredDevices`. */
  registered(): Map<string, string[]> {
    return new Map(
      [...this.#resources].map(([r, s]) => [r, [...s.devices.keys()]]),
    );
  }

  /**
   * Upstream `GetCapacity`: counts per resource; a resource whose plugin has
   * been gone longer than the grace period is dropped and named in `removed`.
   */
  capacity(nowMs: number): DeviceCapacity {
    const out: DeviceCapacity = { capacity: {}, allocatable: {}, removed: [] };
    for (const [resource, state] of this.#resources) {
      if (
        state.stoppedAtMs !== undefined &&
        nowMs - state.stoppedAtMs > ENDPOINT_STOP_GRACE_MS
      ) {
        this.#resources.delete(resource);
        out.removed.push(resource);
        continue;
      }
      const all = [...state.devices.values()];
      out.capacity[resource] = all.length;
      out.allocatable[resource] = all.filter((d) =>
        d.health === HEALTHY
      ).length;
    }
    return out;
  }
}
