/**
 * What a pod's `hostUsers` asks of the runtime (upstream `GetOrCreateUserNamespaceMappings`
 * and `HandlerSupportsUserNamespaces`): which CRI user namespace mode it gets, whether its
 * runtime handler can give it one, and the CRI `UserNamespace` of an allocated range.
 * @module
 */
import type { MessageInitShape, UserNamespaceSchema } from "../runtime/mod.ts";
import type { PodIdRange } from "./id_mappings.ts";

/** The CRI `UserNamespace` message as sent in a `NamespaceOption`. */
export type UserNamespaceInit = MessageInitShape<typeof UserNamespaceSchema>;

// CRI NamespaceMode values (runtime.v1): POD=0, NODE=2
const MODE_POD = 0;
const MODE_NODE = 2;

/** The node's user namespace, sent for every pod that does not ask for its own. */
export const NODE_USER_NAMESPACE: UserNamespaceInit = { mode: MODE_NODE };

/**
 * What the pod gets: `"none"` (no user namespace option at all), `"node"` or `"pod"` (a
 * range of its own).
 * @throws {Error} with upstream's text when `hostUsers` is set with the gate off.
 */
export function userNamespaceMode(
  hostUsers: boolean | undefined,
  gateEnabled: boolean,
): "none" | "node" | "pod" {
  if (hostUsers === undefined) return gateEnabled ? "node" : "none";
  if (!gateEnabled) {
    throw new Error(
      'the feature gate "UserNamespacesSupport" is disabled: can\'t set spec.HostUsers',
    );
  }
  return hostUsers ? "node" : "pod";
}

/** One runtime handler as the CRI `Status` answer reports it. */
export interface HandlerFeatures {
  name: string;
  userNamespaces: boolean;
}

/**
 * Why `handler` cannot run a pod with its own user namespace, or undefined when it can. An
 * empty handler list (a runtime older than the field, such as containerd 1.x) supports none;
 * a handler the runtime does not list is named in the reason.
 */
export function handlerRefusal(
  handlers: readonly HandlerFeatures[],
  handler: string,
): string | undefined {
  const refusal = handler === ""
    ? "can't set `spec.hostUsers: false`, runtime does not support user namespaces"
    : `can't set \`spec.hostUsers: false\`, RuntimeClass handler "${handler}" does not support user namespaces`;
  if (handlers.length === 0) return refusal;
  const found = handlers.find((h) => h.name === handler);
  if (!found) return `${refusal}: the handler "${handler}" is not known`;
  return found.userNamespaces ? undefined : refusal;
}

/** The CRI user namespace of a pod's range: root inside is the range's first host ID. */
export function podUserNamespace(range: PodIdRange): UserNamespaceInit {
  const mapping = () => ({
    hostId: range.hostId,
    containerId: 0,
    length: range.length,
  });
  return { mode: MODE_POD, uids: [mapping()], gids: [mapping()] };
}
