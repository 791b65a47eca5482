/**
 * The kubelet command (upstream `NewKubeletCommand` RunE): flags → config →
 * validation → either `--dry-run` output or `deps.start`. Every failure is one
 * klog line `"command failed" err="…"` and exit status 1; never a stack trace.
 * @module
 */
import type { KubeletConfiguration } from "../config/mod.ts";
import type { FeatureGates } from "../features/mod.ts";
import type { KubeletFlags } from "../flags/mod.ts";
import { createLogger, type Logger } from "../log/mod.ts";
import { goQuote } from "../util/go_strconv.ts";
import {
  CommandError,
  type Resolution,
  resolveConfiguration,
} from "./resolve_config.ts";
import { errorMessage } from "../util/error_message.ts";

/** What the kubelet gets when it starts. */
export interface StartContext {
  config: KubeletConfiguration;
  flags: KubeletFlags;
  logger: Logger;
  featureGates: FeatureGates;
  signal: AbortSignal;
}

/** The permission hook (src/permissions) as the command uses it. */
export interface CommandPermissions {
  /** Deno `--allow-*` flags this configuration needs. */
  flagsFor(ctx: StartContext): string[] | Promise<string[]>;
  /** Problems with the grants this process holds; empty when all is well. */
  check(ctx: StartContext): Promise<string[]>;
}

/** The command's effects, injected. */
export interface CommandDeps {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Starts the kubelet; resolves to the exit status. */
  start?: (ctx: StartContext) => Promise<number>;
  permissions?: CommandPermissions;
  env?: Record<string, string | undefined>;
  /** Stops the kubelet when aborted; default: SIGINT/SIGTERM. */
  signal?: AbortSignal;
}

const TYPE_META = "&TypeMeta{Kind:,APIVersion:,}";

function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0] ?? "" : `[${errors.join(", ")}]`;
}

function loggerFor(
  config: KubeletConfiguration,
  stderr: (line: string) => void,
): Logger {
  const logging = (config as { logging?: Record<string, unknown> }).logging ??
    {};
  const vmodule = (logging.vmodule ?? []) as {
    filePattern: string;
    verbosity: number;
  }[];
  return createLogger({
    format: logging.format === "json" ? "json" : "text",
    verbosity: typeof logging.verbosity === "number" ? logging.verbosity : 0,
    vmodule: vmodule.map((v) => ({
      pattern: v.filePattern,
      level: v.verbosity,
    })),
    stderr,
  });
}

type Ready = Extract<Resolution, { kind: "config" }>;

/**
 * Steps 11–14 (docs/flags-and-config.md): logging, printed flags, validation.
 * Returns all problems.
 */
async function checkConfiguration(
  ready: Ready,
  report: (logger: Logger) => void,
  stderr: (line: string) => void,
): Promise<string[]> {
  const { formatValidationIssues, validateKubeletConfiguration } = await import(
    "../config/mod.ts"
  );
  const { config, gates, flags } = ready;
  const problems = [...ready.deferred];
  const issues = validateKubeletConfiguration(config, gates);
  const loggingIssues = issues.filter((i) =>
    i.field === "logging" || i.field.startsWith("logging.")
  );
  if (loggingIssues.length > 0) {
    const text = `initialize logging: ${formatValidationIssues(loggingIssues)}`;
    if (!flags.dryRun) throw new CommandError(text);
    problems.push(text);
  } else {
    report(loggerFor(config, stderr));
  }
  const rest = issues.filter((i) => !loggingIssues.includes(i));
  if (rest.length > 0) {
    const text = `failed to validate kubelet configuration, error: ${
      formatValidationIssues(rest)
    }, path: ${TYPE_META}`;
    if (!flags.dryRun) throw new CommandError(text);
    problems.push(text);
  }
  return problems;
}

function printFlags(ready: Ready, logger: Logger): void {
  const verbose = logger.v(1);
  if (!verbose.enabled) return;
  for (const flag of ready.flagSet.flagSet.flags()) {
    verbose.info(`FLAG: --${flag.name}=${goQuote(flag.value.text())}`);
  }
}

