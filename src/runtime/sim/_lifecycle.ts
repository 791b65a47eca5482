/**
 * Sandbox and container lifecycle RPCs of the simulated runtime, following
 * containerd 1.6: reserved names, READY/NOTREADY sandboxes, CREATED/RUNNING/
 * EXITED containers. The records and their state rules live in `_store.ts`.
 */

import { create } from "@bufbuild/protobuf";
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
import type { SimDeps, SimHandlers } from "./_deps.ts";
import { normalizeImageRef } from "./_images.ts";
import { interpretCommand } from "./_shell.ts";
import { appendLog, find, lookup, newId, type SimContainer } from "./_state.ts";
import { KILLED } from "./_store.ts";
import { callWait } from "./_wait.ts";
import type { SimContainerBehavior } from "./scenario.ts";
import { errorMessage } from "../../util/error_message.ts";

const UNKNOWN = 2;

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
        errorMessage(error)
      }`,
      { cause: error },
    );
  }
}

/** The lifecycle RPCs; see the module comment. */
export class SimLifecycle implements Partial<SimHandlers> {
  readonly #deps: SimDeps;

  constructor(deps: SimDeps) {
    this.#deps = deps;
  }

  runPodSandbox(
    request: CriRequest<"runPodSandbox">,
  ): RunPodSandboxResponse {
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
    this.#deps.store.reserve(name, id, "sandbox");
    let ip = "";
    if (!hostNetwork) {
      const n = this.#deps.store.nextIpIndex();
      ip = `${this.#deps.scenario.podIpPrefix ?? "10.88"}.${(n >> 8) & 255}.${
        n & 255
      }`;
    }
    this.#deps.store.sandboxes.set(id, {
      id,
      name,
      metadata,
      state: "ready",
      createdAt: this.#deps.clock.now(),
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

  stopPodSandbox(
    request: CriRequest<"stopPodSandbox">,
  ): StopPodSandboxResponse {
    // containerd 1.6: stopping an unknown sandbox is NotFound (removing one is not).
    const sandbox = lookup(
      this.#deps.store.sandboxes,
      request.podSandboxId,
      "sandbox",
    );
    for (const c of this.#deps.store.containers.values()) {
      if (c.sandboxId === sandbox.id) this.#deps.store.kill(c);
    }
    sandbox.state = "notready";
    return create(StopPodSandboxResponseSchema);
  }

  removePodSandbox(
    request: CriRequest<"removePodSandbox">,
  ): RemovePodSandboxResponse {
    const sandbox = find(
      this.#deps.store.sandboxes,
      request.podSandboxId,
      "sandbox",
    );
    if (sandbox) {
      // containerd 1.6 force-stops a READY sandbox and its containers first.
      this.#deps.store.deleteSandbox(sandbox);
    }
    return create(RemovePodSandboxResponseSchema);
  }

  #behavior(name: string, image: string): SimContainerBehavior {
    const byImage = this.#deps.scenario.containersByImage ?? {};
    return this.#deps.scenario.containers?.[name] ?? byImage[image] ??
      byImage[normalizeImageRef(image)] ?? {};
  }

  createContainer(
    request: CriRequest<"createContainer">,
  ): CreateContainerResponse {
    const sandboxId = request.podSandboxId;
    const sandbox = find(this.#deps.store.sandboxes, sandboxId, "sandbox");
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
    const image = this.#deps.images.resolve(imageName);
    const id = newId();
    this.#deps.store.reserve(name, id, "container");
    if (!image) {
      this.#deps.store.release(name);
      throw new NotFoundError(
        `failed to resolve image "${imageName}": no such image "${imageName}": not found`,
      );
    }
    const logDir = request.sandboxConfig?.logDirectory ?? sandbox.logDirectory;
    const logPath = config.logPath && logDir
      ? `${logDir.replace(/\/+$/, "")}/${config.logPath}`
      : "";
    this.#deps.store.containers.set(id, {
      id,
      sandboxId: sandbox.id,
      name,
      metadata,
      image: imageName,
      imageRef: image.id,
      command: [...(config.command ?? []), ...(config.args ?? [])],
      state: "created",
      createdAt: this.#deps.clock.now(),
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
    const c = lookup(
      this.#deps.store.containers,
      request.containerId,
      "container",
    );
    if (c.state !== "created") {
      throw new RuntimeError(
        UNKNOWN,
        `failed to set starting state for container "${c.id}": container is in CONTAINER_${c.state.toUpperCase()} state`,
      );
    }
    const sandbox = this.#deps.store.sandboxes.get(c.sandboxId);
    if (!sandbox || sandbox.state !== "ready") {
      const message = `sandbox container "${c.sandboxId}" is not running`;
      this.#deps.store.finish(c, this.#deps.clock.now(), 128);
      c.reason = "StartError";
      c.message = message;
      throw new RuntimeError(UNKNOWN, message);
    }
    await callWait(this.#deps.clock, c.behavior.startDelayMs ?? 0, options);
    const now = this.#deps.clock.now();
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
      this.#deps.store.finish(c, now, 128);
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
    if (this.#deps.scenario.logFiles && c.logPath) await writeLogFile(c);
    return create(StartContainerResponseSchema);
  }

  async stopContainer(
    request: CriRequest<"stopContainer">,
    options?: CallOptions,
  ): Promise<StopContainerResponse> {
    // containerd 1.6: stopping an unknown container is NotFound (removing one is not).
    const c = lookup(
      this.#deps.store.containers,
      request.containerId,
      "container",
    );
    if (this.#deps.store.settle(c).state !== "running") {
      return create(StopContainerResponseSchema);
    }
    const timeoutMs = Number(request.timeout ?? 0) * 1000;
    if (timeoutMs <= 0) {
      this.#deps.store.kill(c);
      return create(StopContainerResponseSchema);
    }
    if (!c.ignoreSigterm) {
      this.#deps.store.finish(c, this.#deps.clock.now(), c.sigtermExitCode);
      return create(StopContainerResponseSchema);
    }
    const now = this.#deps.clock.now();
    await callWait(
      this.#deps.clock,
      Math.min(timeoutMs, c.exitAt - now),
      options,
    );
    this.#deps.store.kill(c);
    return create(StopContainerResponseSchema);
  }

  removeContainer(
    request: CriRequest<"removeContainer">,
  ): RemoveContainerResponse {
    const c = find(
      this.#deps.store.containers,
      request.containerId,
      "container",
    );
    if (c) this.#deps.store.delete(c);
    return create(RemoveContainerResponseSchema);
  }
}
