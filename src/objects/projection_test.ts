import assert from "node:assert/strict";
import type { Pod } from "../api/mod.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createPodObjectManager } from "./object_manager.ts";
import {
  collectVolumePayload,
  type Payload,
  projectedPayload,
} from "./projection.ts";
import { FakeObjectApi } from "./testing.ts";
import { createTokenManager } from "./token_manager.ts";

const text = (p: Payload) =>
  Object.fromEntries(
    [...p].map((
      [k, v],
    ) => [
      k,
      `${
        typeof v.data === "string" ? v.data : new TextDecoder().decode(v.data)
      } ${v.mode.toString(8)}`,
    ]),
  );

function setup() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const api = new FakeObjectApi();
  api.now = () => clock.now();
  api.put("configmaps", {
    metadata: { name: "cfg", namespace: "ns" },
    data: { "app.conf": "x=1", other: "o" },
    binaryData: { "blob.bin": btoa("\u0001\u0002") },
  });
  api.put("configmaps", {
    metadata: { name: "kube-root-ca.crt", namespace: "ns" },
    data: { "ca.crt": "-----BEGIN CERTIFICATE-----" },
  });
  api.put("secrets", {
    metadata: { name: "sec", namespace: "ns" },
    data: { password: btoa("s3cret") },
  });
  const logger = new CaptureLogger();
  const deps = {
    objects: createPodObjectManager({ api, clock, logger }, {
      strategy: "Get",
    }),
    tokens: createTokenManager({ api, clock, logger, random: () => 0 }),
    downwardAPI: (items: unknown[], defaultMode: number): Payload =>
      new Map(
        (items as { path: string; fieldRef: { fieldPath: string } }[]).map((
          i,
        ) => [i.path, {
          data: `<${i.fieldRef.fieldPath}>`,
          mode: defaultMode,
        }]),
      ),
  };
  return { api, deps };
}

const pod: Pod = {
  metadata: { name: "p", namespace: "ns", uid: "u1" },
  spec: { containers: [], serviceAccountName: "builder" },
};

Deno.test("configMap volume: every key (data and binaryData) with defaultMode, or items with their modes", async () => {
  const { deps } = setup();
  const all = await collectVolumePayload(deps, pod, {
    configMap: { name: "cfg", defaultMode: 0o400 },
  });
  assert.ok(all && "payload" in all);
  assert.deepEqual(text(all.payload), {
    "app.conf": "x=1 400",
    other: "o 400",
    "blob.bin": "\u0001\u0002 400",
  });
  const some = await collectVolumePayload(deps, pod, {
    configMap: {
      name: "cfg",
      items: [{ key: "app.conf", path: "etc/app.conf", mode: 0o600 }, {
        key: "other",
        path: "o.txt",
      }],
    },
  });
  assert.ok(some && "payload" in some);
  assert.deepEqual(text(some.payload), {
    "etc/app.conf": "x=1 600",
    "o.txt": "o 644",
  });
});

Deno.test("missing objects and keys: upstream's errors, empty when optional", async () => {
  const { deps } = setup();
  assert.deepEqual(
    await collectVolumePayload(deps, pod, { configMap: { name: "nope" } }),
    { error: 'configmap "nope" not found' },
  );
  const optional = await collectVolumePayload(deps, pod, {
    secret: { secretName: "nope", optional: true },
  });
  assert.ok(optional && "payload" in optional);
  assert.equal(optional.payload.size, 0);
  assert.deepEqual(
    await collectVolumePayload(deps, pod, {
      secret: { secretName: "sec", items: [{ key: "user", path: "u" }] },
    }),
    { error: "secret references non-existent secret key: user" },
  );
  assert.deepEqual(
    await collectVolumePayload(deps, pod, {
      configMap: { name: "cfg", items: [{ key: "k", path: "k" }] },
    }),
    { error: "configmap references non-existent config key: k" },
  );
  assert.equal(
    await collectVolumePayload(deps, pod, { emptyDir: {} } as never),
    undefined,
  );
});

Deno.test("the admission plugin's kube-api-access volume: token bound to the pod, CA and namespace", async () => {
  const { api, deps } = setup();
  const got = await collectVolumePayload(deps, pod, {
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
        {
          configMap: {
            name: "kube-root-ca.crt",
            items: [{ key: "ca.crt", path: "ca.crt" }],
          },
        },
        {
          downwardAPI: {
            items: [{
              path: "namespace",
              fieldRef: { fieldPath: "metadata.namespace" },
            }],
          },
        },
      ],
    },
  });
  assert.ok(got && "payload" in got);
  assert.deepEqual(text(got.payload), {
    token: "token-ns-builder-1 644",
    "ca.crt": "-----BEGIN CERTIFICATE----- 644",
    namespace: "<metadata.namespace> 644",
  });
  const call = api.calls.find((c) => c.method === "token");
  assert.equal(call?.key, "serviceaccounts/ns/builder");
  // a second collection is served from the token cache
  await collectVolumePayload(deps, pod, {
    projected: {
      sources: [{
        serviceAccountToken: { expirationSeconds: 3607, path: "token" },
      }],
    },
  });
  assert.equal(api.calls.filter((c) => c.method === "token").length, 1);
});

Deno.test("projectedPayload: later sources replace paths, each failing source is reported", () => {
  const { payload, errors } = projectedPayload(
    [
      { configMap: { name: "a" } },
      { secret: { name: "b", items: [{ key: "k", path: "k" }] } },
      { configMap: { name: "missing" } },
      { serviceAccountToken: { path: "token", audience: "x" } },
      { clusterTrustBundle: {} },
    ],
    0o640,
    {
      configMap: (name) =>
        name === "a"
          ? { object: { metadata: { name }, data: { k: "from-a" } } }
          : undefined,
      secret: () => ({
        object: { metadata: { name: "b" }, data: { k: btoa("from-b") } },
      }),
      token: () => ({ error: new Error("failed to fetch token: forbidden") }),
      downwardAPI: () => new Map(),
    },
  );
  assert.deepEqual(text(payload), { k: "from-b 640" });
  assert.deepEqual(errors, [
    'configmap "missing" not found',
    "failed to fetch token: forbidden",
    "clusterTrustBundle projections are not supported by this kubelet",
  ]);
});
