import assert from "node:assert/strict";
import type { Secret } from "../../api/mod.ts";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createPodObjectManager } from "../../objects/mod.ts";
import { FakeObjectApi } from "../../objects/testing.ts";
import type { ImageService } from "../../runtime/mod.ts";
import { createImagePuller } from "./image_puller.ts";
import {
  keyringOf,
  lookupCredentials,
  makeKeyring,
  pullSecretsFor,
  registryMatches,
} from "./pull_credentials.ts";
import type { Pod } from "../types.ts";

const b64 = (s: string) => btoa(s);

function dockerConfigJson(
  name: string,
  auths: Record<string, Record<string, string>>,
): Secret {
  return {
    metadata: { name, namespace: "ns" },
    type: "kubernetes.io/dockerconfigjson",
    data: { ".dockerconfigjson": b64(JSON.stringify({ auths })) },
  };
}

Deno.test("registryMatches: port, label globs and path prefix as upstream URLsMatch", () => {
  const cases: [string, string, boolean][] = [
    ["registry.example.com", "registry.example.com/team/app", true],
    ["*.example.com", "registry.example.com/app", true],
    ["*.example.com", "a.b.example.com/app", false],
    ["*.example.com", "example.com/app", false],
    ["reg?.example.com", "reg1.example.com/app", true],
    ["127.0.0.1:5001", "127.0.0.1:5001/kts/private", true],
    ["127.0.0.1:5001", "127.0.0.1:5000/kts/private", false],
    ["127.0.0.1", "127.0.0.1:5001/kts/private", false],
    ["quay.io/team", "quay.io/team/app", true],
    ["quay.io/team", "quay.io/other/app", false],
  ];
  for (const [glob, target, want] of cases) {
    assert.equal(registryMatches(glob, target), want, `${glob} vs ${target}`);
  }
});

Deno.test("lookupCredentials: most specific key first, auth field decoded, Docker Hub fallback", () => {
  const keyring = makeKeyring([
    dockerConfigJson("a", {
      "https://quay.io": { username: "host", password: "p1" },
      "quay.io/team": { auth: b64("team:p2") },
      "https://index.docker.io/v1/": { username: "hub", password: "p3" },
    }),
    {
      metadata: { name: "old", namespace: "ns" },
      type: "kubernetes.io/dockercfg",
      data: {
        ".dockercfg": b64(
          JSON.stringify({ "quay.io": { username: "legacy", password: "p4" } }),
        ),
      },
    },
    { metadata: { name: "opaque", namespace: "ns" }, data: { x: b64("y") } },
  ]);
  assert.deepEqual(
    lookupCredentials(keyring, "quay.io/team/app:1").map((c) => c.username),
    ["team", "host", "legacy"],
  );
  assert.deepEqual(
    lookupCredentials(keyring, "quay.io/other/app").map((c) => c.username),
    ["host", "legacy"],
  );
  assert.deepEqual(
    lookupCredentials(keyring, "busybox").map((c) => c.username),
    ["hub"],
  );
  assert.deepEqual(lookupCredentials(keyring, "gcr.io/x/y"), []);
});

Deno.test("makeKeyring rejects a pull secret that is not JSON", () => {
  assert.throws(
    () =>
      makeKeyring([{
        metadata: { name: "bad", namespace: "ns" },
        type: "kubernetes.io/dockerconfigjson",
        data: { ".dockerconfigjson": b64("{not json") },
      }]),
    /pull secret ns\/bad: \.dockerconfigjson is not JSON/,
  );
});

class AuthImages {
  requests: { image?: string; username?: string }[] = [];
  imageStatus() {
    return Promise.resolve({ image: undefined });
  }
  pullImage(
    req: { image?: { image?: string }; auth?: { username?: string } },
  ) {
    this.requests.push({
      ...(req.image?.image ? { image: req.image.image } : {}),
      ...(req.auth?.username ? { username: req.auth.username } : {}),
    });
    if (req.auth?.username === "good") {
      return Promise.resolve({ imageRef: "sha256:private" });
    }
    return Promise.reject(
      new Error(`denied for ${req.auth?.username ?? "anonymous"}`),
    );
  }
}

