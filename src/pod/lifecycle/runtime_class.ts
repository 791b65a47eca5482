/**
 * The CRI runtime handler of a pod (upstream `runtimeclass.Manager.LookupRuntimeHandler`):
 * the empty or absent `runtimeClassName` is the runtime's default handler `""`; any other
 * name is the `handler` of that node.k8s.io RuntimeClass, read from the API server. A
 * class that does not exist fails the sandbox with upstream's not-found text. Without an
 * API server upstream has no lookup at all and runs every pod under the default handler;
 * this kubelet refuses a named class there instead of ignoring it.
 *
 * Also the sandbox's user namespace (upstream `GetOrCreateUserNamespaceMappings`): a pod
 * with `hostUsers: false` is refused, as upstream refuses it on a runtime that does not
 * report user namespace support; this kubelet allocates no ID mappings.
 * @module
 */
import { ApiNotFoundError, type RuntimeClassApi } from "../../api/mod.ts";
import type { Pod } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

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

/** Upstream's refusal of `hostUsers: false` when `handler` has no user namespace support. */
export function userNamespaceRefusal(
  pod: Pod,
  handler: string,
): string | undefined {
  const hostUsers = (pod.spec as { hostUsers?: boolean }).hostUsers;
  if (hostUsers !== false) return undefined;
  return handler === ""
    ? "can't set `spec.hostUsers: false`, runtime does not support user namespaces"
    : `can't set \`spec.hostUsers: false\`, RuntimeClass handler "${handler}" does not support user namespaces`;
}

/**
 * The sandbox's runtime handler, after the checks upstream makes while generating the
 * sandbox config (`NamespacesForPod`): rejects with the reason the sandbox cannot be made.
 */
export async function sandboxRuntimeHandler(
  resolver: RuntimeHandlerResolver,
  pod: Pod,
  options?: { signal?: AbortSignal },
): Promise<string> {
  const name = (pod.spec as { runtimeClassName?: string }).runtimeClassName;
  const handler = await resolver.lookupRuntimeHandler(name, options);
  const refusal = userNamespaceRefusal(pod, handler);
  if (refusal) throw new Error(refusal);
  return handler;
}
