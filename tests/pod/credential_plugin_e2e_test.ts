/**
 * Image credential plugins end to end: a whole kubelet (runKubelet) on a private containerd
 * pulls a static pod's image from the password-protected local registry with the login an
 * exec plugin gives it, the plugin having been called as upstream calls it (request on stdin,
 * the provider's args and env). A wrong provider config stops the kubelet before it starts.
 */
import assert from "node:assert/strict";
import { CaptureLogger } from "../../src/log/testing.ts";
import { runKubelet } from "../../src/kubelet/run_kubelet.ts";
import { removeTree } from "../_mounts.ts";
import { privateCri, privateCriMissing, waitFor } from "./_containerd_e2e.ts";

const AUTH_IMAGE = Deno.env.get("KUBELET_TS_CRI_AUTH_REGISTRY_IMAGE") ??
  "127.0.0.1:5001/kts/private:latest";
const AUTH_USER = Deno.env.get("KUBELET_TS_CRI_AUTH_USER") ?? "kts";
const AUTH_PASSWORD = Deno.env.get("KUBELET_TS_CRI_AUTH_PASSWORD") ??
  "kts-secret";
const REGISTRY = AUTH_IMAGE.split("/", 1)[0]!;

const PLUGIN = `#!/bin/sh
# a credential plugin: records its request, args and env, answers with the registry login
cat > "$(dirname "$0")/request.json"
echo "$*" > "$(dirname "$0")/args"
printf '%s' "$LOGIN_USER" > "$(dirname "$0")/env"
printf '{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","cacheKeyType":"Registry","cacheDuration":"1m","auth":{"%s":{"username":"%s","password":"%s"}}}' \\
  "${REGISTRY}" "$LOGIN_USER" "${AUTH_PASSWORD}"
`;

function providerConfig(name: string): string {
  return `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: ${name}
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    matchImages: ["${REGISTRY}"]
    defaultCacheDuration: 5m
    args: [--from-test]
    env: [{name: LOGIN_USER, value: ${AUTH_USER}}]
`;
}

Deno.test({
  name:
    "runKubelet() pulls from the password-protected registry with the login of an image credential plugin",
  ignore: privateCriMissing,
  async fn() {
    await using cri = await privateCri("credp");
    const dir = await Deno.makeTempDir({ prefix: "kts-credp-" });
    try {
      await Deno.mkdir(`${dir}/manifests`);
      await Deno.mkdir(`${dir}/bin`);
      await Deno.writeTextFile(`${dir}/bin/local-login`, PLUGIN, {
        mode: 0o755,
      });
      await Deno.writeTextFile(
        `${dir}/providers.yaml`,
        providerConfig("local-login"),
      );
      await Deno.writeTextFile(
        `${dir}/manifests/private.yaml`,
        `apiVersion: v1
kind: Pod
metadata: {name: private}
spec:
  containers:
  - name: main
    image: ${AUTH_IMAGE}
    imagePullPolicy: Always
    command: [sh, -c, "sleep 3600"]
`,
      );
      const logger = new CaptureLogger();
      const ac = new AbortController();
      const running = runKubelet({
        config: {
          staticPodPath: `${dir}/manifests`,
          containerRuntimeEndpoint: cri.endpoint,
          podLogsDir: `${dir}/logs`,
          fileCheckFrequency: "1s",
          healthzPort: 0,
          cgroupsPerQOS: false,
        },
        flags: {
          hostnameOverride: "credp-node",
          rootDir: `${dir}/root`,
          imageCredentialProviderConfig: `${dir}/providers.yaml`,
          imageCredentialProviderBinDir: `${dir}/bin`,
        },
        logger,
        signal: ac.signal,
      });
      try {
        await waitFor(
          "the private pod to run",
          () =>
            logger.records.some((r) =>
                r.msg === "Pod status" && r.fields.phase === "Running" &&
                r.fields.pod === "default/private-credp-node"
              )
              ? true
              : undefined,
          180_000,
        ).catch((e) => {
          const tail = logger.records.slice(-40).map((r) =>
            `${r.msg} ${JSON.stringify(r.fields)}`
          );
          throw new Error(
            `${e.message}; the kubelet's last records:\n${tail.join("\n")}`,
          );
        });
      } finally {
        ac.abort();
        assert.equal(await running, 0);
      }
      assert.deepEqual(
        JSON.parse(await Deno.readTextFile(`${dir}/bin/request.json`)),
        {
          kind: "CredentialProviderRequest",
          apiVersion: "credentialprovider.kubelet.k8s.io/v1",
          image: AUTH_IMAGE.replace(/:[^:/]+$/, ""),
        },
      );
      assert.equal(
        (await Deno.readTextFile(`${dir}/bin/args`)).trim(),
        "--from-test",
      );
      assert.equal(await Deno.readTextFile(`${dir}/bin/env`), AUTH_USER);
      assert.ok(
        !logger.records.some((r) => r.msg === "Failed to pull image"),
        "pulled with the plugin's login at the first try",
      );
    } finally {
      await removeTree(dir);
    }
  },
});

Deno.test("runKubelet() refuses to start with a provider config it cannot use, naming the problem", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-credp-bad-" });
  try {
    await Deno.mkdir(`${dir}/bin`);
    await Deno.writeTextFile(
      `${dir}/providers.yaml`,
      providerConfig("missing-plugin"),
    );
    for (
      const [flags, expected] of [
        [
          { imageCredentialProviderConfig: `${dir}/providers.yaml` },
          /failed to register CRI auth plugins: plugin binary directory {2}did not exist/,
        ],
        [
          {
            imageCredentialProviderConfig: `${dir}/providers.yaml`,
            imageCredentialProviderBinDir: `${dir}/bin`,
          },
          new RegExp(
            `failed to register CRI auth plugins: plugin binary executable ${dir}/bin/missing-plugin did not exist`,
          ),
        ],
        [
          {
            imageCredentialProviderConfig: `${dir}/nope.yaml`,
            imageCredentialProviderBinDir: `${dir}/bin`,
          },
          /unable to access path ".*nope.yaml"/,
        ],
      ] as const
    ) {
      const logger = new CaptureLogger();
      const code = await runKubelet({
        config: { containerRuntimeEndpoint: "sim://default", healthzPort: 0 },
        flags: { rootDir: `${dir}/root`, ...flags },
        logger,
        signal: AbortSignal.abort(),
      });
      assert.equal(code, 1);
      const error = logger.records.find((r) => r.severity === "error");
      assert.equal(error?.msg, "Cannot start the kubelet");
      assert.match(String(error?.fields.err), expected);
    }
  } finally {
    await removeTree(dir);
  }
});
