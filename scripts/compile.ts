/**
 * `deno task compile [options] [--permissions-from <kubelet-config.yaml>]
 * [--api-server host:port] [kubelet flags…]`
 *
 * Bundles `main.ts` into `dist/kubelet.js` (the same single file the ship
 * tests audit; it also keeps node_modules/ out of the binary), then builds
 * `dist/kubelet-linux-amd64` and `dist/kubelet-linux-arm64` from it with
 * `deno compile --no-prompt` and exactly the scoped permission lists the
 * planner computes (the standard node layout by default), never
 * `--allow-all/run/ffi`. Next to each it builds `dist/cgroup-agent-linux-<arch>`
 * from `src/cgroup_agent/main.ts` with `--allow-all`, the one documented
 * exception (docs/permissions.md, "The cgroup agent"): a small process that
 * gives the kubelet validated access to its cgroups under /sys, which Deno
 * opens only with every permission. Then it writes `dist/SHA256SUMS`.
 *
 * Offline by design: the denort base binary must be given locally through
 * `DENORT_BIN` (Deno's own variable; its architecture is read from the ELF
 * header) or per architecture via `DENORT_BIN_AMD64` / `DENORT_BIN_ARM64`.
 * An architecture without a denort is skipped with a message.
 *
 * Options: `--print-command` (print the deno compile commands, run nothing),
 * `--arch=amd64|arm64` (only that architecture; repeatable),
 * `--out-dir=<dir>` (default `dist`).
 * @module
 */
import { join } from "node:path";
import {
  type ListsRequest,
  parseListsArgs,
  planFor,
  runtimeFlags,
  UsageError,
} from "./permission_lists.ts";
import { bundle, bundleArgs, ROOT } from "./bundle.ts";
import { KUBELET_V8_FLAGS } from "./v8_flags.ts";
import { escapeFlagValue } from "../src/permissions/mod.ts";

/** Linux architectures we ship, with their Rust target triples. */
export const TARGETS = {
  amd64: "x86_64-unknown-linux-gnu",
  arm64: "aarch64-unknown-linux-gnu",
} as const;
export type Arch = keyof typeof TARGETS;

const FORBIDDEN_FLAG_REGEXP = /^--allow-(all|run|ffi)\b|^-A$/;

function say(text: string): void {
  // deno-lint-ignore no-console
  console.log(text);
}

function fail(text: string): never {
  // deno-lint-ignore no-console
  console.error(`error: ${text}`);
  Deno.exit(1);
}

const DENORT_HELP = () =>
  [
    "DENORT_BIN is not set. deno compile would download denort (the Deno runtime",
    "the binary is built on) from dl.deno.land, which an air-gapped build cannot do.",
    `Get denort for this exact Deno version (${Deno.version.deno}) on a connected machine:`,
    `  https://dl.deno.land/release/v${Deno.version.deno}/denort-x86_64-unknown-linux-gnu.zip`,
    `  https://dl.deno.land/release/v${Deno.version.deno}/denort-aarch64-unknown-linux-gnu.zip`,
    "unzip it, copy it here and run e.g.",
    "  DENORT_BIN=/opt/denort/denort deno task compile",
    "(DENORT_BIN_AMD64 / DENORT_BIN_ARM64 name one denort per architecture.)",
  ].join("\n");

/** The architecture of an ELF file, or undefined for a non-ELF file. */
export function elfArch(bytes: Uint8Array): Arch | undefined {
  if (bytes.length < 20) return undefined;
  if (bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c) {
    return undefined;
  }
  const machine = bytes[18]! | (bytes[19]! << 8);
  if (machine === 0x3e) return "amd64";
  if (machine === 0xb7) return "arm64";
  return undefined;
}

function hostArch(): Arch {
  return Deno.build.arch === "aarch64" ? "arm64" : "amd64";
}

function readHead(path: string): Uint8Array {
  const file = Deno.openSync(path, { read: true });
  try {
    const buf = new Uint8Array(20);
    const n = file.readSync(buf) ?? 0;
    return buf.subarray(0, n);
  } finally {
    file.close();
  }
}

/** Which denort builds which architecture, from the environment. */
export function resolveDenorts(
  env: Record<string, string | undefined>,
): { denorts: Partial<Record<Arch, string>>; notes: string[] } {
  const denorts: Partial<Record<Arch, string>> = {};
  const notes: string[] = [];
  const generic = env.DENORT_BIN;
  if (generic) {
    let head: Uint8Array;
    try {
      head = readHead(generic);
    } catch (cause) {
      throw new UsageError(
        `DENORT_BIN="${generic}" cannot be read: ${
          (cause as Error).message
        }; point it at an unzipped denort binary`,
      );
    }
    const arch = elfArch(head);
    if (arch) {
      denorts[arch] = generic;
    } else {
      denorts[hostArch()] = generic;
      notes.push(
        `DENORT_BIN="${generic}" is not an ELF binary; assuming it is for ${hostArch()}`,
      );
    }
  }
  if (env.DENORT_BIN_AMD64) denorts.amd64 = env.DENORT_BIN_AMD64;
  if (env.DENORT_BIN_ARM64) denorts.arm64 = env.DENORT_BIN_ARM64;
  return { denorts, notes };
}

/** Options of {@linkcode compileArgs}. */
export interface CompileArgsOptions {
  permissionFlags: readonly string[];
  /**
   * The plan's `run` list (a kubeconfig's exec credential plugin): the one `--allow-run`
   * flag accepted is the one naming exactly these commands.
   */
  plannedRun?: readonly string[];
  outDir: string;
  /** The bundled entry point (default `<outDir>/kubelet.js`). */
  entry?: string;
}

