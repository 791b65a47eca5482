import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import {
  CredentialPlugins,
  credentialProviderRequest,
  parseCredentialProviderResponse,
} from "./credential_plugins.ts";
import type { CredentialProvider } from "./credential_provider_config.ts";
import { lookupCredentials } from "./pull_credentials.ts";

const V1 = "credentialprovider.kubelet.k8s.io/v1";

function provider(over: Partial<CredentialProvider> = {}): CredentialProvider {
  return {
    name: "login",
    matchImages: ["127.0.0.1:5001", "*.registry.example"],
    defaultCacheDuration: 60_000,
    apiVersion: V1,
    args: [],
    env: [],
    ...over,
  };
}

function response(body: Record<string, unknown>): string {
  return JSON.stringify({
    kind: "CredentialProviderResponse",
    apiVersion: V1,
    ...body,
  });
}

/** A plugin double: records each request, answers with `answer(image)`. */
function plugin(answer: (image: string) => string | Promise<string>) {
  const requests: string[] = [];
  return {
    requests,
    run: async (_p: CredentialProvider, stdin: string, image: string) => {
      requests.push(stdin);
      return await answer(image);
    },
  };
}

Deno.test("credentialProviderRequest(): the JSON upstream writes to the plugin's stdin", () => {
  assert.equal(
    credentialProviderRequest(V1, "127.0.0.1:5001/kts/private"),
    '{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"127.0.0.1:5001/kts/private"}\n',
  );
});

Deno.test("CredentialPlugins: runs only for matching repositories; its logins are looked up by repository", async () => {
  const p = plugin(() =>
    response({
      cacheKeyType: "Image",
      auth: { "127.0.0.1:5001/kts": { username: "kts", password: "s" } },
    })
  );
  const clock = new FakeClock(0);
  const plugins = new CredentialPlugins([provider()], {
    run: p.run,
    clock,
    logger: new CaptureLogger(),
  });
  const none = await plugins.keyring("docker.io/library/busybox");
  assert.deepEqual(none.keys, []);
  assert.equal(p.requests.length, 0);
  const ring = await plugins.keyring("127.0.0.1:5001/kts/private");
  assert.deepEqual(lookupCredentials(ring, "127.0.0.1:5001/kts/private:v1"), [
    { username: "kts", password: "s" },
  ]);
  assert.deepEqual(lookupCredentials(ring, "127.0.0.1:5001/other/x"), []);
  assert.equal(p.requests.length, 1);
});

Deno.test("CredentialPlugins: caches per image, registry or globally for the plugin's or the default duration", async () => {
  for (
    const [cacheKeyType, other, reused] of [
      ["Image", "127.0.0.1:5001/kts/other", false],
      ["Registry", "127.0.0.1:5001/kts/other", true],
      ["Registry", "a.registry.example/x", false],
      ["Global", "a.registry.example/x", true],
    ] as const
  ) {
    const p = plugin(() =>
      response({ cacheKeyType, auth: { "127.0.0.1:5001": { username: "u" } } })
    );
    const clock = new FakeClock(0);
    const plugins = new CredentialPlugins([provider()], {
      run: p.run,
      clock,
      logger: new CaptureLogger(),
    });
    await plugins.keyring("127.0.0.1:5001/kts/private");
    await plugins.keyring("127.0.0.1:5001/kts/private");
    assert.equal(p.requests.length, 1, cacheKeyType);
    await plugins.keyring(other);
    assert.equal(p.requests.length, reused ? 1 : 2, `${cacheKeyType} ${other}`);
    await clock.advance(60_001);
    await plugins.keyring("127.0.0.1:5001/kts/private");
    assert.equal(p.requests.length, reused ? 2 : 3, `${cacheKeyType} expired`);
  }
  const zero = plugin(() =>
    response({ cacheKeyType: "Image", cacheDuration: "0s", auth: {} })
  );
  const longer = plugin(() =>
    response({ cacheKeyType: "Image", cacheDuration: "5m", auth: {} })
  );
  for (const [p, runs] of [[zero, 2], [longer, 1]] as const) {
    const clock = new FakeClock(0);
    const plugins = new CredentialPlugins([provider()], {
      run: p.run,
      clock,
      logger: new CaptureLogger(),
    });
    await plugins.keyring("127.0.0.1:5001/kts/private");
    await clock.advance(120_000);
    await plugins.keyring("127.0.0.1:5001/kts/private");
    assert.equal(p.requests.length, runs);
  }
  const noDefault = plugin(() => response({ cacheKeyType: "Image", auth: {} }));
  const plugins = new CredentialPlugins(
    [provider({ defaultCacheDuration: 0 })],
    {
      run: noDefault.run,
      clock: new FakeClock(0),
      logger: new CaptureLogger(),
    },
  );
  await plugins.keyring("127.0.0.1:5001/kts/private");
  await plugins.keyring("127.0.0.1:5001/kts/private");
  assert.equal(noDefault.requests.length, 2);
});

