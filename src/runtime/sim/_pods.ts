/**
 * Sandbox and container lifecycle of the simulated runtime, following
 * containerd 1.6: reserved names, READY/NOTREADY sandboxes, CREATED/RUNNING/
 * EXITED containers. A running container's own exit is computed lazily from
 * `exitAt` whenever it is read (`settle`), so idle containers cost no timer.
 */

import { create } from "@bufbuild/protobuf";
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { NotFoundError, RuntimeError } from "../errors.ts";
import {
  type CreateContainerResponse,
  CreateContainerResponseSchema,
  NamespaceMode,
  type RemoveContainerResponse,
  RemoveContainerResponseSchema,
  type RemovePodSandboxResponse,
  RemovePodSandboxResponseSchema,
  type RunPodSandboxResponse,
  RunPodSandboxResponseSchema,
  type StartContainerResponse,
  StartContainerResponseSchema,
  type StopContainerResponse,
  StopContainerResponseSchema,
  type StopPodSandboxResponse,
  StopPodSandboxResponseSchema,
} from "../gen/api_pb.ts";
import type { CallOptions, CriRequest } from "../types.ts";
import { SimRuntimeBase } from "./_base.ts";
import { normalizeImageRef, SimImageStore } from "./_images.ts";
import { interpretCommand } from "./_shell.ts";
import {
  appendLog,
  find,
  lookup,
  newId,
  type SimContainer,
  type SimSandbox,
} from "./_state.ts";
import { SIM_PAUSE_IMAGE } from "./_images.ts";
import type { SimContainerBehavior, SimScenario } from "./scenario.ts";

const UNKNOWN = 2;
const KILLED = 137;

