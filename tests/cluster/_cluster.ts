/**
 * Helpers for the tests that need the local control plane (scripts/cluster_env.sh) and the
 * upstream kubelet (scripts/upstream_kubelet.sh). They skip, naming the script, when the
 * environment is not there; CI brings it up.
 */

import type { JoinClusterContext } from "../../src/kubelet/join_cluster.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

export const cluster = {
  kubeconfig: Deno.env.get("KUBELET_TS_KUBECONFIG") ?? "",
  bootstrapKubeconfig: Deno.env.get("KUBELET_TS_BOOTSTRAP_KUBECONFIG") ?? "",
  ca: Deno.env.get("KUBELET_TS_CLUSTER_CA") ?? "",
  bin: Deno.env.get("KUBELET_TS_K8S_BIN") ?? "",
};

/** Why the cluster tests cannot run here, or undefined when they can. */
export const clusterMissing = cluster.kubeconfig && cluster.bin
  ? undefined
  : 'no control plane: run `eval "$(bash scripts/cluster_env.sh up)"` (sets KUBELET_TS_KUBECONFIG)';

/** The shared containerd of scripts/cri_env.sh; empty when it is not up. */
export const CRI_ENDPOINT = Deno.env.get("KUBELET_TS_CRI_ENDPOINT") ?? "";

/**
 * Why a test of kubelet.ts joined to the control plane on the shared containerd cannot run
 * here (undefined when it can); says so, naming `test`, when it cannot.
 */
export function apiKubeletMissing(test: string): string | undefined {
  const missing = clusterMissing ??
    (CRI_ENDPOINT
      ? undefined
      : "no containerd: run `bash scripts/cri_env.sh up` and source /tmp/cri.env");
  // deno-lint-ignore no-console
  if (missing) console.log(`skipping ${test}: ${missing}`);
  return missing;
}

/** The image scripts/cri_env.sh imports into every containerd it starts. */
export const CRI_IMAGE = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
  "kts.local/busybox:latest";

/** The registry image every containerd instance of scripts/cri_env.sh can pull. */
export const REGISTRY_IMAGE = Deno.env.get("KUBELET_TS_CRI_REGISTRY_IMAGE") ??
  "127.0.0.1:5000/kts/busybox:latest";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion and collects its output. */
export async function run(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Run> {
  const out = await new Deno.Command(cmd, {
    args,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/** A control plane the tests reach with kubectl: the shared one is `cluster`. */
export interface ControlPlane {
  kubeconfig: string;
  bootstrapKubeconfig: string;
  ca: string;
  bin: string;
}

/** kubectl against one control plane. */
export interface Kubectl {
  kubectl(...args: string[]): Promise<string>;
  getJson<T = Record<string, unknown>>(
    ...args: string[]
  ): Promise<T | undefined>;
}

/** kubectl and `get -o json` with the admin kubeconfig of control plane `cp`. */
export function kubectlOn(cp: ControlPlane): Kubectl {
  const kubectl = async (...args: string[]): Promise<string> => {
    const r = await run(`${cp.bin}/kubectl`, [
      "--kubeconfig",
      cp.kubeconfig,
      ...args,
    ]);
    if (r.code !== 0) {
      throw new Error(
        `kubectl ${args.join(" ")} failed (${r.code}): ${r.stderr}`,
      );
    }
    return r.stdout;
  };
  const getJson = async <T = Record<string, unknown>>(
    ...args: string[]
  ): Promise<T | undefined> => {
    const r = await run(`${cp.bin}/kubectl`, [
      "--kubeconfig",
      cp.kubeconfig,
      "get",
      ...args,
      "-o",
      "json",
    ]);
    if (r.code !== 0) {
      if (r.stderr.includes("NotFound")) return undefined;
      throw new Error(`kubectl get ${args.join(" ")} failed: ${r.stderr}`);
    }
    return JSON.parse(r.stdout) as T;
  };
  return { kubectl, getJson };
}

const shared = kubectlOn(cluster);

/** kubectl with the admin kubeconfig; throws with its stderr when it fails. */
export const kubectl = shared.kubectl;

/** kubectl get ... -o json, parsed; undefined when the object does not exist. */
export const getJson = shared.getJson;

/** Runs one of our scripts and parses the KEY=VALUE lines it prints. */
export async function script(
  name: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Record<string, string>> {
  const r = await run("bash", [`${ROOT}scripts/${name}`, ...args], env);
  if (r.code !== 0) {
    throw new Error(
      `scripts/${name} ${args.join(" ")} failed (${r.code}):\n${r.stderr}`,
    );
  }
  const vars: Record<string, string> = {};
  for (const line of r.stdout.split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) vars[m[1]!] = m[2]!;
  }
  return vars;
}

/** Reads text from `reader` until `done(text)` holds or the stream ends; gives what was read. */
export async function readTextUntil(
  reader: ReadableStreamDefaultReader<string>,
  done: (text: string) => boolean,
): Promise<string> {
  let text = "";
  while (!done(text)) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += value;
  }
  return text;
}

/**
 * Hands a reader of `child`'s stdout (as text) to `use`, then stops the child (SIGTERM, or
 * SIGKILL after `timeoutMs` in any case) and waits for it.
 */
export async function readingStdout<T>(
  child: Deno.ChildProcess,
  timeoutMs: number,
  use: (reader: ReadableStreamDefaultReader<string>) => Promise<T>,
): Promise<T> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    return await use(reader);
  } finally {
    clearTimeout(timer);
    try {
      child.kill("SIGTERM");
    } catch {
      // already exited
    }
    await reader.cancel().catch(() => {});
    await child.status;
  }
}

/** Polls `probe` every 500 ms until it gives a value; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out waiting for ${what}${last ? `: ${last}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

interface Condition {
  type: string;
  status: string;
}

/** True when the object's status conditions have `type` set to True. */
export function conditionTrue(
  obj: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): boolean {
  return obj?.status?.conditions?.some((c) =>
    c.type === type && c.status === "True"
  ) ?? false;
}

/** Deletes a test node's Node and Lease (whatever of them exists; errors ignored). */
export async function deleteNode(
  node: string,
  { kubectl }: Kubectl = shared,
): Promise<void> {
  await kubectl("delete", "node", node, "--ignore-not-found").catch(() => {});
  await kubectl(
    "-n",
    "kube-node-lease",
    "delete",
    "lease",
    node,
    "--ignore-not-found",
  ).catch(() => {});
}

/**
 * joinCluster's context for an in-process test kubelet named `node` with its files under
 * `dir`: TLS bootstrap with the bootstrap kubeconfig, 127.0.0.1 as its address, a 4 s lease
 * and status every second.
 */
export function testJoinContext(
  node: string,
  dir: string,
  signal: AbortSignal,
): JoinClusterContext & { nodeName: string; signal: AbortSignal } {
  return {
    nodeName: node,
    signal,
    config: {
      nodeLeaseDurationSeconds: 4,
      nodeStatusUpdateFrequency: "1s",
      nodeStatusReportFrequency: "1m",
    },
    flags: {
      kubeconfig: `${dir}/kubelet.conf`,
      bootstrapKubeconfig: cluster.bootstrapKubeconfig,
      certDir: `${dir}/pki`,
      rootDir: `${dir}/root`,
      nodeIP: "127.0.0.1",
    },
  };
}
