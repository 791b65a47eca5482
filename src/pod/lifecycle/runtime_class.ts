/**
 * The CRI runtime handler of a pod (upstream `runtimeclass.Manager.LookupRuntimeHandler`):
 * the empty or absent `runtimeClassName` is the runtime's default handler `""`; any other
 * name is the `handler` of that node.k8s.io RuntimeClass, read from the API server. A
 * class that does not exist fails the sandbox with upstream's not-found text. Without an
 * API server upstream has no lookup at all and runs every pod under the default handler;
 * this kubelet refuses a named class there instead of ignoring it.
 *
 * Also the pod's user namespace under that handler (upstream `NamespacesForPod` asking
 * `GetOrCreateUserNamespaceMappings`): the user namespace manager's answer, or without one
 * upstream's refusal of `hostUsers: false` on a runtime without user namespace support.
 * @module
 */
import { ApiNotFoundError, type RuntimeClassApi } from "../../api/mod.ts";
import type { Pod } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";
import {
  handlerRefusal,
  NODE_USER_NAMESPACE,
  type UserNamespaceInit,
  type UserNamespaceManager,
} from "../../userns/mod.ts";

/** Resolves a pod's `runtimeClassName` to its CRI runtime handler. */
export interface RuntimeHandlerResolver {
  /** The handler; rejects with the reason the pod's sandbox cannot be created. */
  lookupRuntimeHandler(
    runtimeClassName: string | undefined,
    options?: { signal?: AbortSignal },
  ): Promise<string>;
}

/** Upstream's lookup against the API server's RuntimeClasses. */
export function apiRuntimeHandlers(
  api: RuntimeClassApi,
): RuntimeHandlerResolver {
  return {
    async lookupRuntimeHandler(name, options) {
      if (!name) return "";
      try {
        const rc = await api.getRuntimeClass(
          name,
          options?.signal ? { signal: options.signal } : {},
        );
        return rc.handler ?? "";
      } catch (error) {
        // the text of upstream's lister NotFound error
        if (error instanceof ApiNotFoundError) {
          throw new Error(`runtimeclass.node.k8s.io "${name}" not found`, {
            cause: error,
          });
        }
        throw new Error(
          `failed to lookup RuntimeClass ${name}: ${errorMessage(error)}`,
          { cause: error },
        );
      }
    },
  };
}

/** Standalone (no API server): only the default class resolves. */
export const STANDALONE_RUNTIME_HANDLERS: RuntimeHandlerResolver = {
  lookupRuntimeHandler(name) {
    if (!name) return Promise.resolve("");
    return Promise.reject(
      new Error(
        `RuntimeClass "${name}" cannot be looked up without an API server: ` +
          "a standalone kubelet runs only pods of the default RuntimeClass (remove spec.runtimeClassName)",
      ),
    );
  },
};

/** A pod's user namespace under a handler (the user namespace manager's `forPod`). */
export type PodUserNamespaces = Pick<UserNamespaceManager, "forPod">;

/** No manager: every handler is one without user namespace support. */
export const NO_USER_NAMESPACES: PodUserNamespaces = {
  forPod(pod, handler) {
    if (pod.hostUsers !== false) return Promise.resolve(NODE_USER_NAMESPACE);
    return Promise.reject(new Error(handlerRefusal([], handler) ?? ""));
  },
};

/** The sandbox's runtime handler and user namespace option (none: send no option). */
export interface SandboxNamespaces {
  runtimeHandler: string;
  userNamespace: UserNamespaceInit | undefined;
}

/**
 * The sandbox's runtime handler and user namespace, as upstream resolves them while
 * generating the sandbox config (`NamespacesForPod`): rejects with the reason the sandbox
 * cannot be made.
 */
export async function sandboxNamespaces(
  resolver: RuntimeHandlerResolver,
  userNamespaces: PodUserNamespaces,
  pod: Pod,
  options?: { signal?: AbortSignal },
): Promise<SandboxNamespaces> {
  const name = (pod.spec as { runtimeClassName?: string }).runtimeClassName;
  const runtimeHandler = await resolver.lookupRuntimeHandler(name, options);
  const hostUsers = (pod.spec as { hostUsers?: boolean }).hostUsers;
  const userNamespace = await userNamespaces.forPod(
    {
      uid: pod.metadata.uid ?? "",
      ...(hostUsers !== undefined ? { hostUsers } : {}),
    },
    runtimeHandler,
    options?.signal,
  );
  return { runtimeHandler, userNamespace };
}
