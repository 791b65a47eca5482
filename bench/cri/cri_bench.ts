/**
 * CRI client benchmark against a real containerd: our fetch-based gRPC client
 * vs `@grpc/grpc-js` + `@grpc/proto-loader` (the Node reference client), calls
 * interleaved in one run (the order alternates every iteration).
 *
 * (a) `Version` round trip, p50/p99 over many calls; target ratio ours/theirs
 *     p50 ≤ 0.9.
 * (b) RunPodSandbox → CreateContainer → StartContainer (host network, busybox
 *     `sleep`), timed per sequence, cleanup untimed; target p50 ratio ≤ 1.0.
 *     containerd's own work (~250 ms) is nearly all of it, so both sides differ
 *     by noise only; the per-step p50s printed below show where it goes.
 *
 * Needs `KUBELET_TS_CRI_ENDPOINT` (and the images from `scripts/cri_env.sh`);
 * otherwise prints "skipped". Run: `deno task bench:cri [--quick]`. Its own
 * `deno.json` and lock hold the reference client, so the kubelet never installs it.
 *
 * @module
 */
// deno-lint-ignore-file no-console

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import {
  create,
  createCriRuntime,
  type CriRuntime,
  NamespaceMode,
  type PodSandboxConfig,
  PodSandboxConfigSchema,
} from "../../src/runtime/mod.ts";

const endpoint = Deno.env.get("KUBELET_TS_CRI_ENDPOINT");
if (!endpoint) {
  console.log("cri_bench: skipped: no KUBELET_TS_CRI_ENDPOINT");
  Deno.exit(0);
}
const QUICK = Deno.args.includes("--quick");
const VERSION_CALLS = QUICK ? 200 : 1000;
// 24 pairs: with 12 the p50 ratio swung 0.94-1.04 on containerd noise alone
const SEQUENCES = QUICK ? 4 : 24;
const image = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
  "kts.local/busybox:latest";
const PROTO = new URL("../src/runtime/proto/api.proto", import.meta.url)
  .pathname;

type Callback = (error: grpc.ServiceError | null, value: unknown) => void;
type UnaryFn = (request: unknown, callback: Callback) => void;
type GrpcJsClient = grpc.Client & Record<string, UnaryFn>;

function grpcJsClient(): GrpcJsClient {
  const definition = protoLoader.loadSync(PROTO, {
    keepCase: false,
    longs: String,
    enums: Number,
    defaults: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    runtime: { v1: { RuntimeService: grpc.ServiceClientConstructor } };
  };
  const Service = loaded.runtime.v1.RuntimeService;
  return new Service(endpoint!, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": 16 * 1024 * 1024,
  }) as unknown as GrpcJsClient;
}

function theirs(client: GrpcJsClient, method: string, request: unknown) {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    client[method]!.call(client, request, (error, value) => {
      if (error) reject(error);
      else resolve(value as Record<string, unknown>);
    });
  });
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
  return sorted[Math.max(0, index)]!;
}

