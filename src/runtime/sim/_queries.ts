/**
 * Read-side and exec RPCs of the simulated runtime: status, listing with
 * containerd's filters, resources, exec/attach/port-forward and stats.
 */

import { create } from "@bufbuild/protobuf";
import { DeadlineExceededError, RuntimeError } from "../errors.ts";
import {
  type AttachResponse,
  AttachResponseSchema,
  type ContainerStatsResponse,
  ContainerStatsResponseSchema,
  type ContainerStatusResponse,
  ContainerStatusResponseSchema,
  type ExecResponse,
  ExecResponseSchema,
  type ExecSyncResponse,
  ExecSyncResponseSchema,
  type ListContainersResponse,
  ListContainersResponseSchema,
  type ListContainerStatsResponse,
  ListContainerStatsResponseSchema,
  type ListPodSandboxResponse,
  ListPodSandboxResponseSchema,
  type ListPodSandboxStatsResponse,
  ListPodSandboxStatsResponseSchema,
  type PodSandboxStatsResponse,
  PodSandboxStatsResponseSchema,
  type PodSandboxStatusResponse,
  PodSandboxStatusResponseSchema,
  type PortForwardResponse,
  PortForwardResponseSchema,
  type ReopenContainerLogResponse,
  ReopenContainerLogResponseSchema,
  type UpdateContainerResourcesResponse,
  UpdateContainerResourcesResponseSchema,
} from "../gen/api_pb.ts";
import type { CallOptions, CriRequest } from "../types.ts";
import type { SimDeps, SimHandlers } from "./_deps.ts";
import { interpretCommand } from "./_shell.ts";
import { callWait } from "./_wait.ts";
import { find, labelsMatch, lookup, type SimContainer } from "./_state.ts";
import {
  containerState,
  sandboxState,
  toContainer,
  toContainerStats,
  toContainerStatus,
  toPodSandbox,
  toPodSandboxStats,
  toPodSandboxStatus,
} from "./_convert.ts";

const UNKNOWN = 2;
const ENCODER = new TextEncoder();

/** The verbose `info` JSON, like containerd's (fields differ). */
function verboseInfo(record: object): string {
  return JSON.stringify(record, (key, value) => {
    if (key === "log") return undefined;
    if (typeof value === "bigint") return String(value);
    return value === Infinity ? null : value;
  });
}

/** Queries, exec and stats over the runtime's state. */
export class SimQueries implements Partial<SimHandlers> {
  readonly #deps: SimDeps;

  constructor(deps: SimDeps) {
    this.#deps = deps;
  }

  podSandboxStatus(
    request: CriRequest<"podSandboxStatus">,
  ): PodSandboxStatusResponse {
    const sandbox = lookup(
      this.#deps.store.sandboxes,
      request.podSandboxId,
      "sandbox",
    );
    return create(PodSandboxStatusResponseSchema, {
      status: toPodSandboxStatus(sandbox),
      info: request.verbose ? { info: verboseInfo(sandbox) } : {},
    });
  }

