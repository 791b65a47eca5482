import assert from "node:assert/strict";
import {
  ApiNotFoundError,
  ApiStatusError,
  type RuntimeClass,
  type RuntimeClassApi,
} from "../../api/mod.ts";
import {
  apiRuntimeHandlers,
  sandboxRuntimeHandler,
  STANDALONE_RUNTIME_HANDLERS,
  userNamespaceRefusal,
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

Deno.test("userNamespaceRefusal(): hostUsers false is refused with upstream's text, per handler", () => {
  assert.equal(userNamespaceRefusal(pod({}), ""), undefined);
  assert.equal(userNamespaceRefusal(pod({ hostUsers: true }), ""), undefined);
  assert.equal(
    userNamespaceRefusal(pod({ hostUsers: false }), ""),
    "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
  );
  assert.equal(
    userNamespaceRefusal(pod({ hostUsers: false }), "runc"),
    'can\'t set `spec.hostUsers: false`, RuntimeClass handler "runc" does not support user namespaces',
  );
});

Deno.test("sandboxRuntimeHandler(): the class's handler, or the refusal of hostUsers false under it", async () => {
  const handlers = apiRuntimeHandlers(fakeApi({ plain: "runc" }));
  assert.equal(
    await sandboxRuntimeHandler(handlers, pod({ runtimeClassName: "plain" })),
    "runc",
  );
  await assert.rejects(
    sandboxRuntimeHandler(
      handlers,
      pod({ runtimeClassName: "plain", hostUsers: false }),
    ),
    /RuntimeClass handler "runc" does not support user namespaces/,
  );
});
