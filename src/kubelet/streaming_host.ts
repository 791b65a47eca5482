/**
 * The kubelet side of exec, attach, port-forward and run (upstream `GetExec`, `GetAttach`,
 * `GetPortForward`, `RunInContainer` and `findContainer` in pkg/kubelet/kubelet_pods.go): the
 * pod must be one of the kubelet's pods, the container is found among the runtime's running
 * containers by its pod's labels, and CRI hands out the streaming URL (or runs the command).
 *
 * @module
 */

import type { Kubelet } from "./create_kubelet.ts";
import {
  CONTAINER_NAME_LABEL,
  type Pod,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_UID_LABEL,
} from "../pod/mod.ts";
import {
  isNotFound,
  RuntimeError,
  type RuntimeService,
} from "../runtime/mod.ts";
import {
  type ContainerTarget,
  HttpError,
  type PodTarget,
  type StreamingHost,
} from "../server/mod.ts";

/** What the streaming endpoints read and call. */
export interface StreamingDeps {
  kubelet: Pick<Kubelet, "podConfig">;
  runtime: Pick<
    RuntimeService,
    | "listContainers"
    | "listPodSandbox"
    | "exec"
    | "attach"
    | "portForward"
    | "execSync"
  >;
}

/** CRI `CONTAINER_RUNNING` and `SANDBOX_READY`. */
const CONTAINER_RUNNING = 1;
const SANDBOX_READY = 0;

/** The kubelet's pod named by the path (upstream `GetPodByName`), UID checked when given. */
function kubeletPod(deps: StreamingDeps, target: PodTarget): Pod {
  const pod = deps.kubelet.podConfig.pods().find((p) =>
    p.metadata.namespace === target.namespace &&
    p.metadata.name === target.pod
  );
  if (!pod) throw new HttpError(404, "pod does not exist");
  if (target.uid !== undefined && pod.metadata.uid !== target.uid) {
    throw new HttpError(404, "pod not found");
  }
  return pod;
}

/** The running container's runtime id. */
async function findContainer(
  deps: StreamingDeps,
  target: ContainerTarget,
): Promise<string> {
  const pod = kubeletPod(deps, target);
  const { containers } = await deps.runtime.listContainers({
    filter: {
      state: { state: CONTAINER_RUNNING },
      labelSelector: {
        [POD_NAME_LABEL]: target.pod,
        [POD_NAMESPACE_LABEL]: target.namespace,
        [CONTAINER_NAME_LABEL]: target.container,
        ...(pod.metadata.uid ? { [POD_UID_LABEL]: pod.metadata.uid } : {}),
      },
    },
  });
  const found = containers.find((c) => c.state === CONTAINER_RUNNING);
  if (!found) {
    throw new HttpError(
      404,
      `container not found ("${target.container}"): it is not running in pod "${target.pod}"`,
    );
  }
  return found.id;
}

/**
 * A CRI call whose failure becomes the answer (upstream `streaming.WriteError`): NotFound is
 * a 404, anything else a 500, both with the runtime's message.
 */
async function cri<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (cause) {
    if (!(cause instanceof RuntimeError)) throw cause;
    throw new HttpError(
      isNotFound(cause) ? 404 : 500,
      `${what}: ${cause.grpcMessage || cause.message}`,
      { cause },
    );
  }
}

/** The streaming endpoints over a CRI runtime. */
export function createStreamingHost(deps: StreamingDeps): StreamingHost {
  return {
    async exec(target, command, options) {
      const containerId = await findContainer(deps, target);
      const { url } = await cri(
        "cannot exec in the container",
        () => deps.runtime.exec({ containerId, cmd: [...command], ...options }),
      );
      return url;
    },
    async attach(target, options) {
      const pod = kubeletPod(deps, target);
      const spec = [
        ...pod.spec.containers,
        ...(pod.spec.initContainers ?? []),
        ...(pod.spec.ephemeralContainers ?? []),
      ].find((c) => c.name === target.container);
      if (!spec) {
        throw new HttpError(
          404,
          `container ${target.container} not found in pod ${target.pod}`,
        );
      }
      const containerId = await findContainer(deps, target);
      // Whether the process has a TTY was fixed when it started; the spec says which.
      const tty = spec.tty ?? false;
      const { url } = await cri(
        "cannot attach to the container",
        () =>
          deps.runtime.attach({
            containerId,
            ...options,
            tty,
            stderr: options.stderr && !tty,
          }),
      );
      return url;
    },
    async portForward(target, ports) {
      const pod = kubeletPod(deps, target);
      const { items } = await deps.runtime.listPodSandbox({
        filter: {
          state: { state: SANDBOX_READY },
          labelSelector: pod.metadata.uid
            ? { [POD_UID_LABEL]: pod.metadata.uid }
            : {
              [POD_NAME_LABEL]: target.pod,
              [POD_NAMESPACE_LABEL]: target.namespace,
            },
        },
      });
      const sandbox = items.find((s) => s.state === SANDBOX_READY);
      if (!sandbox) {
        throw new HttpError(
          404,
          `pod not found ("${
            pod.metadata.uid ?? target.pod
          }"): it has no ready sandbox`,
        );
      }
      const { url } = await cri(
        "cannot forward ports of the pod",
        () =>
          deps.runtime.portForward({
            podSandboxId: sandbox.id,
            port: [...ports],
          }),
      );
      return url;
    },
    async run(target, command) {
      const containerId = await findContainer(deps, target);
      const result = await cri(
        "cannot run in the container",
        () =>
          deps.runtime.execSync({
            containerId,
            cmd: [...command],
            timeout: 0n,
          }),
      );
      if (result.exitCode !== 0) {
        throw new HttpError(
          500,
          `command '${command.join(" ")}' exited with ${result.exitCode}: ${
            new TextDecoder().decode(result.stderr)
          }`,
        );
      }
      const out = new Uint8Array(result.stdout.length + result.stderr.length);
      out.set(result.stdout);
      out.set(result.stderr, result.stdout.length);
      return out;
    },
  };
}