/** The deno compile argument list for one architecture. */
export function compileArgs(
  arch: Arch,
  options: CompileArgsOptions,
): string[] {
  const { permissionFlags, outDir } = options;
  const planned = options.plannedRun?.length
    ? `--allow-run=${options.plannedRun.map(escapeFlagValue).join(",")}`
    : undefined;
  for (const flag of permissionFlags) {
    if (FORBIDDEN_FLAG_REGEXP.test(flag) && flag !== planned) {
      throw new UsageError(`Refusing to compile with "${flag}"`);
    }
  }
  return [
    "compile",
    "--no-config",
    "--cached-only",
    ...permissionFlags,
    `--v8-flags=${KUBELET_V8_FLAGS}`,
    "--target",
    TARGETS[arch],
    "--output",
    join(outDir, `kubelet-linux-${arch}`),
    options.entry ?? join(outDir, "kubelet.js"),
  ];
}

/**
 * The deno compile argument list for the cgroup agent: every permission (Deno opens /sys and
 * /proc only then), its own small entry point, no npm packages, no config.
 */
export function agentCompileArgs(arch: Arch, outDir: string): string[] {
  return [
    "compile",
    "--no-config",
    "--cached-only",
    "--allow-all",
    "--target",
    TARGETS[arch],
    "--output",
    join(outDir, `cgroup-agent-linux-${arch}`),
    join(ROOT, "src/cgroup_agent/main.ts"),
  ];
}

async function sha256(path: string): Promise<string> {
  const data = await Deno.readFile(path);
  const digest = await crypto.subtle.digest("SHA-256", data);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_\/.,:=@%+\[\]-]+$/.test(arg)
    ? arg
    : `'${arg.replaceAll("'", `'\\''`)}'`;
}

interface CompileOptions {
  request: ListsRequest;
  printOnly: boolean;
  arches: Arch[];
  outDir: string;
}

function parseOptions(args: readonly string[]): CompileOptions {
  const { request, rest } = parseListsArgs(args, {
    valued: ["--arch", "--out-dir"],
    boolean: ["--print-command"],
  });
  const options: CompileOptions = {
    request,
    printOnly: false,
    arches: [],
    outDir: join(ROOT, "dist"),
  };
  for (const arg of rest) {
    const [name, value] = arg.split(/=(.*)/s);
    if (name === "--print-command") options.printOnly = true;
    else if (name === "--arch" && (value === "amd64" || value === "arm64")) {
      options.arches.push(value);
    } else if (name === "--out-dir" && value) options.outDir = value;
    else {
      throw new UsageError(
        `Invalid option "${arg}"; use --print-command, --arch=amd64|arm64, --out-dir=<dir>, --permissions-from <file>, --api-server host:port or kubelet flags`,
      );
    }
  }
  if (options.arches.length === 0) options.arches = ["amd64", "arm64"];
  return options;
}

async function main(): Promise<number> {
  if (!Deno.env.get("DENORT_BIN")) fail(DENORT_HELP());
  const options = parseOptions(Deno.args);
  const { denorts, notes } = resolveDenorts(Deno.env.toObject());
  notes.forEach(say);
  const plan = await planFor(options.request, Deno.cwd());
  const flags = runtimeFlags(plan);
  say(`permissions: ${flags.join(" ")}`);
  const bundled = join(options.outDir, "kubelet.js");
  say(
    `${Deno.execPath()} ${
      bundleArgs(join(ROOT, "main.ts"), bundled).join(" ")
    }`,
  );
  if (!options.printOnly && !await bundle(join(ROOT, "main.ts"), bundled)) {
    return 1;
  }
  const built: string[] = [];
  let failed = 0;
  for (const arch of options.arches) {
    const denort = denorts[arch];
    if (!denort) {
      say(
        `skipping linux/${arch}: no denort for ${
          TARGETS[arch]
        } (set DENORT_BIN_${arch.toUpperCase()}=<path to denort>)`,
      );
      continue;
    }
    const artifacts: [string, string[]][] = [
      [
        `kubelet-linux-${arch}`,
        compileArgs(arch, {
          permissionFlags: flags,
          plannedRun: plan.run,
          outDir: options.outDir,
        }),
      ],
      [`cgroup-agent-linux-${arch}`, agentCompileArgs(arch, options.outDir)],
    ];
    for (const [name, args] of artifacts) {
      say(
        `DENORT_BIN=${shellQuote(denort)} ${
          [Deno.execPath(), ...args].map(shellQuote).join(" ")
        }`,
      );
      if (options.printOnly) continue;
      await Deno.mkdir(options.outDir, { recursive: true });
      const { code } = await new Deno.Command(Deno.execPath(), {
        args,
        env: { DENORT_BIN: denort },
        stdout: "inherit",
        stderr: "inherit",
      }).output();
      if (code !== 0) {
        failed++;
        say(`deno compile of ${name} failed with exit code ${code}`);
        continue;
      }
      built.push(name);
    }
  }
  if (options.printOnly) return 0;
  if (built.length > 0) {
    const lines: string[] = [];
    for (const name of built) {
      lines.push(`${await sha256(join(options.outDir, name))}  ${name}`);
    }
    await Deno.writeTextFile(
      join(options.outDir, "SHA256SUMS"),
      lines.join("\n") + "\n",
    );
    say(`wrote ${join(options.outDir, "SHA256SUMS")}`);
  }
  return failed > 0 || built.length === 0 ? 1 : 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    fail((error as Error).message);
  }
}
