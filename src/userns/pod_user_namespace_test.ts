import assert from "node:assert/strict";
import {
  handlerRefusal,
  podUserNamespace,
  userNamespaceMode,
} from "./pod_user_namespace.ts";

Deno.test("userNamespaceMode(): hostUsers and the UserNamespacesSupport gate", () => {
  assert.equal(userNamespaceMode(undefined, true), "node");
  assert.equal(userNamespaceMode(true, true), "node");
  assert.equal(userNamespaceMode(false, true), "pod");
  assert.equal(userNamespaceMode(undefined, false), "none");
  for (const hostUsers of [true, false]) {
    assert.throws(() => userNamespaceMode(hostUsers, false), {
      message:
        'the feature gate "UserNamespacesSupport" is disabled: can\'t set spec.HostUsers',
    });
  }
});

Deno.test("handlerRefusal(): upstream's texts per handler", () => {
  const handlers = [
    { name: "", userNamespaces: true },
    { name: "runc", userNamespaces: true },
    { name: "kata", userNamespaces: false },
  ];
  assert.equal(handlerRefusal(handlers, ""), undefined);
  assert.equal(handlerRefusal(handlers, "runc"), undefined);
  assert.equal(
    handlerRefusal(handlers, "kata"),
    'can\'t set `spec.hostUsers: false`, RuntimeClass handler "kata" does not support user namespaces',
  );
  assert.equal(
    handlerRefusal(handlers, "gvisor"),
    'can\'t set `spec.hostUsers: false`, RuntimeClass handler "gvisor" does not support user namespaces: the handler "gvisor" is not known',
  );
  // containerd 1.x reports no handlers at all
  assert.equal(
    handlerRefusal([], ""),
    "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
  );
  assert.equal(
    handlerRefusal([{ name: "", userNamespaces: false }], ""),
    "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
  );
});

Deno.test("podUserNamespace(): mode POD, root inside at the range's first host ID", () => {
  const m = { hostId: 196608, containerId: 0, length: 65536 };
  assert.deepEqual(podUserNamespace({ hostId: 196608, length: 65536 }), {
    mode: 0,
    uids: [m],
    gids: [m],
  });
});
