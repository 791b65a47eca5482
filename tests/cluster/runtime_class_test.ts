/**
 * RuntimeClass lookup against the real kube-apiserver: a class's handler, and upstream's
 * not-found text for a class that does not exist.
 */
import assert from "node:assert/strict";
import { loadKubeconfig, openApiClient } from "../../src/api/mod.ts";
import { systemClock } from "../../src/clock/mod.ts";
import { apiRuntimeHandlers } from "../../src/pod/mod.ts";
import { cluster, clusterMissing, kubectl } from "./_cluster.ts";

Deno.test({
  name:
    "apiRuntimeHandlers() on the real API server: runc for a class with handler runc, not found for a missing one",
  ignore: clusterMissing !== undefined,
  async fn() {
    const name = `kts-silent-runc-${Date.now()}`;
    const file = await Deno.makeTempFile({ suffix: ".json" });
    await Deno.writeTextFile(
      file,
      JSON.stringify({
        apiVersion: "node.k8s.io/v1",
        kind: "RuntimeClass",
        metadata: { name },
        handler: "runc",
      }),
    );
    await kubectl("create", "-f", file);
    try {
      using conn = openApiClient(
        { clock: systemClock },
        await loadKubeconfig(cluster.kubeconfig),
      );
      const handlers = apiRuntimeHandlers(conn.runtimeClasses);
      assert.equal(await handlers.lookupRuntimeHandler(name), "runc");
      assert.equal(await handlers.lookupRuntimeHandler(""), "");
      await assert.rejects(
        handlers.lookupRuntimeHandler(`${name}-missing`),
        { message: `runtimeclass.node.k8s.io "${name}-missing" not found` },
      );
    } finally {
      await kubectl("delete", "runtimeclass", name, "--ignore-not-found");
      await Deno.remove(file);
    }
  },
});