function noteCgroups(config: KubeletConfiguration, logger: Logger): void {
  const { kubeletCgroups, kubeReservedCgroup } = config as {
    kubeletCgroups?: string;
    kubeReservedCgroup?: string;
  };
  if (
    kubeletCgroups && kubeReservedCgroup &&
    !kubeletCgroups.startsWith(kubeReservedCgroup)
  ) {
    logger.info(
      "unsupported configuration:KubeletCgroups is not within KubeReservedCgroup",
    );
  }
}

function signalFor(
  deps: CommandDeps,
): { signal: AbortSignal; dispose(): void } {
  if (deps.signal) return { signal: deps.signal, dispose: () => {} };
  const controller = new AbortController();
  const stop = () => controller.abort(new Error("terminated by signal"));
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, stop);
  return {
    signal: controller.signal,
    dispose: () => signals.forEach((s) => Deno.removeSignalListener(s, stop)),
  };
}

async function dryRun(ctx: StartContext, deps: CommandDeps): Promise<number> {
  const { toKubeletConfigurationYaml } = await import("../config/mod.ts");
  let out = await toKubeletConfigurationYaml(ctx.config);
  if (!out.endsWith("\n")) out += "\n";
  if (deps.permissions) {
    let grants: string[];
    try {
      grants = await deps.permissions.flagsFor(ctx);
    } catch (error) {
      throw new CommandError(
        `failed to plan Deno permissions: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
    for (const grant of grants) out += `# deno permission: ${grant}\n`;
  }
  deps.stdout(out);
  return 0;
}

async function start(ctx: StartContext, deps: CommandDeps): Promise<number> {
  if (deps.permissions) {
    const missing = await deps.permissions.check(ctx);
    if (missing.length > 0) {
      throw new CommandError(
        `insufficient Deno permissions: ${missing.join("; ")}`,
      );
    }
  }
  if (!deps.start) {
    throw new CommandError(
      "failed to run Kubelet: no kubelet runtime is wired in",
    );
  }
  try {
    return await deps.start(ctx);
  } catch (error) {
    throw new CommandError(`failed to run Kubelet: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

/**
 * Runs the kubelet command for `argv` (without the program name) and returns
 * the exit status: 0 for help, version and a valid dry run, 1 for any
 * failure (logged as one `"command failed"` line), or the kubelet's status.
 */
export async function runCommand(
  argv: string[],
  deps: CommandDeps,
): Promise<number> {
  const stderrLine = (line: string) => deps.stderr(line + "\n");
  let logger = createLogger({
    format: "text",
    verbosity: 0,
    vmodule: [],
    stderr: stderrLine,
  });
  let disposeSignal = () => {};
  try {
    const resolution = await resolveConfiguration(argv, {
      logger,
      stderr: deps.stderr,
    });
    if (resolution.kind === "exit") {
      if (resolution.stdout) deps.stdout(resolution.stdout);
      return resolution.code;
    }
    const problems = await checkConfiguration(
      resolution,
      (l) => logger = l,
      stderrLine,
    );
    // what upstream parses only while starting fails a start, and shows in a dry run
    const { startupProblems } = await import("./startup_checks.ts");
    const startup = startupProblems(resolution.config, resolution.flags).map(
      (p) => `failed to run Kubelet: ${p}`,
    );
    if (resolution.flags.dryRun) problems.push(...startup);
    else if (problems.length === 0 && startup[0]) {
      throw new CommandError(startup[0]);
    }
    if (problems.length > 0) throw new CommandError(aggregate(problems));
    const { unhonouredSettings } = await import("./unhonoured_settings.ts");
    for (
      const warning of unhonouredSettings(resolution.config)
    ) {
      logger.warn(warning);
    }
    printFlags(resolution, logger);
    noteCgroups(resolution.config, logger);
    const handle = resolution.flags.dryRun
      ? { signal: new AbortController().signal, dispose: () => {} }
      : signalFor(deps);
    disposeSignal = handle.dispose;
    const ctx: StartContext = {
      config: resolution.config,
      flags: resolution.flags,
      logger,
      featureGates: resolution.gates,
      signal: handle.signal,
    };
    return resolution.flags.dryRun
      ? await dryRun(ctx, deps)
      : await start(ctx, deps);
  } catch (error) {
    logger.error("command failed", { err: errorMessage(error) });
    return 1;
  } finally {
    disposeSignal();
  }
}
