/**
 * The memory floor under kubelet.ts: the RSS of a Deno process (the shipped V8 flags) that
 * loads only what the kubelet cannot run without, and none of its own code. Each step adds
 * one part: Deno alone; node:http and node:tls (the kubelet API's listener, the only one
 * that can ask for client certificates); @bufbuild/protobuf (the CRI); yaml (the
 * configuration and manifests); zod (the configuration's check). Each figure is the median of
 * `--runs` fresh processes, read after a settling pause (docs/performance.md).
 *
 * Run: `deno run -A bench/runtime_floor.ts [--runs=5]`.
 *
 * @module
 */
// deno-lint-ignore-file no-console

import { KUBELET_V8_FLAGS } from "../scripts/v8_flags.ts";

const PARTS: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
  ["node:http + node:tls", async () => {
    await import("node:http");
    await import("node:https");
    return await import("node:tls");
  }],
  ["@bufbuild/protobuf", () => import("@bufbuild/protobuf")],
  ["yaml", () => import("yaml")],
  ["zod", () => import("zod")],
];

const arg = (name: string) =>
  Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

function rssKiB(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

const child = arg("child");
if (child !== undefined) {
  // load the first `child` parts, settle, report
  for (const [, load] of PARTS.slice(0, Number(child))) await load();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  console.log(rssKiB());
} else {
  const runs = Number(arg("runs") ?? 5);
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  let previous = 0;
  for (let count = 0; count <= PARTS.length; count++) {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          `--v8-flags=${KUBELET_V8_FLAGS}`,
          new URL(import.meta.url).pathname,
          `--child=${count}`,
        ],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      samples.push(Number(new TextDecoder().decode(out.stdout).trim()) / 1024);
    }
    const mib = median(samples);
    const label = count === 0 ? "Deno alone" : `+ ${PARTS[count - 1]![0]}`;
    console.log(
      `${label.padEnd(24)} ${mib.toFixed(1).padStart(6)} MiB${
        count === 0 ? "" : ` (+${(mib - previous).toFixed(1)})`
      }`,
    );
    previous = mib;
  }
}
