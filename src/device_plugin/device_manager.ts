/**
 * The kubelet's device manager (upstream `cm/devicemanager`): serves
 * `Registration` on `<pluginDir>/kubelet.sock`, connects to each
 * registered plugin (`GetDevicePluginOptions`, the `ListAndWatch` stream),
 * picks devices at admission, calls the plugin's `Allocate` (and
 * `PreStartContainer` when asked) before a container is created, and keeps
 * the allocations in upstream's checkpoint.
 *
 * Admission is synchronous in this kubelet, so the pick of devices (and the
 * rejection when there are too few) happens there, and the plugin's
 * `Allocate` at container creation: a failing `Allocate` fails the container
 * (`CreateContainerConfigError`) where upstream rejects the pod.
 *
 * @module
 */

import type { Container, Pod } from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { isSidecar } from "../pod/mod.ts";
import { createGrpcTransport, type GrpcTransport } from "../runtime/mod.ts";
import { quantityValue } from "../util/quantity.ts";
import { errorMessage } from "../util/error_message.ts";
import {
  DevicePlugin,
  type DevicePluginOptions,
  Registration,
} from "./gen/deviceplugin_pb.ts";
import {
  CHECKPOINT_NAME,
  KUBELET_SOCKET_NAME,
  registrationProblem,
} from "./registration.ts";
import { type DeviceCapacity, DeviceInventory } from "./inventory.ts";
import {
  AllocationError,
  allocationRefusal,
  devicesToAllocate,
} from "./allocation.ts";
import {
  type DeviceEntry,
  type DeviceRunOptions,
  deviceRunOptions,
  entryIds,
  PodDevices,
} from "./pod_devices.ts";
import {
  decodeDeviceCheckpoint,
  encodeDeviceCheckpoint,
  responseFromBytes,
} from "./checkpoint.ts";
import {
  GrpcStatusError,
  type GrpcUnixServer,
  serveGrpcUnix,
  unaryRoute,
} from "./grpc_server.ts";
import { toBinary } from "@bufbuild/protobuf";
import { ContainerAllocateResponseSchema } from "./gen/deviceplugin_pb.ts";

/** Upstream's dial timeout for a plugin (`dial`: 10 s). */
const DIAL_TIMEOUT_MS = 10_000;
/** Upstream `KubeletPreStartContainerRPCTimeoutInSecs`. */
const PRE_START_TIMEOUT_MS = 30_000;
/** gRPC `Unknown`, the code grpc-go gives a handler's plain error. */
const GRPC_UNKNOWN = 2;

/** The file operations the manager needs (real ones by default). */
export interface DeviceManagerFiles {
  mkdir(path: string): Promise<void>;
  readTextFile(path: string): Promise<string | undefined>;
  writeTextFile(path: string, text: string): Promise<void>;
  /** Names of the unix sockets in `dir`. */
  sockets(dir: string): Promise<string[]>;
  remove(path: string): Promise<void>;
}

export interface DeviceManagerOptions {
  /** Where plugins register (`/var/lib/kubelet/device-plugins` in the kubelet). */
  pluginDir: string;
  clock: Clock;
  logger: Logger;
  files?: DeviceManagerFiles;
  /** Told when the advertised devices change (for a sooner node status update). */
  onChange?: () => void;
  /** Whether this process may connect to the unix socket `path` (default: Deno's net permission). */
  mayConnect?: (path: string) => boolean;
}

/** Deno's answer for `net unix:<path>` (a unix connect also needs read and write on it). */
export function denoMayConnect(path: string): boolean {
  return Deno.permissions.querySync({ name: "net", host: `unix:${path}` })
    .state === "granted";
}

/**
 * The refusal a plugin gets when the permission lists do not name its socket:
 * Deno grants unix sockets by exact path, and plugin sockets are named at run time.
 */
export function socketNotGranted(path: string): string {
  return `kubelet.ts may not connect to the device plugin socket ${path}: its permission lists do not grant net "unix:${path}" (Deno grants unix sockets by exact path, and device plugins name theirs at run time); build the lists with --device-plugin-socket for it (or add the path to custom lists, with read/write on it) or run the kubelet with every permission`;
}

interface Endpoint {
  transport: GrpcTransport;
  options: DevicePluginOptions;
}

const REAL_FILES: DeviceManagerFiles = {
  mkdir: (path) => Deno.mkdir(path, { recursive: true, mode: 0o750 }),
  readTextFile: async (path) => {
    try {
      return await Deno.readTextFile(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
  },
  writeTextFile: async (path, text) => {
    const tmp = `${path}.tmp`;
    await Deno.writeTextFile(tmp, text, { mode: 0o644 });
    await Deno.rename(tmp, path);
  },
  sockets: async (dir) => {
    const out: string[] = [];
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile || e.isDirectory || e.isSymlink) continue;
      out.push(e.name);
    }
    return out;
  },
  remove: (path) => Deno.remove(path),
};

