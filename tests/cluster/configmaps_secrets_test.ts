/**
 * ConfigMaps, Secrets and pull secrets of API pods on real containerd and the local control
 * plane, with kubelet.ts joined through the bootstrap kubeconfig (its own node identity):
 *
 * - a Secret key and a ConfigMap's keys (envFrom with a prefix) reach a container's
 *   environment, seen in its output;
 * - the Node authorizer lets the kubelet read a Secret its pod uses and answers 403 for one no
 *   pod on the node uses (proof that it reads with its node identity);
 * - a pod pulls from the password-protected registry of scripts/cri_env.sh with an
 *   imagePullSecret, and a pod without it fails with ErrImagePull;
 * - the kube-api-access volume the admission plugin injects holds a token, the CA and the
 *   namespace;
 * - a configMap volume file appears, and an edit of the ConfigMap reaches it within the sync
 *   period (shortened to 5 s here).
 *
 * Node and namespace are `h8-cm-<random>`, removed at the end with everything created.
 */
import assert from "node:assert/strict";
import { ApiStatusError } from "../../src/api/mod.ts";
import { startApiKubelet } from "./_api_kubelet.ts";
import { clusterMissing, getJson, kubectl, waitFor } from "./_cluster.ts";

const CRI_ENDPOINT = Deno.env.get("KUBELET_TS_CRI_ENDPOINT") ?? "";
const IMAGE = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
  "kts.local/busybox:latest";
const AUTH_IMAGE = Deno.env.get("KUBELET_TS_CRI_AUTH_REGISTRY_IMAGE") ?? "";
const AUTH_USER = Deno.env.get("KUBELET_TS_CRI_AUTH_USER") ?? "";
const AUTH_PASSWORD = Deno.env.get("KUBELET_TS_CRI_AUTH_PASSWORD") ?? "";

const missing = clusterMissing ??
  (CRI_ENDPOINT
    ? undefined
    : "no containerd: run `bash scripts/cri_env.sh up` and source /tmp/cri.env");
// deno-lint-ignore no-console
if (missing) console.log(`skipping configmaps_secrets_test: ${missing}`);

interface PodJson {
  status?: {
    phase?: string;
    containerStatuses?: {
      state: { waiting?: { reason?: string; message?: string } };
    }[];
  };
}

function pod(
  name: string,
  ns: string,
  node: string,
  spec: Record<string, unknown>,
): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 1,
      ...spec,
    },
  });
}

/** The busybox container `main` running `script`. */
function shell(script: string, extra: Record<string, unknown> = {}) {
  return {
    name: "main",
    image: IMAGE,
    imagePullPolicy: "IfNotPresent",
    command: ["sh", "-c", script],
    ...extra,
  };
}

async function apply(manifest: string): Promise<void> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, manifest);
  try {
    await kubectl("apply", "-f", file);
  } finally {
    await Deno.remove(file);
  }
}

/**
 * The container's output from its CRI log file under `podLogsDir` (`kubectl logs` cannot reach
 * this in-process kubelet: the API server dials the Node by its hostname, the random node
 * name), one line per CRI log entry without the timestamp, stream and tag.
 */
async function containerLog(
  podLogsDir: string,
  ns: string,
  name: string,
): Promise<string> {
  for await (const entry of Deno.readDir(podLogsDir)) {
    if (!entry.name.startsWith(`${ns}_${name}_`)) continue;
    const text = await Deno.readTextFile(
      `${podLogsDir}/${entry.name}/main/0.log`,
    ).catch(() => "");
    return text.split("\n").map((l) => l.split(" ").slice(3).join(" "))
      .join("\n");
  }
  return "";
}

