import assert from "node:assert/strict";
import {
  ApiNotFoundError,
  ApiStatusError,
  type RuntimeClass,
  type RuntimeClassApi,
} from "../../api/mod.ts";
import {
  apiRuntimeHandlers,
  NO_USER_NAMESPACES,
  type PodUserNamespaces,
  sandboxNamespaces,
  STANDALONE_RUNTIME_HANDLERS,
} from "./runtime_class.ts";
import type { Pod } from "../types.ts";

/** RuntimeClasses by name; `forbidden` names answer 403. */
function fakeApi(
  classes: Record<string, string>,
  forbidden: string[] = [],
): RuntimeClassApi & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    getRuntimeClass(name) {
      asked.push(name);
      if (forbidden.includes(name)) {
        return Promise.reject(
          new ApiStatusError("runtimeclasses is forbidden", { code: 403 }),
        );
      }
      const handler = classes[name];
      if (handler === undefined) {
        return Promise.reject(
          new ApiNotFoundError(
            `runtimeclasses.node.k8s.io "${name}" not found`,
            {
              code: 404,
            },
          ),
        );
      }
      return Promise.resolve({ metadata: { name }, handler } as RuntimeClass);
    },
  };
}

function pod(spec: Record<string, unknown>): Pod {
  return {
    metadata: { name: "p", namespace: "ns", uid: "u" },
    spec: { containers: [{ name: "c" }], ...spec },
  } as Pod;
}

Deno.test("apiRuntimeHandlers(): the default class is the empty handler, without an API call", async () => {
  const api = fakeApi({});
  const handlers = apiRuntimeHandlers(api);
  assert.equal(await handlers.lookupRuntimeHandler(undefined), "");
  assert.equal(await handlers.lookupRuntimeHandler(""), "");
  assert.deepEqual(api.asked, []);
});

Deno.test("apiRuntimeHandlers(): a named class is its handler; a missing one fails with upstream's not-found text", async () => {
  const handlers = apiRuntimeHandlers(
    fakeApi({ sandboxed: "runsc", plain: "runc" }, ["secret"]),
  );
  assert.equal(await handlers.lookupRuntimeHandler("sandboxed"), "runsc");
  assert.equal(await handlers.lookupRuntimeHandler("plain"), "runc");
  await assert.rejects(
    handlers.lookupRuntimeHandler("gvisor"),
    { message: 'runtimeclass.node.k8s.io "gvisor" not found' },
  );
  await assert.rejects(
    handlers.lookupRuntimeHandler("secret"),
    {
      message:
        "failed to lookup RuntimeClass secret: runtimeclasses is forbidden",
    },
  );
});

Deno.test("STANDALONE_RUNTIME_HANDLERS: only the default class resolves; a named one is refused naming the field", async () => {
  assert.equal(await STANDALONE_RUNTIME_HANDLERS.lookupRuntimeHandler(""), "");
  await assert.rejects(
    STANDALONE_RUNTIME_HANDLERS.lookupRuntimeHandler("kata"),
    /RuntimeClass "kata" cannot be looked up without an API server.*spec\.runtimeClassName/,
  );
});

Deno.test("NO_USER_NAMESPACES: the node's user namespace; hostUsers false refused with upstream's text, per handler", async () => {
  assert.deepEqual(await NO_USER_NAMESPACES.forPod({ uid: "u" }, ""), {
    mode: 2,
  });
  assert.deepEqual(
    await NO_USER_NAMESPACES.forPod({ uid: "u", hostUsers: true }, ""),
    { mode: 2 },
  );
  await assert.rejects(
    NO_USER_NAMESPACES.forPod({ uid: "u", hostUsers: false }, ""),
    {
      message:
        "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
    },
  );
  await assert.rejects(
    NO_USER_NAMESPACES.forPod({ uid: "u", hostUsers: false }, "runc"),
    {
      message:
        'can\'t set `spec.hostUsers: false`, RuntimeClass handler "runc" does not support user namespaces',
    },
  );
});

Deno.test("sandboxNamespaces(): the class's handler, and the user namespace asked under it", async () => {
  const handlers = apiRuntimeHandlers(fakeApi({ plain: "runc" }));
  const asked: unknown[] = [];
  const userNamespaces: PodUserNamespaces = {
    forPod(pod, handler) {
      asked.push([pod, handler]);
      return Promise.resolve({ mode: 0, uids: [], gids: [] });
    },
  };
  assert.deepEqual(
    await sandboxNamespaces(
      handlers,
      userNamespaces,
      pod({ runtimeClassName: "plain", hostUsers: false }),
    ),
    { runtimeHandler: "runc", userNamespace: { mode: 0, uids: [], gids: [] } },
  );
  assert.deepEqual(asked, [[{ uid: "u", hostUsers: false }, "runc"]]);
  await assert.rejects(
    sandboxNamespaces(
      handlers,
      NO_USER_NAMESPACES,
      pod({ runtimeClassName: "plain", hostUsers: false }),
    ),
    /RuntimeClass handler "runc" does not support user namespaces/,
  );
});
