import assert from "node:assert/strict";
import {
  type ConfigFiles,
  readCredentialProviderConfig,
} from "./credential_provider_config.ts";

function files(tree: Record<string, string | string[]>): ConfigFiles {
  return {
    isDirectory: (path) => {
      if (!(path in tree)) {
        return Promise.reject(new Error("no such file or directory"));
      }
      return Promise.resolve(Array.isArray(tree[path]));
    },
    listFiles: (path) => Promise.resolve(tree[path] as string[]),
    readText: (path) => Promise.resolve(tree[path] as string),
  };
}

const ONE = `
apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: local-login
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    matchImages: ["127.0.0.1:5001", "*.registry.example"]
    defaultCacheDuration: 10m
    args: [--verbose]
    env: [{name: LOGIN_USER, value: kts}]
`;

Deno.test("readCredentialProviderConfig(): a file's providers with their durations, args and env", async () => {
  const providers = await readCredentialProviderConfig(
    "/etc/kp.yaml",
    files({ "/etc/kp.yaml": ONE }),
  );
  assert.deepEqual(providers, [{
    name: "local-login",
    matchImages: ["127.0.0.1:5001", "*.registry.example"],
    defaultCacheDuration: 600_000,
    apiVersion: "credentialprovider.kubelet.k8s.io/v1",
    args: ["--verbose"],
    env: [{ name: "LOGIN_USER", value: "kts" }],
  }]);
});

Deno.test("readCredentialProviderConfig(): a directory's .json/.yaml/.yml files in name order; other files ignored; a name used twice is refused", async () => {
  const second = JSON.stringify({
    apiVersion: "kubelet.config.k8s.io/v1",
    kind: "CredentialProviderConfig",
    providers: [{
      name: "b",
      apiVersion: "credentialprovider.kubelet.k8s.io/v1beta1",
      matchImages: ["quay.io"],
      defaultCacheDuration: "0s",
    }],
  });
  const tree = {
    "/etc/kp.d": ["20-b.json", "10-a.yml", "README", "notes.txt"],
    "/etc/kp.d/10-a.yml": ONE.replace("local-login", "a"),
    "/etc/kp.d/20-b.json": second,
  };
  const providers = await readCredentialProviderConfig(
    "/etc/kp.d",
    files(tree),
  );
  assert.deepEqual(providers.map((p) => p.name), ["a", "b"]);
  assert.equal(providers[1]!.defaultCacheDuration, 0);
  await assert.rejects(
    readCredentialProviderConfig(
      "/etc/kp.d",
      files({ ...tree, "/etc/kp.d/20-b.json": second.replace('"b"', '"a"') }),
    ),
    /duplicate provider name "a" found in configuration file\(s\)/,
  );
  await assert.rejects(
    readCredentialProviderConfig("/etc/empty", files({ "/etc/empty": ["x"] })),
    /no configuration files found in directory "\/etc\/empty"/,
  );
  await assert.rejects(
    readCredentialProviderConfig("/nope", files({})),
    /unable to access path "\/nope"/,
  );
});

Deno.test("readCredentialProviderConfig(): upstream's validation, every problem named with its field", async () => {
  const bad = `
apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: a/b
    apiVersion: credentialprovider.kubelet.k8s.io/v2
    matchImages: []
    defaultCacheDuration: -1m
  - name: ".."
    apiVersion: ""
    matchImages: ["registry:port"]
`;
  const error = await readCredentialProviderConfig(
    "/k.yaml",
    files({ "/k.yaml": bad }),
  ).then(() => undefined, (e: Error) => e.message);
  assert.ok(error);
  for (
    const expected of [
      `providers.name: Invalid value: "a/b": provider name cannot contain '/'`,
      'providers.apiVersion: Unsupported value: "credentialprovider.kubelet.k8s.io/v2"',
      "providers.matchImages: Required value: at least 1 item in matchImages is required",
      'providers.defaultCacheDuration: Invalid value: "-1m": must be greater than or equal to 0',
      `providers.name: Invalid value: "..": provider name cannot be '..'`,
      "providers.apiVersion: Required value",
      'providers.matchImages: Invalid value: "registry:port": match image is invalid',
      "providers.defaultCacheDuration: Required value",
    ]
  ) assert.ok(error.includes(expected), `${expected}\nin: ${error}`);
  assert.match(
    error,
    /^failed to validate credential provider config "\/k.yaml"/,
  );
});

Deno.test("readCredentialProviderConfig(): strict decoding (unknown field, wrong kind) and refused tokenAttributes", async () => {
  const read = (text: string) =>
    readCredentialProviderConfig("/k.yaml", files({ "/k.yaml": text }));
  await assert.rejects(
    read(ONE.replace("args:", "argz:")),
    /error decoding config "\/k.yaml": providers.0: Unrecognized key: "argz"/,
  );
  await assert.rejects(
    read(
      ONE.replace(
        "kind: CredentialProviderConfig",
        "kind: KubeletConfiguration",
      ),
    ),
    /failed to decode "KubeletConfiguration" \(wrong Kind\)/,
  );
  await assert.rejects(
    read(
      `${ONE}    tokenAttributes: {serviceAccountTokenAudience: reg, requireServiceAccount: true, cacheType: Token}\n`,
    ),
    /providers.tokenAttributes: Forbidden: service account tokens for credential plugins are not supported by kubelet.ts/,
  );
  await assert.rejects(
    read(
      "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\n",
    ),
    /providers: Required value: at least 1 item in plugins is required/,
  );
});
