import assert from "node:assert/strict";
import { ApiStatusError } from "../../api/mod.ts";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createPodObjectManager } from "../../objects/mod.ts";
import { FakeObjectApi } from "../../objects/testing.ts";
import { ContainerConfigError, makeEnvironment } from "./container_env.ts";
import { fetchEnvObjects } from "./env_objects.ts";
import type { Container, Pod } from "../types.ts";

const b64 = (s: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(s)));

function setup() {
  const api = new FakeObjectApi();
  api.put("configmaps", {
    metadata: { name: "cm", namespace: "ns" },
    data: { HOST: "db", PORT: "5432", "dotted.key": "ok" },
  });
  api.put("secrets", {
    metadata: { name: "sec", namespace: "ns" },
    data: { PASSWORD: b64("s3cret"), TOKEN: b64("tök") },
  });
  api.forbidden.add("secrets/ns/foreign");
  const objects = createPodObjectManager({
    api,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  }, { strategy: "Get" });
  return { api, objects };
}

function podWith(container: Omit<Container, "name">): Pod {
  return {
    metadata: { name: "p", namespace: "ns", uid: "u1" },
    spec: { containers: [{ name: "c", ...container }] },
  };
}

async function envOf(container: Omit<Container, "name">) {
  const { objects } = setup();
  const p = podWith(container);
  const c = p.spec.containers[0]!;
  return makeEnvironment(p, c, {
    nodeName: "n",
    objects: await fetchEnvObjects(objects, p, c),
  });
}

async function configError(container: Omit<Container, "name">) {
  let caught: unknown;
  await envOf(container).catch((e) => caught = e);
  assert.ok(caught instanceof ContainerConfigError, String(caught));
  return caught;
}

Deno.test("configMapKeyRef and secretKeyRef values (secret data decoded)", async () => {
  assert.deepEqual(
    await envOf({
      env: [
        {
          name: "H",
          valueFrom: { configMapKeyRef: { name: "cm", key: "HOST" } },
        },
        {
          name: "P",
          valueFrom: { secretKeyRef: { name: "sec", key: "PASSWORD" } },
        },
        {
          name: "T",
          valueFrom: { secretKeyRef: { name: "sec", key: "TOKEN" } },
        },
        { name: "URL", value: "$(H):$(P)" },
      ],
    }),
    [
      { key: "H", value: "db" },
      { key: "P", value: "s3cret" },
      { key: "T", value: "tök" },
      { key: "URL", value: "db:s3cret" },
    ],
  );
});

Deno.test("missing keys and objects: skipped when optional, upstream's errors otherwise", async () => {
  assert.deepEqual(
    await envOf({
      env: [
        {
          name: "A",
          valueFrom: {
            configMapKeyRef: { name: "cm", key: "NOPE", optional: true },
          },
        },
        {
          name: "B",
          valueFrom: {
            secretKeyRef: { name: "gone", key: "k", optional: true },
          },
        },
      ],
      envFrom: [{ configMapRef: { name: "gone", optional: true } }],
    }),
    [],
  );
  const noKey = await configError({
    env: [{
      name: "A",
      valueFrom: { configMapKeyRef: { name: "cm", key: "NOPE" } },
    }],
  });
  assert.equal(
    noKey.field,
    "spec.containers[0].env[0].valueFrom.configMapKeyRef",
  );
  assert.ok(
    noKey.message.endsWith("couldn't find key NOPE in ConfigMap ns/cm"),
  );
  const noSecretKey = await configError({
    env: [{
      name: "A",
      valueFrom: { secretKeyRef: { name: "sec", key: "NOPE" } },
    }],
  });
  assert.ok(
    noSecretKey.message.endsWith("couldn't find key NOPE in Secret ns/sec"),
  );
  const noObject = await configError({
    envFrom: [{ secretRef: { name: "gone" } }],
  });
  assert.equal(noObject.field, "spec.containers[0].envFrom[0]");
  assert.ok(noObject.message.endsWith('secret "gone" not found'));
});

Deno.test("a forbidden object fails the container even when optional", async () => {
  const e = await configError({
    env: [{
      name: "A",
      valueFrom: {
        secretKeyRef: { name: "foreign", key: "k", optional: true },
      },
    }],
  });
  assert.ok(e.message.includes("forbidden"));
});

Deno.test("envFrom: prefixes, later sources and env entries win, every key kept", async () => {
  assert.deepEqual(
    await envOf({
      envFrom: [
        { configMapRef: { name: "cm" }, prefix: "DB_" },
        { secretRef: { name: "sec" } },
        { configMapRef: { name: "cm" } },
      ],
      env: [{ name: "HOST", value: "override-$(DB_PORT)" }],
    }),
    [
      { key: "DB_HOST", value: "db" },
      { key: "DB_PORT", value: "5432" },
      { key: "DB_dotted.key", value: "ok" },
      { key: "PASSWORD", value: "s3cret" },
      { key: "TOKEN", value: "tök" },
      { key: "HOST", value: "override-5432" },
      { key: "PORT", value: "5432" },
      { key: "dotted.key", value: "ok" },
    ],
  );
});

Deno.test("fetchEnvObjects reads each referenced object once", async () => {
  const { api, objects } = setup();
  const p = podWith({
    envFrom: [{ configMapRef: { name: "cm" } }],
    env: [
      {
        name: "A",
        valueFrom: { configMapKeyRef: { name: "cm", key: "HOST" } },
      },
      { name: "B", valueFrom: { secretKeyRef: { name: "foreign", key: "k" } } },
    ],
  });
  const got = await fetchEnvObjects(objects, p, p.spec.containers[0]!);
  assert.deepEqual(api.calls.map((c) => c.key).sort(), [
    "configmaps/ns/cm",
    "secrets/ns/foreign",
  ]);
  const foreign = got.secret("foreign");
  assert.ok(foreign && "error" in foreign);
  assert.ok(foreign.error instanceof ApiStatusError);
});