function report(
  label: string,
  ours: number[],
  other: number[],
  target: number,
) {
  const [o50, o99, t50, t99] = [
    percentile(ours, 0.5),
    percentile(ours, 0.99),
    percentile(other, 0.5),
    percentile(other, 0.99),
  ];
  const ratio = o50 / t50;
  console.log(
    `${label}: ours p50 ${o50.toFixed(3)} ms p99 ${o99.toFixed(3)} ms | ` +
      `grpc-js p50 ${t50.toFixed(3)} ms p99 ${t99.toFixed(3)} ms | ` +
      `ratio p50 ${ratio.toFixed(2)} (target <= ${target}) ${
        ratio <= target ? "PASS" : "MISS"
      } | p99 ratio ${(o99 / t99).toFixed(2)} | n=${ours.length}`,
  );
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function versionBench(ours: CriRuntime, client: GrpcJsClient) {
  const request = { version: "0.1.0" };
  for (let i = 0; i < 50; i++) {
    await ours.version(request);
    await theirs(client, "version", request);
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < VERSION_CALLS; i++) {
    if (i % 2 === 0) {
      a.push(await time(() => ours.version(request)));
      b.push(await time(() => theirs(client, "version", request)));
    } else {
      b.push(await time(() => theirs(client, "version", request)));
      a.push(await time(() => ours.version(request)));
    }
  }
  report("Version round trip", a, b, 0.9);
}

function sandboxConfig(name: string, logDirectory: string): PodSandboxConfig {
  const uid = crypto.randomUUID();
  return create(PodSandboxConfigSchema, {
    metadata: { name, uid, namespace: "kts-cri-bench", attempt: 0 },
    logDirectory,
    labels: { "io.kubernetes.pod.uid": uid },
    linux: {
      securityContext: {
        namespaceOptions: {
          network: NamespaceMode.NODE,
          pid: NamespaceMode.CONTAINER,
        },
      },
    },
  });
}

function containerConfig(name: string) {
  return {
    metadata: { name, attempt: 0 },
    image: { image },
    command: ["sleep", "3600"],
    logPath: `${name}.log`,
    linux: {
      securityContext: {
        namespaceOptions: {
          network: NamespaceMode.NODE,
          pid: NamespaceMode.CONTAINER,
        },
      },
    },
  };
}

/** One timed sequence: total and per-step ms, and the sandbox to clean up. */
interface SequenceResult {
  ms: number;
  steps: [number, number, number];
  podSandboxId: string;
}

/** Ours: run, create, start; returns elapsed ms and IDs to clean up. */
async function oursSequence(
  runtime: CriRuntime,
  logDirectory: string,
): Promise<SequenceResult> {
  const name = `bench-ours-${crypto.randomUUID().slice(0, 8)}`;
  const config = sandboxConfig(name, logDirectory);
  const start = performance.now();
  const { podSandboxId } = await runtime.runPodSandbox({ config });
  const ran = performance.now();
  const { containerId } = await runtime.createContainer({
    podSandboxId,
    config: containerConfig("c"),
    sandboxConfig: config,
  });
  const created = performance.now();
  await runtime.startContainer({ containerId });
  const end = performance.now();
  return {
    ms: end - start,
    steps: [ran - start, created - ran, end - created],
    podSandboxId,
  };
}

async function theirsSequence(
  client: GrpcJsClient,
  logDirectory: string,
): Promise<SequenceResult> {
  const name = `bench-grpcjs-${crypto.randomUUID().slice(0, 8)}`;
  const uid = crypto.randomUUID();
  const nsOptions = { network: 2, pid: 1 };
  const config = {
    metadata: { name, uid, namespace: "kts-cri-bench", attempt: 0 },
    logDirectory,
    labels: { "io.kubernetes.pod.uid": uid },
    linux: { securityContext: { namespaceOptions: nsOptions } },
  };
  const start = performance.now();
  const run = await theirs(client, "runPodSandbox", { config });
  const ran = performance.now();
  const podSandboxId = run.podSandboxId as string;
  const container = await theirs(client, "createContainer", {
    podSandboxId,
    config: {
      metadata: { name: "c", attempt: 0 },
      image: { image },
      command: ["sleep", "3600"],
      logPath: "c.log",
      linux: { securityContext: { namespaceOptions: nsOptions } },
    },
    sandboxConfig: config,
  });
  const created = performance.now();
  await theirs(client, "startContainer", {
    containerId: container.containerId,
  });
  const end = performance.now();
  return {
    ms: end - start,
    steps: [ran - start, created - ran, end - created],
    podSandboxId,
  };
}

async function cleanup(runtime: CriRuntime, podSandboxId: string) {
  const { containers } = await runtime.listContainers({
    filter: { podSandboxId },
  });
  for (const c of containers) {
    await runtime.stopContainer({ containerId: c.id, timeout: 0n });
    await runtime.removeContainer({ containerId: c.id });
  }
  await runtime.stopPodSandbox({ podSandboxId });
  await runtime.removePodSandbox({ podSandboxId });
}

async function sequenceBench(ours: CriRuntime, client: GrpcJsClient) {
  const present = await ours.imageStatus({ image: { image } });
  if (!present.image) {
    console.log(`sandbox sequence: skipped: image "${image}" is not present`);
    return;
  }
  const logDirectory = await Deno.makeTempDir({ prefix: "kts-cri-bench-" });
  const a: SequenceResult[] = [];
  const b: SequenceResult[] = [];
  try {
    for (let i = 0; i < SEQUENCES; i++) {
      const order = i % 2 === 0 ? ["ours", "theirs"] : ["theirs", "ours"];
      for (const who of order) {
        const result = who === "ours"
          ? await oursSequence(ours, logDirectory)
          : await theirsSequence(client, logDirectory);
        (who === "ours" ? a : b).push(result);
        await cleanup(ours, result.podSandboxId);
      }
    }
  } finally {
    await Deno.remove(logDirectory, { recursive: true }).catch(() => {});
  }
  report(
    "RunPodSandbox+CreateContainer+StartContainer",
    a.map((r) => r.ms),
    b.map((r) => r.ms),
    1.0,
  );
  const steps = ["RunPodSandbox", "CreateContainer", "StartContainer"].map(
    (name, i) => {
      const o = percentile(a.map((r) => r.steps[i]!), 0.5);
      const t = percentile(b.map((r) => r.steps[i]!), 0.5);
      return `${name} ${o.toFixed(1)}/${t.toFixed(1)} ms`;
    },
  );
  console.log(`  per-step p50 ours/grpc-js: ${steps.join(", ")}`);
  const paired = pairedRatio(a.map((r) => r.ms), b.map((r) => r.ms));
  console.log(
    `  paired (each ours/grpc-js pair run back to back): median ratio ${
      paired.median.toFixed(3)
    }, 95% bootstrap interval ${paired.low.toFixed(3)}-${
      paired.high.toFixed(3)
    }`,
  );
}

/**
 * Median of the per-pair ratios with a bootstrap interval: a drift-free
 * view of the same comparison (containerd's own time dominates the
 * sequence, so its noise decides the p50 ratio above).
 */
function pairedRatio(ours: number[], other: number[]) {
  const ratios = ours.map((o, i) => o / other[i]!);
  const median = (xs: number[]) => percentile(xs, 0.5);
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const medians: number[] = [];
  for (let i = 0; i < 2000; i++) {
    medians.push(
      median(ratios.map(() => ratios[Math.floor(rand() * ratios.length)]!)),
    );
  }
  return {
    median: median(ratios),
    low: percentile(medians, 0.025),
    high: percentile(medians, 0.975),
  };
}

const ours = createCriRuntime({ endpoint });
const client = grpcJsClient();
try {
  console.log(`cri_bench: endpoint ${endpoint}${QUICK ? " (quick)" : ""}`);
  await versionBench(ours, client);
  await sequenceBench(ours, client);
} finally {
  client.close();
  await ours.close();
}
