/**
 * The runtime handlers' features from the CRI `Status` answer, which upstream's kubelet
 * reads every 5 s (`updateRuntimeUp`). Asked for only when a pod wants a user namespace of its
 * own, so the answer is fetched then and reused for 5 s.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import type { StatusResponse } from "../runtime/mod.ts";
import type { HandlerFeatures } from "./pod_user_namespace.ts";
import type { HandlerFeatureSource } from "./userns_manager.ts";

/** Upstream's runtime status period. */
export const HANDLER_REFRESH_MS = 5_000;

/** The handlers of one `Status` answer (none for a runtime that predates the field). */
export function handlersOf(status: StatusResponse): HandlerFeatures[] {
  return status.runtimeHandlers.map((h) => ({
    name: h.name,
    userNamespaces: h.features?.userNamespaces === true,
  }));
}

/** A source that asks the runtime at most once per {@linkcode HANDLER_REFRESH_MS}. */
export function statusHandlerSource(
  status: (signal?: AbortSignal) => Promise<StatusResponse>,
  clock: Clock,
): HandlerFeatureSource {
  let last: { at: number; handlers: HandlerFeatures[] } | undefined;
  return {
    async handlers(signal) {
      if (last && clock.now() - last.at < HANDLER_REFRESH_MS) {
        return last.handlers;
      }
      const handlers = handlersOf(await status(signal));
      last = { at: clock.now(), handlers };
      return handlers;
    },
  };
}