/** Writes the container's log lines to its CRI log path (creating parents). */
async function writeLogFile(c: SimContainer): Promise<void> {
  try {
    await Deno.mkdir(c.logPath.slice(0, c.logPath.lastIndexOf("/")), {
      recursive: true,
    });
    const text = c.log.map((line) => `${line}\n`).join("");
    await Deno.writeTextFile(c.logPath, text, { append: true });
  } catch (error) {
    throw new RuntimeError(
      UNKNOWN,
      `failed to start container loggers: failed to create and open log file "${c.logPath}": ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
}

/** Lifecycle half of the simulated runtime; see the module comment. */
export class SimPods extends SimRuntimeBase {
  /** Sandboxes by id (tests may read them). */
  readonly sandboxes = new Map<string, SimSandbox>();
  /** Containers by id (tests may read them). */
  readonly containers = new Map<string, SimContainer>();
  protected readonly scenario: SimScenario;
  protected readonly imageStore: SimImageStore;
  readonly #names = new Map<string, string>();
  #nextIp = 2;

  constructor(clock: Clock, scenario: SimScenario, logger: Logger | undefined) {
    super(clock, logger);
    this.scenario = scenario;
    this.imageStore = new SimImageStore(
      scenario,
      scenario.preloadedImages ?? [SIM_PAUSE_IMAGE],
    );
  }

  /** The container's log as CRI-format lines joined by newlines. */
  readLog(containerId: string): string {
    const c = lookup(this.containers, containerId, "container");
    return c.log.map((line) => `${line}\n`).join("");
  }

  /** Applies a container's own exit if its time has come. */
  protected settle(c: SimContainer): SimContainer {
    if (c.state === "running" && this.clock.now() >= c.exitAt) {
      this.#finish(c, c.exitAt, c.plannedExitCode, c.behavior.oomKilled);
    }
    return c;
  }

  #finish(c: SimContainer, at: number, code: number, oom?: boolean): void {
    c.state = "exited";
    c.finishedAt = at;
    c.exitCode = code;
    c.reason = oom ? "OOMKilled" : code === 0 ? "Completed" : "Error";
    c.exitAt = Infinity;
  }

  #reserve(name: string, id: string, kind: "sandbox" | "container"): void {
    const owner = this.#names.get(name);
    // A name whose owner vanished (tests may clear the maps to mimic a runtime
    // that lost its state) is free again.
    const alive = owner !== undefined &&
      (this.sandboxes.has(owner) || this.containers.has(owner));
    if (alive) {
      throw new RuntimeError(
        UNKNOWN,
        `failed to reserve ${kind} name "${name}": name "${name}" is reserved for "${owner}"`,
      );
    }
    this.#names.set(name, id);
  }

  async runPodSandbox(
    request: CriRequest<"runPodSandbox">,
    options?: CallOptions,
  ): Promise<RunPodSandboxResponse> {
    await this.enter("runPodSandbox", options);
    const config = request.config;
    const meta = config?.metadata;
    if (!config || !meta) {
      throw new RuntimeError(UNKNOWN, "sandbox config must include metadata");
    }
    const handler = request.runtimeHandler ?? "";
    if (handler !== "" && handler !== "runc") {
      throw new RuntimeError(
        UNKNOWN,
        `failed to get sandbox runtime: no runtime for "${handler}" is configured`,
      );
    }
    const metadata = {
      name: meta.name ?? "",
      uid: meta.uid ?? "",
      namespace: meta.namespace ?? "",
      attempt: meta.attempt ?? 0,
    };
    const hostNetwork =
      config.linux?.securityContext?.namespaceOptions?.network ===
        NamespaceMode.NODE;
    if (hostNetwork && config.hostname) {
      // runc cannot set a hostname in the host's UTS namespace; the kubelet
      // leaves hostname empty for hostNetwork pods.
      throw new RuntimeError(
        UNKNOWN,
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to set hostname without a private UTS namespace: unknown",
      );
    }
    const id = newId();
    const name =
      `${metadata.name}_${metadata.namespace}_${metadata.uid}_${metadata.attempt}`;
    this.#reserve(name, id, "sandbox");
    let ip = "";
    if (!hostNetwork) {
      const n = this.#nextIp++;
      ip = `${this.scenario.podIpPrefix ?? "10.88"}.${(n >> 8) & 255}.${
        n & 255
      }`;
    }
    this.sandboxes.set(id, {
      id,
      name,
      metadata,
      state: "ready",
      createdAt: this.clock.now(),
      ip,
      hostNetwork,
      hostname: config.hostname ?? "",
      logDirectory: config.logDirectory ?? "",
      runtimeHandler: handler,
      labels: { ...config.labels },
      annotations: { ...config.annotations },
    });
    return create(RunPodSandboxResponseSchema, { podSandboxId: id });
  }

  async stopPodSandbox(
    request: CriRequest<"stopPodSandbox">,
    options?: CallOptions,
  ): Promise<StopPodSandboxResponse> {
    await this.enter("stopPodSandbox", options);
    // containerd 1.6: stopping an unknown sandbox is NotFound (removing one is not).
    const sandbox = lookup(this.sandboxes, request.podSandboxId, "sandbox");
    for (const c of this.containers.values()) {
      if (c.sandboxId === sandbox.id) this.#kill(c);
    }
    sandbox.state = "notready";
    return create(StopPodSandboxResponseSchema);
  }

  async removePodSandbox(
    request: CriRequest<"removePodSandbox">,
    options?: CallOptions,
  ): Promise<RemovePodSandboxResponse> {
    await this.enter("removePodSandbox", options);
    const sandbox = find(this.sandboxes, request.podSandboxId, "sandbox");
    if (sandbox) {
      // containerd 1.6 force-stops a READY sandbox and its containers first.
      sandbox.state = "notready";
      for (const c of [...this.containers.values()]) {
        if (c.sandboxId === sandbox.id) this.#delete(c);
      }
      this.sandboxes.delete(sandbox.id);
      this.#names.delete(sandbox.name);
    }
    return create(RemovePodSandboxResponseSchema);
  }

  #behavior(name: string, image: string): SimContainerBehavior {
    const byImage = this.scenario.containersByImage ?? {};
    return this.scenario.containers?.[name] ?? byImage[image] ??
      byImage[normalizeImageRef(image)] ?? {};
  }

  async createContainer(
    request: CriRequest<"createContainer">,
    options?: CallOptions,
  ): Promise<CreateContainerResponse> {
    await this.enter("createContainer", options);
    const sandboxId = request.podSandboxId;
    const sandbox = find(this.sandboxes, sandboxId, "sandbox");
    if (!sandbox) {
      throw new NotFoundError(
        `failed to find sandbox id "${sandboxId}": not found`,
      );
    }
    if (sandbox.state !== "ready") {
      throw new NotFoundError(
        `failed to get sandbox container task: no running task found: task ${sandbox.id} not found: not found`,
      );
    }
    const config = request.config;
    const meta = config?.metadata;
    if (!config || !meta) {
      throw new RuntimeError(UNKNOWN, "container config must include metadata");
    }
    const metadata = { name: meta.name ?? "", attempt: meta.attempt ?? 0 };
    const sm = sandbox.metadata;
    const name =
      `${metadata.name}_${sm.name}_${sm.namespace}_${sm.uid}_${metadata.attempt}`;
    const imageName = config.image?.image ?? "";
    const image = this.imageStore.resolve(imageName);
    const id = newId();
    this.#reserve(name, id, "container");
    if (!image) {
      this.#names.delete(name);
      throw new NotFoundError(
        `failed to resolve image "${imageName}": no such image "${imageName}": not found`,
      );
    }
    const logDir = request.sandboxConfig?.logDirectory ?? sandbox.logDirectory;
    const logPath = config.logPath && logDir
      ? `${logDir.replace(/\/+$/, "")}/${config.logPath}`
      : "";
    this.containers.set(id, {
      id,
      sandboxId: sandbox.id,
      name,
      metadata,
      image: imageName,
      imageRef: image.id,
      command: [...(config.command ?? []), ...(config.args ?? [])],
      state: "created",
      createdAt: this.clock.now(),
      startedAt: 0,
      finishedAt: 0,
      exitCode: 0,
      reason: "",
      message: "",
      exitAt: Infinity,
      plannedExitCode: 0,
      ignoreSigterm: false,
      sigtermExitCode: 143,
      behavior: this.#behavior(metadata.name, imageName),
      labels: { ...config.labels },
      annotations: { ...config.annotations },
      logPath,
      log: [],
      mounts: (config.mounts ?? []).map((m) => ({
        containerPath: m.containerPath ?? "",
        hostPath: m.hostPath ?? "",
        readonly: m.readonly ?? false,
      })),
      resources: undefined,
    });
    return create(CreateContainerResponseSchema, { containerId: id });
  }

  async startContainer(
    request: CriRequest<"startContainer">,
    options?: CallOptions,
  ): Promise<StartContainerResponse> {
    await this.enter("startContainer", options);
    const c = lookup(this.containers, request.containerId, "container");
    if (c.state !== "created") {
      throw new RuntimeError(
        UNKNOWN,
        `failed to set starting state for container "${c.id}": container is in CONTAINER_${c.state.toUpperCase()} state`,
      );
    }
    const sandbox = this.sandboxes.get(c.sandboxId);
    if (!sandbox || sandbox.state !== "ready") {
      const message = `sandbox container "${c.sandboxId}" is not running`;
      this.#finish(c, this.clock.now(), 128);
      c.reason = "StartError";
      c.message = message;
      throw new RuntimeError(UNKNOWN, message);
    }
    await this.wait(c.behavior.startDelayMs ?? 0, options);
    const now = this.clock.now();
    const outcome = c.command.length > 0
      ? interpretCommand(c.command)
      : { stdout: "", stderr: "", exitCode: 0, durationMs: Infinity };
    const startError = c.behavior.startError ??
      (outcome
        ? undefined
        : `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "${
          c.command[0]
        }": executable file not found in $PATH: unknown`);
    if (startError !== undefined) {
      this.#finish(c, now, 128);
      c.reason = "StartError";
      c.message = startError;
      throw new RuntimeError(UNKNOWN, startError);
    }
    c.state = "running";
    c.startedAt = now;
    const b = c.behavior;
    if (b.exitAfterMs !== undefined) {
      c.exitAt = now + b.exitAfterMs;
      c.plannedExitCode = b.exitCode ?? (b.oomKilled ? KILLED : 0);
    } else {
      c.exitAt = now + (outcome?.durationMs ?? Infinity);
      c.plannedExitCode = outcome?.exitCode ?? 0;
    }
    c.ignoreSigterm = b.ignoreSigterm ?? outcome?.ignoresTerm ?? false;
    c.sigtermExitCode = b.sigtermExitCode ?? outcome?.termExitCode ?? 143;
    appendLog(c.log, now, "stdout", outcome?.stdout ?? "");
    appendLog(c.log, now, "stderr", outcome?.stderr ?? "");
    for (const line of b.logs ?? []) {
      appendLog(c.log, now, "stdout", `${line}\n`);
    }
    if (this.scenario.logFiles && c.logPath) await writeLogFile(c);
    return create(StartContainerResponseSchema);
  }

  /** SIGKILL now (exit 137), unless it already exited. */
  #kill(c: SimContainer): void {
    this.settle(c);
    if (c.state === "running") this.#finish(c, this.clock.now(), KILLED);
  }

  #delete(c: SimContainer): void {
    this.#kill(c);
    this.containers.delete(c.id);
    this.#names.delete(c.name);
  }

  async stopContainer(
    request: CriRequest<"stopContainer">,
    options?: CallOptions,
  ): Promise<StopContainerResponse> {
    await this.enter("stopContainer", options);
    // containerd 1.6: stopping an unknown container is NotFound (removing one is not).
    const c = lookup(this.containers, request.containerId, "container");
    if (this.settle(c).state !== "running") {
      return create(StopContainerResponseSchema);
    }
    const timeoutMs = Number(request.timeout ?? 0) * 1000;
    if (timeoutMs <= 0) {
      this.#kill(c);
      return create(StopContainerResponseSchema);
    }
    if (!c.ignoreSigterm) {
      this.#finish(c, this.clock.now(), c.sigtermExitCode);
      return create(StopContainerResponseSchema);
    }
    const now = this.clock.now();
    await this.wait(Math.min(timeoutMs, c.exitAt - now), options);
    this.#kill(c);
    return create(StopContainerResponseSchema);
  }

  async removeContainer(
    request: CriRequest<"removeContainer">,
    options?: CallOptions,
  ): Promise<RemoveContainerResponse> {
    await this.enter("removeContainer", options);
    const c = find(this.containers, request.containerId, "container");
    if (c) this.#delete(c);
    return create(RemoveContainerResponseSchema);
  }
}
