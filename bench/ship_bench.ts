/**
 * Ship benchmark: bundle size, binary size (when DENORT_BIN is set), cold
 * start to the first static pod running on the simulated runtime, and idle
 * RSS. Start time and RSS are reported as ratios to a bundled hello-world
 * `Deno.serve` started the same way (`deno run --no-prompt <lists> x.js`),
 * measured interleaved in the same run.
 *
 * Run: deno run -A bench/ship_bench.ts [rounds=5]
 * @module
 */
import { join } from "node:path";
import {
  bundleInto,
  CHILD_ENV,
  KUBELET_READY,
  makeLayout,
  ROOT,
} from "../tests/ship/_helpers.ts";

const ROUNDS = Number(Deno.args[0] ?? 5);
const READY_TIMEOUT_MS = 30_000;
const RUNNING_REGEXP =
  /ship-web[^\n]*(running|started)|(running|started)[^\n]*ship-web/i;

function say(text: string): void {
  // deno-lint-ignore no-console
  console.log(text);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[mid]!
    : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const match = status.match(/^VmRSS:\s+(\d+)\s+kB/m);
  return match ? Number(match[1]) : NaN;
}

interface Sample {
  startMs: number;
  rssKiB: number;
}

/** Starts a process, waits for `ready` in its output, samples, kills it. */
async function measure(
  args: string[],
  cwd: string,
  ready: RegExp,
): Promise<Sample> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: CHILD_ENV,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const { promise, resolve } = Promise.withResolvers<number | undefined>();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      if (ready.test(text)) resolve(performance.now());
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const timer = setTimeout(() => resolve(undefined), READY_TIMEOUT_MS);
  const readyAt = await promise;
  clearTimeout(timer);
  let rss = NaN;
  if (readyAt !== undefined) {
    // idle: let start-up work settle before sampling
    await new Promise((r) => setTimeout(r, 1000));
    rss = rssKiB(child.pid);
  }
  try {
    child.kill("SIGTERM");
  } catch {
    // already exited
  }
  await child.status;
  await pumps;
  if (readyAt === undefined) {
    throw new Error(`not ready within ${READY_TIMEOUT_MS}ms:\n${text}`);
  }
  return { startMs: readyAt - started, rssKiB: rss };
}

const HELLO = `Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen() { console.log("hello listening"); },
}, () => new Response("hello"));
`;

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kts-ship-bench-" });
  try {
    const helloSrc = join(dir, "hello.ts");
    const helloJs = join(dir, "hello.js");
    await Deno.writeTextFile(helloSrc, HELLO);
    const bundled = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--platform", "deno", "--output", helloJs, helloSrc],
      cwd: dir,
      stdout: "null",
      stderr: "null",
    }).output();
    if (bundled.code !== 0) throw new Error("cannot bundle hello world");
    const helloArgs = [
      "run",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      helloJs,
    ];

    let kubelet: { args: string[]; cwd: string } | undefined;
    await using layout = await makeLayout();
    if (KUBELET_READY) {
      const bundle = await bundleInto(layout.dir);
      const size = (await Deno.stat(bundle)).size;
      say(`bundle dist/kubelet.js: ${(size / 1024).toFixed(0)} KiB`);
      kubelet = {
        args: ["run", ...layout.denoFlags, bundle, ...layout.kubeletArgs],
        cwd: layout.dir,
      };
    } else {
      say("bundle: skipped (src/cli or src/kubelet/create_kubelet.ts missing)");
    }

    if (Deno.env.get("DENORT_BIN")) {
      const out = join(dir, "bin");
      const result = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          join(ROOT, "scripts/compile.ts"),
          `--out-dir=${out}`,
          `--arch=${Deno.build.arch === "aarch64" ? "arm64" : "amd64"}`,
        ],
        stdout: "null",
        stderr: "null",
      }).output();
      if (result.code === 0) {
        for (const entry of Deno.readDirSync(out)) {
          if (!entry.name.startsWith("kubelet-linux-")) continue;
          const size = (await Deno.stat(join(out, entry.name))).size;
          say(`binary ${entry.name}: ${(size / 1048576).toFixed(1)} MiB`);
        }
      } else say("binary: deno task compile failed (see deno task compile)");
    } else {
      say("binary: skipped (DENORT_BIN not set)");
    }

    const hello: Sample[] = [];
    const kube: Sample[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      if (kubelet) {
        kube.push(await measure(kubelet.args, kubelet.cwd, RUNNING_REGEXP));
      }
      hello.push(await measure(helloArgs, dir, /hello listening/));
    }
    const helloStart = median(hello.map((s) => s.startMs));
    const helloRss = median(hello.map((s) => s.rssKiB));
    say(
      `hello Deno.serve: start ${helloStart.toFixed(0)} ms, idle RSS ${
        (helloRss / 1024).toFixed(1)
      } MiB (median of ${ROUNDS})`,
    );
    if (kube.length > 0) {
      const start = median(kube.map((s) => s.startMs));
      const rss = median(kube.map((s) => s.rssKiB));
      say(
        `kubelet cold start to first static pod running: ${
          start.toFixed(0)
        } ms = ${(start / helloStart).toFixed(2)}x hello`,
      );
      say(
        `kubelet idle RSS: ${(rss / 1024).toFixed(1)} MiB = ${
          (rss / helloRss).toFixed(2)
        }x hello (upstream e2e limit: 200 MiB)`,
      );
    } else {
      say("kubelet start/RSS: skipped (src/kubelet/create_kubelet.ts missing)");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

await main();