Deno.test("CredentialPlugins: concurrent requests for one image run the plugin once", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const p = plugin(async () => {
    await gate;
    return response({ cacheKeyType: "Image", cacheDuration: "0s", auth: {} });
  });
  const plugins = new CredentialPlugins([provider()], {
    run: p.run,
    clock: new FakeClock(0),
    logger: new CaptureLogger(),
  });
  const both = Promise.all([
    plugins.keyring("127.0.0.1:5001/kts/private"),
    plugins.keyring("127.0.0.1:5001/kts/private"),
  ]);
  release();
  await both;
  assert.equal(p.requests.length, 1);
});

Deno.test("CredentialPlugins: a failing plugin or a bad answer gives no logins and is logged without the answer's text", async () => {
  const answers = [
    () => Promise.reject(new Error("exit status 1: boom")),
    () =>
      response({ cacheKeyType: "Image", auth: {} }).replace(
        V1,
        "credentialprovider.kubelet.k8s.io/v1beta1",
      ),
    () =>
      response({
        cacheKeyType: "Image",
        auth: { r: { username: "u", password: "hunter2", extra: 1 } },
      }),
    () =>
      response({
        cacheKeyType: "Sometimes",
        auth: { "127.0.0.1:5001": { username: "u" } },
      }),
  ];
  for (const answer of answers) {
    const logger = new CaptureLogger();
    const plugins = new CredentialPlugins([provider()], {
      run: plugin(answer).run,
      clock: new FakeClock(0),
      logger,
    });
    const ring = await plugins.keyring("127.0.0.1:5001/kts/private");
    assert.deepEqual(ring.keys, []);
    assert.equal(
      logger.records.filter((r) => r.severity === "error").length,
      1,
    );
    assert.ok(!JSON.stringify(logger.records).includes("hunter2"));
  }
});

Deno.test("parseCredentialProviderResponse(): apiVersion must match; unknown fields refused", () => {
  assert.throws(
    () =>
      parseCredentialProviderResponse(
        response({ cacheKeyType: "Image" }),
        "credentialprovider.kubelet.k8s.io/v1alpha1",
      ),
    /did not match expected apiVersion:credentialprovider.kubelet.k8s.io\/v1alpha1, actual apiVersion:credentialprovider.kubelet.k8s.io\/v1/,
  );
  assert.throws(
    () =>
      parseCredentialProviderResponse(
        response({ cacheKeyType: "Image", extra: 1 }),
        V1,
      ),
    /error decoding credential provider plugin response from stdout/,
  );
  assert.deepEqual(
    parseCredentialProviderResponse(
      response({
        cacheKeyType: "Registry",
        cacheDuration: "1m30s",
        auth: { r: { username: "u" } },
      }),
      V1,
    ),
    {
      cacheKeyType: "Registry",
      cacheDuration: 90_000,
      auth: { r: { username: "u", password: "" } },
    },
  );
});