  listPodSandbox(
    request: CriRequest<"listPodSandbox">,
  ): ListPodSandboxResponse {
    const filter = request.filter;
    const only = filter?.id
      ? find(this.#deps.store.sandboxes, filter.id, "sandbox")
      : undefined;
    const items = [];
    for (const s of this.#deps.store.sandboxes.values()) {
      if (filter?.id && s !== only) continue;
      if (filter?.state && sandboxState(s) !== (filter.state.state ?? 0)) {
        continue;
      }
      if (!labelsMatch(s.labels, filter?.labelSelector)) continue;
      items.push(toPodSandbox(s));
    }
    return create(ListPodSandboxResponseSchema, { items });
  }

  #selectContainers(
    filter: {
      id?: string;
      podSandboxId?: string;
      labelSelector?: Record<string, string>;
    } | undefined,
  ): SimContainer[] {
    const only = filter?.id
      ? find(this.#deps.store.containers, filter.id, "container")
      : undefined;
    const sandbox = filter?.podSandboxId
      ? find(this.#deps.store.sandboxes, filter.podSandboxId, "sandbox")
      : undefined;
    const out: SimContainer[] = [];
    for (const c of this.#deps.store.containers.values()) {
      if (filter?.id && c !== only) continue;
      if (filter?.podSandboxId && c.sandboxId !== sandbox?.id) continue;
      if (!labelsMatch(c.labels, filter?.labelSelector)) continue;
      out.push(this.#deps.store.settle(c));
    }
    return out;
  }

  listContainers(
    request: CriRequest<"listContainers">,
  ): ListContainersResponse {
    const filter = request.filter;
    const containers = this.#selectContainers(filter)
      .filter((c) =>
        !filter?.state || containerState(c) === (filter.state.state ?? 0)
      )
      .map(toContainer);
    return create(ListContainersResponseSchema, { containers });
  }

  containerStatus(
    request: CriRequest<"containerStatus">,
  ): ContainerStatusResponse {
    const c = this.#deps.store.settle(
      lookup(this.#deps.store.containers, request.containerId, "container"),
    );
    return create(ContainerStatusResponseSchema, {
      status: toContainerStatus(c, this.#deps.images.resolve(c.imageRef)),
      info: request.verbose ? { info: verboseInfo(c) } : {},
    });
  }

  updateContainerResources(
    request: CriRequest<"updateContainerResources">,
  ): UpdateContainerResourcesResponse {
    const c = this.#deps.store.settle(
      lookup(this.#deps.store.containers, request.containerId, "container"),
    );
    const linux = request.linux;
    if (linux) {
      c.resources = {
        cpuShares: BigInt(linux.cpuShares ?? 0),
        cpuQuota: BigInt(linux.cpuQuota ?? 0),
        cpuPeriod: BigInt(linux.cpuPeriod ?? 0),
        memoryLimitInBytes: BigInt(linux.memoryLimitInBytes ?? 0),
      };
    }
    return create(UpdateContainerResourcesResponseSchema);
  }

  reopenContainerLog(
    request: CriRequest<"reopenContainerLog">,
  ): ReopenContainerLogResponse {
    const c = this.#deps.store.settle(
      lookup(this.#deps.store.containers, request.containerId, "container"),
    );
    if (c.state !== "running") {
      throw new RuntimeError(UNKNOWN, "container is not running");
    }
    return create(ReopenContainerLogResponseSchema);
  }

  #running(id: string | undefined): SimContainer {
    const c = this.#deps.store.settle(
      lookup(this.#deps.store.containers, id, "container"),
    );
    if (c.state !== "running") {
      throw new RuntimeError(
        UNKNOWN,
        `container is in CONTAINER_${c.state.toUpperCase()} state`,
      );
    }
    return c;
  }

  async execSync(
    request: CriRequest<"execSync">,
    options?: CallOptions,
  ): Promise<ExecSyncResponse> {
    const c = this.#running(request.containerId);
    const cmd = request.cmd ?? [];
    const scripted = c.behavior.exec?.find((e) =>
      e.command.length === cmd.length &&
      e.command.every((part, i) => part === cmd[i])
    );
    const outcome = scripted
      ? {
        stdout: scripted.stdout ?? "",
        stderr: scripted.stderr ?? "",
        exitCode: scripted.exitCode ?? 0,
        durationMs: scripted.delayMs ?? 0,
      }
      : interpretCommand(cmd);
    if (!outcome) {
      throw new RuntimeError(
        UNKNOWN,
        `failed to exec in container: failed to start exec: OCI runtime exec failed: exec failed: unable to start container process: exec: "${
          cmd[0] ?? ""
        }": executable file not found in $PATH: unknown`,
      );
    }
    const timeoutS = Number(request.timeout ?? 0);
    if (timeoutS > 0 && outcome.durationMs > timeoutS * 1000) {
      await callWait(this.#deps.clock, timeoutS * 1000, options);
      throw new DeadlineExceededError(
        `timeout ${timeoutS}s exceeded: context deadline exceeded`,
      );
    }
    await callWait(this.#deps.clock, outcome.durationMs, options);
    return create(ExecSyncResponseSchema, {
      stdout: ENCODER.encode(outcome.stdout),
      stderr: ENCODER.encode(outcome.stderr),
      exitCode: outcome.exitCode,
    });
  }

  #streamUrl(kind: string, id: string): string {
    return `http://127.0.0.1:0/${kind}/${
      id.slice(0, 12)
    }-${crypto.randomUUID()}`;
  }

  exec(
    request: CriRequest<"exec">,
  ): ExecResponse {
    const c = this.#running(request.containerId);
    return create(ExecResponseSchema, { url: this.#streamUrl("exec", c.id) });
  }

  attach(
    request: CriRequest<"attach">,
  ): AttachResponse {
    const c = this.#running(request.containerId);
    return create(AttachResponseSchema, {
      url: this.#streamUrl("attach", c.id),
    });
  }

  portForward(
    request: CriRequest<"portForward">,
  ): PortForwardResponse {
    const s = lookup(
      this.#deps.store.sandboxes,
      request.podSandboxId,
      "sandbox",
    );
    return create(PortForwardResponseSchema, {
      url: this.#streamUrl("portforward", s.id),
    });
  }

  containerStats(
    request: CriRequest<"containerStats">,
  ): ContainerStatsResponse {
    const c = this.#deps.store.settle(
      lookup(this.#deps.store.containers, request.containerId, "container"),
    );
    return create(ContainerStatsResponseSchema, {
      stats: toContainerStats(c, this.#deps.clock.now()),
    });
  }

  listContainerStats(
    request: CriRequest<"listContainerStats">,
  ): ListContainerStatsResponse {
    const now = this.#deps.clock.now();
    const stats = this.#selectContainers(request.filter)
      .filter((c) => c.state === "running")
      .map((c) => toContainerStats(c, now));
    return create(ListContainerStatsResponseSchema, { stats });
  }

  #sandboxStats(sandboxId: string, now: number) {
    const s = lookup(this.#deps.store.sandboxes, sandboxId, "sandbox");
    const containers = this.#selectContainers({ podSandboxId: s.id })
      .filter((c) => c.state === "running")
      .map((c) => toContainerStats(c, now));
    return toPodSandboxStats(s, containers, now);
  }

  podSandboxStats(
    request: CriRequest<"podSandboxStats">,
  ): PodSandboxStatsResponse {
    const stats = this.#sandboxStats(
      request.podSandboxId ?? "",
      this.#deps.clock.now(),
    );
    return create(PodSandboxStatsResponseSchema, { stats });
  }

  listPodSandboxStats(
    request: CriRequest<"listPodSandboxStats">,
  ): ListPodSandboxStatsResponse {
    const filter = request.filter;
    const only = filter?.id
      ? find(this.#deps.store.sandboxes, filter.id, "sandbox")
      : undefined;
    const now = this.#deps.clock.now();
    const stats = [...this.#deps.store.sandboxes.values()]
      .filter((s) => s.state === "ready" && (!filter?.id || s === only))
      .filter((s) => labelsMatch(s.labels, filter?.labelSelector))
      .map((s) => this.#sandboxStats(s.id, now));
    return create(ListPodSandboxStatsResponseSchema, { stats });
  }
}