function limitsOf(container: Container): [string, number][] {
  return Object.entries(container.resources?.limits ?? {}).map((
    [name, value],
  ) => [name, quantityValue(value)]);
}

/** The device manager of one kubelet. */
export class DeviceManager {
  readonly pluginDir: string;
  #clock: Clock;
  #logger: Logger;
  #files: DeviceManagerFiles;
  #onChange: () => void;
  #mayConnect: (path: string) => boolean;
  #inventory = new DeviceInventory();
  #pods = new PodDevices();
  #endpoints = new Map<string, Endpoint>();
  #server: GrpcUnixServer | undefined;
  #checkpointWrite: Promise<void> = Promise.resolve();

  constructor(options: DeviceManagerOptions) {
    this.pluginDir = options.pluginDir;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#files = options.files ?? REAL_FILES;
    this.#onChange = options.onChange ?? (() => {});
    this.#mayConnect = options.mayConnect ?? denoMayConnect;
  }

  get socketPath(): string {
    return `${this.pluginDir}/${KUBELET_SOCKET_NAME}`;
  }

  get checkpointPath(): string {
    return `${this.pluginDir}/${CHECKPOINT_NAME}`;
  }

  /**
   * Upstream `Start`: reads the checkpoint (its resources come back with no
   * devices and a stopped plugin), removes stale sockets, serves `Register`.
   */
  async start(): Promise<void> {
    await this.#files.mkdir(this.pluginDir);
    await this.#readCheckpoint();
    for (const name of await this.#files.sockets(this.pluginDir)) {
      await this.#files.remove(`${this.pluginDir}/${name}`).catch((error) =>
        this.#logger.error("Failed to remove file", {
          path: `${this.pluginDir}/${name}`,
          err: errorMessage(error),
        })
      );
    }
    this.#server = await serveGrpcUnix(this.socketPath, [
      unaryRoute(Registration.method.register, async (request) => {
        await this.register(
          request.version,
          request.endpoint,
          request.resourceName,
        );
        return {};
      }),
    ]);
    this.#logger.info("Serving device plugin registration server on", {
      socket: this.socketPath,
    });
  }

  /** Stops serving and closes every plugin connection. */
  async stop(): Promise<void> {
    await this.#server?.close();
    this.#server = undefined;
    const endpoints = [...this.#endpoints.values()];
    this.#endpoints.clear();
    await Promise.all(endpoints.map((e) => e.transport.close()));
    await this.#checkpointWrite;
  }

  /** Upstream `Register` then `connectClient`; throws a GrpcStatusError to refuse. */
  async register(
    version: string,
    endpoint: string,
    resourceName: string,
  ): Promise<void> {
    this.#logger.info(
      "Got registration request from device plugin with resource",
      { resourceName },
    );
    const problem = registrationProblem({ version, endpoint, resourceName });
    if (problem) {
      this.#logger.error("Bad registration request from device plugin", {
        resourceName,
        err: problem,
      });
      throw new GrpcStatusError(GRPC_UNKNOWN, problem);
    }
    const socket = `${this.pluginDir}/${endpoint}`;
    if (!this.#mayConnect(socket)) {
      const message = socketNotGranted(socket);
      this.#logger.error("Cannot connect to the device plugin", {
        resourceName,
        err: message,
      });
      throw new GrpcStatusError(GRPC_UNKNOWN, message);
    }
    const transport = createGrpcTransport({
      endpoint: socket,
      flag: "device plugin endpoint",
      connectRetryDelaysMs: [],
      logger: this.#logger,
    });
    let options: DevicePluginOptions;
    try {
      options = await transport.unary(
        DevicePlugin.method.getDevicePluginOptions,
        {},
        { timeoutMs: DIAL_TIMEOUT_MS },
      );
    } catch (error) {
      await transport.close();
      const message = `failed to get device plugin options: ${
        errorMessage(error)
      }`;
      this.#logger.error("Error connecting to device plugin client", {
        resourceName,
        err: message,
      });
      throw new GrpcStatusError(GRPC_UNKNOWN, message);
    }
    const old = this.#endpoints.get(resourceName);
    const mine: Endpoint = { transport, options };
    this.#endpoints.set(resourceName, mine);
    this.#inventory.connected(resourceName);
    if (old) void old.transport.close();
    this.#logger.info("Device plugin connected", { resourceName });
    void this.#watch(resourceName, mine);
  }

  /** Upstream `client.Run`: the `ListAndWatch` stream until it ends. */
  async #watch(resource: string, endpoint: Endpoint): Promise<void> {
    try {
      for await (
        const response of endpoint.transport.serverStream(
          DevicePlugin.method.listAndWatch,
          {},
        )
      ) {
        if (this.#endpoints.get(resource) !== endpoint) return;
        this.#inventory.update(
          resource,
          response.devices.map((d) => ({
            id: d.ID,
            health: d.health,
            numaNodes: (d.topology?.nodes ?? []).map((n) => Number(n.ID)),
          })),
        );
        const healthy = this.#inventory.healthy(resource)?.size ?? 0;
        this.#logger.info("Processed device updates for resource", {
          resourceName: resource,
          totalCount: response.devices.length,
          healthyCount: healthy,
        });
        this.#writeCheckpoint();
        this.#onChange();
      }
      this.#logger.error("ListAndWatch ended unexpectedly for device plugin", {
        resource,
      });
    } catch (error) {
      this.#logger.error("ListAndWatch ended unexpectedly for device plugin", {
        resource,
        err: errorMessage(error),
      });
    }
    if (this.#endpoints.get(resource) !== endpoint) return;
    // upstream keeps the endpoint (stopped) for the grace period
    this.#inventory.disconnected(resource, this.#clock.now());
    void endpoint.transport.close();
    this.#logger.info("Endpoint became unhealthy", { resourceName: resource });
    this.#onChange();
  }

  /** What the node status reports (upstream `GetCapacity`). */
  capacity(): DeviceCapacity {
    const out = this.#inventory.capacity(this.#clock.now());
    for (const resource of out.removed) this.#endpoints.delete(resource);
    if (out.removed.length) this.#writeCheckpoint();
    return out;
  }

  /**
   * Admission (upstream `Allocate` for every container, init containers
   * first): picks the devices or refuses the pod. Devices of pods no longer in
   * `activePodUids` are freed first (upstream `UpdateAllocatedDevices`).
   */
  admit(
    pod: Pod,
    activePodUids: ReadonlySet<string>,
  ): { admit: true } | { admit: false; reason: string; message: string } {
    const uid = pod.metadata.uid ?? "";
    const wanted = [...(pod.spec.initContainers ?? []), ...pod.spec.containers]
      .some((c) => limitsOf(c).some(([r]) => this.#inventory.has(r)));
    if (!wanted) return { admit: true };
    this.#freeInactive(new Set([...activePodUids, uid]));
    const added: DeviceEntry[] = [];
    const reusable = new Map<string, Set<string>>();
    try {
      for (const init of pod.spec.initContainers ?? []) {
        const entries = this.#allocateContainer(uid, init, reusable);
        added.push(...entries);
        const sidecar = isSidecar(init);
        for (const e of entries) {
          const set = reusable.get(e.resource) ?? new Set();
          for (const id of entryIds(e)) {
            if (sidecar) set.delete(id);
            else set.add(id);
          }
          reusable.set(e.resource, set);
        }
      }
      for (const container of pod.spec.containers) {
        const entries = this.#allocateContainer(uid, container, reusable);
        added.push(...entries);
        for (const e of entries) {
          for (const id of entryIds(e)) reusable.get(e.resource)?.delete(id);
        }
      }
    } catch (error) {
      if (!(error instanceof AllocationError)) throw error;
      for (const e of added) this.#forget(e);
      return { admit: false, ...allocationRefusal(error) };
    }
    if (added.length) this.#writeCheckpoint();
    return { admit: true };
  }

  #allocateContainer(
    podUid: string,
    container: Container,
    reusable: Map<string, Set<string>>,
  ): DeviceEntry[] {
    const out: DeviceEntry[] = [];
    for (const [resource, required] of limitsOf(container)) {
      if (!this.#inventory.has(resource)) continue;
      const held = this.#pods.get(podUid, container.name, resource);
      if (held?.restored) {
        // a kubelet restart: the container kept its devices, whose plugin may not have
        // registered again yet (upstream skips the checks for running containers then)
        delete held.restored;
        continue;
      }
      const inUse = this.#pods.inUse().get(resource) ?? new Set<string>();
      const ids = devicesToAllocate({
        podUid,
        containerName: container.name,
        resource,
        required,
        ...(held ? { held: new Set(entryIds(held)) } : {}),
        healthy: this.#inventory.healthy(resource),
        inUse,
        ...(reusable.has(resource)
          ? { reusable: reusable.get(resource)! }
          : {}),
      });
      if (ids.length === 0) continue;
      const deviceIds = new Map<number, string[]>();
      for (const id of ids) {
        const numa = this.#inventory.device(resource, id)?.numaNodes ?? [];
        for (const node of numa.length ? numa : [-1]) {
          deviceIds.set(node, [...(deviceIds.get(node) ?? []), id]);
        }
      }
      const entry: DeviceEntry = {
        podUid,
        containerName: container.name,
        resource,
        deviceIds,
      };
      this.#pods.insert(entry);
      out.push(entry);
    }
    return out;
  }

  #forget(entry: DeviceEntry): void {
    this.#pods.remove(entry);
  }

  #freeInactive(active: ReadonlySet<string>): void {
    let changed = false;
    for (const uid of this.#pods.podUids()) {
      if (!active.has(uid)) {
        this.#pods.removePod(uid);
        changed = true;
      }
    }
    if (changed) this.#writeCheckpoint();
  }

  /**
   * Before a container is created (upstream `GetDeviceRunContainerOptions`):
   * calls the plugin's `Allocate` for devices it was not asked about yet and
   * `PreStartContainer` when the plugin wants it; returns what the container
   * is made with, or undefined when it holds no devices.
   * @throws {Error} naming the plugin's failure.
   */
  async containerOptions(
    pod: Pod,
    container: Container,
    signal?: AbortSignal,
  ): Promise<DeviceRunOptions | undefined> {
    const uid = pod.metadata.uid ?? "";
    const entries = this.#pods.container(uid, container.name);
    if (entries.length === 0) return undefined;
    for (const entry of entries) {
      const endpoint = this.#endpoints.get(entry.resource);
      if (!entry.response) {
        if (!endpoint) {
          throw new Error(`unknown Device Plugin ${entry.resource}`);
        }
        const response = await endpoint.transport.unary(
          DevicePlugin.method.allocate,
          { containerRequests: [{ devicesIds: entryIds(entry) }] },
          signal ? { signal } : {},
        );
        const first = response.containerResponses[0];
        if (!first) {
          throw new Error(
            `no containers return in allocation response ${
              JSON.stringify(response.containerResponses)
            }`,
          );
        }
        entry.response = responseFromBytes(
          toBinary(ContainerAllocateResponseSchema, first),
        );
        this.#writeCheckpoint();
      }
      if (endpoint?.options.preStartRequired) {
        try {
          await endpoint.transport.unary(
            DevicePlugin.method.preStartContainer,
            { devicesIds: entryIds(entry) },
            { timeoutMs: PRE_START_TIMEOUT_MS, ...(signal ? { signal } : {}) },
          );
        } catch (error) {
          throw new Error(
            `device plugin PreStartContainer rpc failed with err: ${
              errorMessage(error)
            }`,
          );
        }
      }
    }
    const options = deviceRunOptions(entries);
    for (const conflict of options.conflicts) {
      this.#logger.error(conflict, { pod: pod.metadata.name });
    }
    return options;
  }

  /**
   * Upstream `UpdatePluginResources`: for a pod holding devices, the devices allocated on
   * the node per resource (empty for any other pod).
   */
  pluginResources(pod: Pod): Map<string, number> {
    if (!this.#pods.hasPod(pod.metadata.uid ?? "")) return new Map();
    return new Map(
      [...this.#pods.inUse()].map(([resource, ids]) => [resource, ids.size]),
    );
  }

  /** Device ids a container holds per resource (for tests and the pod resources view). */
  containerDevices(
    podUid: string,
    containerName: string,
  ): Map<string, string[]> {
    return new Map(
      this.#pods.container(podUid, containerName).map((
        e,
      ) => [e.resource, entryIds(e)]),
    );
  }

  async #readCheckpoint(): Promise<void> {
    const text = await this.#files.readTextFile(this.checkpointPath);
    if (text === undefined) return;
    try {
      const data = decodeDeviceCheckpoint(text, this.checkpointPath);
      for (const entry of data.entries) {
        this.#pods.insert({ ...entry, restored: true });
      }
      const now = this.#clock.now();
      for (const resource of data.registered.keys()) {
        this.#inventory.connected(resource);
        this.#inventory.disconnected(resource, now);
      }
    } catch (error) {
      // upstream goes on: allocations may be out of date
      this.#logger.error(
        "Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date",
        { err: errorMessage(error) },
      );
    }
  }

  #writeCheckpoint(): void {
    const text = encodeDeviceCheckpoint({
      entries: this.#pods.entries(),
      registered: this.#inventory.registered(),
    });
    this.#checkpointWrite = this.#checkpointWrite.then(() =>
      this.#files.writeTextFile(this.checkpointPath, text)
    ).catch((error) =>
      this.#logger.error("Writing checkpoint encountered", {
        err: errorMessage(error),
      })
    );
  }
}