Deno.test({
  name:
    "API pods read ConfigMaps, Secrets and pull secrets with the node's identity",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const k = await startApiKubelet("h8-cm", {
      criEndpoint: CRI_ENDPOINT,
      nodeIP: "127.0.0.1",
      apiAddress: "127.0.0.1",
      statusSyncPeriodMs: 1_000,
    });
    const { node, joined } = k;
    const ns = node;
    const phaseOf = async (name: string) =>
      (await getJson<PodJson>("pod", "-n", ns, name))?.status;
    try {
      await kubectl(
        "-n",
        ns,
        "create",
        "configmap",
        "cfg",
        "--from-literal=HOST=db",
        "--from-literal=app.conf=v1",
      );
      await kubectl(
        "-n",
        ns,
        "create",
        "secret",
        "generic",
        "sec",
        "--from-literal=password=s3cret",
      );
      await kubectl(
        "-n",
        ns,
        "create",
        "secret",
        "generic",
        "unused",
        "--from-literal=k=v",
      );

      await t.step(
        "a secret env var and envFrom keys reach the container",
        async () => {
          await apply(pod("env", ns, node, {
            // the environment as the runtime set it (a shell drops names like `a.b`)
            containers: [shell("tr '\\0' '\\n' < /proc/1/environ; sleep 3600", {
              env: [{
                name: "MY_SECRET",
                valueFrom: { secretKeyRef: { name: "sec", key: "password" } },
              }],
              envFrom: [{ prefix: "CFG_", configMapRef: { name: "cfg" } }],
            })],
          }));
          const out = await waitFor("the env pod's log", async () => {
            const text = await containerLog(k.podLogsDir, ns, "env");
            return text.includes("MY_SECRET=") ? text : undefined;
          }, 60_000);
          assert.match(out, /^MY_SECRET=s3cret$/m);
          assert.match(out, /^CFG_HOST=db$/m);
          assert.match(out, /^CFG_app\.conf=v1$/m);
        },
      );

      await t.step(
        "the Node authorizer: 403 for a Secret no pod on the node uses",
        async () => {
          const used = await joined.objects.getObject("secrets", ns, "sec");
          assert.equal(used.metadata.name, "sec");
          let caught: unknown;
          await joined.objects.getObject("secrets", ns, "unused").catch((e) =>
            caught = e
          );
          assert.ok(caught instanceof ApiStatusError, String(caught));
          assert.equal(caught.code, 403);
          assert.match(caught.message, new RegExp(`system:node:${node}`));
        },
      );

      await t.step({
        name: "an imagePullSecret pulls from the password-protected registry",
        ignore: !AUTH_IMAGE,
        fn: async () => {
          const registry = AUTH_IMAGE.slice(0, AUTH_IMAGE.indexOf("/"));
          await kubectl(
            "-n",
            ns,
            "create",
            "secret",
            "docker-registry",
            "regcred",
            `--docker-server=${registry}`,
            `--docker-username=${AUTH_USER}`,
            `--docker-password=${AUTH_PASSWORD}`,
          );
          const container = shell("sleep 3600", {
            image: AUTH_IMAGE,
            imagePullPolicy: "Always",
          });
          await apply(pod("private", ns, node, {
            imagePullSecrets: [{ name: "regcred" }],
            containers: [container],
          }));
          await apply(pod("anonymous", ns, node, { containers: [container] }));
          await waitFor("the private pod to run", async () => {
            const s = await phaseOf("private");
            return s?.phase === "Running" ? s : undefined;
          }, 60_000);
          const waiting = await waitFor(
            "the anonymous pull to fail",
            async () => {
              const w = (await phaseOf("anonymous"))?.containerStatuses?.[0]
                ?.state.waiting;
              return w?.reason === "ErrImagePull" ||
                  w?.reason === "ImagePullBackOff"
                ? w
                : undefined;
            },
            60_000,
          );
          assert.ok(waiting);
        },
      });

      await t.step({
        name:
          "the injected kube-api-access volume: a bound token, the CA and the namespace",
        fn: async () => {
          await waitFor(
            "the namespace's default ServiceAccount",
            () => getJson("serviceaccount", "-n", ns, "default"),
            30_000,
          );
          await apply(pod("sa", ns, node, {
            automountServiceAccountToken: true,
            containers: [
              shell(
                "cd /var/run/secrets/kubernetes.io/serviceaccount && echo ns=$(cat namespace) && echo jwt=$(cut -c1-3 token) && grep -c 'BEGIN CERTIFICATE' ca.crt && sleep 3600",
              ),
            ],
          }));
          const out = await waitFor("the token files in the log", async () => {
            const text = await containerLog(k.podLogsDir, ns, "sa");
            // the last line (the CA count) may land in the log after the others
            return /^\d+$/m.test(text) ? text : undefined;
          }, 60_000);
          assert.match(out, new RegExp(`^ns=${ns}$`, "m"));
          assert.match(out, /^jwt=eyJ$/m);
          assert.match(out, /^[1-9]\d*$/m);
        },
      });

      await t.step({
        name: "a configMap volume file follows an edit of the ConfigMap",
        fn: async () => {
          await apply(pod("vol", ns, node, {
            volumes: [{ name: "cfg", configMap: { name: "cfg" } }],
            containers: [
              shell(
                'while true; do echo "conf=$(cat /etc/cfg/app.conf)"; sleep 1; done',
                { volumeMounts: [{ name: "cfg", mountPath: "/etc/cfg" }] },
              ),
            ],
          }));
          await waitFor(
            "the volume file in the log",
            async () =>
              (await containerLog(k.podLogsDir, ns, "vol")).includes("conf=v1")
                ? true
                : undefined,
            60_000,
          );
          await kubectl(
            "-n",
            ns,
            "patch",
            "configmap",
            "cfg",
            "--type=merge",
            "-p",
            JSON.stringify({ data: { "app.conf": "v2" } }),
          );
          const edited = Date.now();
          await waitFor(
            "the edit in the file",
            async () =>
              (await containerLog(k.podLogsDir, ns, "vol")).includes("conf=v2")
                ? true
                : undefined,
            30_000,
          );
          // deno-lint-ignore no-console
          console.log(
            `configMap edit reached the volume in ${Date.now() - edited} ms`,
          );
        },
      });
    } finally {
      await k.stop();
    }
  },
});
