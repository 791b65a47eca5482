/**
 * The devices each pod's containers hold, and what the plugins answered for
 * them (upstream `podDevices`): the source of the checkpoint, of the devices
 * in use, and of the envs, mounts, devices and annotations a container is
 * created with (upstream `deviceRunContainerOptions`).
 *
 * @module
 */

/** One container's devices of one resource. */
export interface DeviceEntry {
  podUid: string;
  containerName: string;
  resource: string;
  /** Device ids per NUMA node (-1: no topology), as the checkpoint keeps them. */
  deviceIds: Map<number, string[]>;
  /** The plugin's `ContainerAllocateResponse`, undefined until `Allocate` answered. */
  response?: ContainerResponse;
  /** Read from the checkpoint at start and not admitted since (a kubelet restart). */
  restored?: boolean;
}

/** The parts of a plugin's `ContainerAllocateResponse` a container is made of. */
export interface ContainerResponse {
  envs: Record<string, string>;
  mounts: { containerPath: string; hostPath: string; readOnly: boolean }[];
  devices: { containerPath: string; hostPath: string; permissions: string }[];
  annotations: Record<string, string>;
  cdiDevices: { name: string }[];
}

/** What a container is created with, merged over its resources. */
export interface DeviceRunOptions {
  envs: { key: string; value: string }[];
  mounts: { containerPath: string; hostPath: string; readonly: boolean }[];
  devices: { containerPath: string; hostPath: string; permissions: string }[];
  annotations: Record<string, string>;
  /** CDI device names, each once. */
  cdiDevices: { name: string }[];
  /** Merge conflicts (same key, different values), for the log. */
  conflicts: string[];
}

/** Every id of an entry. */
export function entryIds(entry: DeviceEntry): string[] {
  return [...entry.deviceIds.values()].flat();
}

/** pod uid → container → resource → entry. */
export class PodDevices {
  #pods = new Map<string, Map<string, Map<string, DeviceEntry>>>();

  insert(entry: DeviceEntry): void {
    let containers = this.#pods.get(entry.podUid);
    if (!containers) this.#pods.set(entry.podUid, containers = new Map());
    let resources = containers.get(entry.containerName);
    if (!resources) {
      containers.set(entry.containerName, resources = new Map());
    }
    resources.set(entry.resource, entry);
  }

  get(
    podUid: string,
    containerName: string,
    resource: string,
  ): DeviceEntry | undefined {
    return this.#pods.get(podUid)?.get(containerName)?.get(resource);
  }

  /** The entries of one container, by resource name order. */
  container(podUid: string, containerName: string): DeviceEntry[] {
    const resources = this.#pods.get(podUid)?.get(containerName);
    return [...(resources?.values() ?? [])].sort((a, b) =>
      a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0
    );
  }

  podUids(): string[] {
    return [...this.#pods.keys()];
  }

  hasPod(podUid: string): boolean {
    return this.#pods.has(podUid);
  }

  /** Drops one entry (a pick undone), and its pod when it was the last. */
  remove(entry: DeviceEntry): void {
    const containers = this.#pods.get(entry.podUid);
    const resources = containers?.get(entry.containerName);
    if (resources?.get(entry.resource) !== entry) return;
    resources.delete(entry.resource);
    if (resources.size === 0) containers!.delete(entry.containerName);
    if (containers!.size === 0) this.#pods.delete(entry.podUid);
  }

  removePod(podUid: string): void {
    this.#pods.delete(podUid);
  }

  /** Devices held now, per resource (upstream `podDevices.devices`). */
  inUse(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const entry of this.entries()) {
      let set = out.get(entry.resource);
      if (!set) out.set(entry.resource, set = new Set());
      for (const id of entryIds(entry)) set.add(id);
    }
    return out;
  }

  entries(): DeviceEntry[] {
    return [...this.#pods.values()].flatMap((c) =>
      [...c.values()].flatMap((r) => [...r.values()])
    );
  }
}

/**
 * Upstream `deviceRunContainerOptions`: every resource's answer merged, the
 * first value of an env, mount, device path or annotation winning.
 */
export function deviceRunOptions(entries: DeviceEntry[]): DeviceRunOptions {
  const out: DeviceRunOptions = {
    envs: [],
    mounts: [],
    devices: [],
    annotations: {},
    cdiDevices: [],
    conflicts: [],
  };
  const cdi = new Set<string>();
  const envs = new Map<string, string>();
  const mounts = new Map<string, string>();
  const devices = new Map<string, string>();
  for (const entry of entries) {
    const r = entry.response;
    if (!r) continue;
    for (const [key, value] of Object.entries(r.envs).sort()) {
      const seen = envs.get(key);
      if (seen !== undefined) {
        if (seen !== value) {
          out.conflicts.push(
            `Environment variable ${key} has conflicting setting: ${seen} and ${value}`,
          );
        }
        continue;
      }
      envs.set(key, value);
      out.envs.push({ key, value });
    }
    for (const m of r.mounts) {
      const seen = mounts.get(m.containerPath);
      if (seen !== undefined) {
        if (seen !== m.hostPath) {
          out.conflicts.push(
            `Container path ${m.containerPath} has conflicting mount host paths: ${seen} and ${m.hostPath}`,
          );
        }
        continue;
      }
      mounts.set(m.containerPath, m.hostPath);
      out.mounts.push({
        containerPath: m.containerPath,
        hostPath: m.hostPath,
        readonly: m.readOnly,
      });
    }
    for (const d of r.devices) {
      const seen = devices.get(d.containerPath);
      if (seen !== undefined) {
        if (seen !== d.hostPath) {
          out.conflicts.push(
            `Container device ${d.containerPath} has conflicting mapping host devices: ${seen} and ${d.hostPath}`,
          );
        }
        continue;
      }
      devices.set(d.containerPath, d.hostPath);
      out.devices.push({ ...d });
    }
    for (const [key, value] of Object.entries(r.annotations).sort()) {
      const seen = out.annotations[key];
      if (seen !== undefined) {
        if (seen !== value) {
          out.conflicts.push(
            `Annotation ${key} has conflicting setting: ${seen} and ${value}`,
          );
        }
        continue;
      }
      out.annotations[key] = value;
    }
    for (const { name } of r.cdiDevices) {
      if (cdi.has(name)) continue;
      cdi.add(name);
      out.cdiDevices.push({ name });
    }
  }
  return out;
}