Deno.test("ensureImage tries each matching credential in turn; the pod's unreadable pull secrets are skipped", async () => {
  const api = new FakeObjectApi();
  api.put(
    "secrets",
    dockerConfigJson("wrong", {
      "127.0.0.1:5001/kts": { username: "bad", password: "x" },
    }),
  );
  api.put(
    "secrets",
    dockerConfigJson("right", {
      "127.0.0.1:5001": { username: "good", password: "y" },
    }),
  );
  const clock = new FakeClock(0);
  const logger = new CaptureLogger();
  const objects = createPodObjectManager({ api, clock, logger }, {
    strategy: "Get",
  });
  const images = new AuthImages();
  const puller = createImagePuller({
    images: images as unknown as ImageService,
    clock,
    logger,
    pullSecrets: (p, signal) => pullSecretsFor({ objects, logger }, p, signal),
  }, { serializeImagePulls: true });
  const pod: Pod = {
    metadata: { name: "p", namespace: "ns", uid: "u" },
    spec: {
      containers: [],
      imagePullSecrets: [{ name: "missing" }, { name: "wrong" }, {
        name: "right",
      }],
    },
  };
  const image = "127.0.0.1:5001/kts/private:latest";
  const got = await puller.ensureImage(pod, { name: "c", image }, {});
  assert.deepEqual(got, { ok: true, imageRef: "sha256:private" });
  assert.deepEqual(images.requests, [
    { image, username: "bad" },
    { image, username: "good" },
  ]);
  assert.ok(
    logger.records.some((r) =>
      r.msg.startsWith("Unable to retrieve pull secret") &&
      r.fields?.["secret"] === "ns/missing"
    ),
  );

  const only: Pod = {
    ...pod,
    spec: { ...pod.spec, imagePullSecrets: [{ name: "wrong" }] },
  };
  const failed = await puller.ensureImage(only, {
    name: "c",
    image: "127.0.0.1:5001/kts/other:1",
  }, {});
  assert.ok(!failed.ok);
  assert.equal(failed.reason, "ErrImagePull");
  assert.equal(
    failed.message,
    'Failed to pull image "127.0.0.1:5001/kts/other:1": denied for bad',
  );
  const anonymous = await puller.ensureImage(
    { ...pod, spec: { containers: [] } },
    { name: "c", image: "127.0.0.1:5001/kts/third:1" },
    {},
  );
  assert.ok(!anonymous.ok);
  assert.ok(anonymous.message.endsWith("denied for anonymous"));
});

Deno.test("ensureImage tries the pod's pull secrets first, then the node's logins in their order, each asked with the normalized repository", async () => {
  const api = new FakeObjectApi();
  api.put(
    "secrets",
    dockerConfigJson("wrong", {
      "127.0.0.1:5001": { username: "bad", password: "x" },
    }),
  );
  const clock = new FakeClock(0);
  const logger = new CaptureLogger();
  const objects = createPodObjectManager({ api, clock, logger }, {
    strategy: "Get",
  });
  const images = new AuthImages();
  const asked: string[] = [];
  const puller = createImagePuller({
    images: images as unknown as ImageService,
    clock,
    logger,
    pullSecrets: (p, signal) => pullSecretsFor({ objects, logger }, p, signal),
    nodeLogins: (repository) => {
      asked.push(repository);
      return Promise.resolve([
        keyringOf([{ "127.0.0.1:5001/kts": { username: "node-file" } }]),
        keyringOf([{ "127.0.0.1:5001": { username: "good" } }]),
      ]);
    },
  }, { serializeImagePulls: true });
  const image = "127.0.0.1:5001/kts/private:latest";
  const got = await puller.ensureImage(
    {
      metadata: { name: "p", namespace: "ns", uid: "u" },
      spec: { containers: [], imagePullSecrets: [{ name: "wrong" }] },
    },
    { name: "c", image },
    {},
  );
  assert.deepEqual(got, { ok: true, imageRef: "sha256:private" });
  assert.deepEqual(images.requests.map((r) => r.username), [
    "bad",
    "node-file",
    "good",
  ]);
  assert.deepEqual(asked, ["127.0.0.1:5001/kts/private"]);
});
