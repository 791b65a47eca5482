/**
 * Scenario data for the simulated runtime: how images pull and how containers
 * behave, keyed by image reference or container name. Plain data (JSON/YAML
 * friendly), validated with zod so a bad scenario file names the field.
 *
 * @module
 */

import { z } from "zod";

const nonNegativeMs = z.number().int().nonnegative();

/** How one container behaves once started (all times in milliseconds). */
export const SimContainerBehaviorSchema = z.strictObject({
  /** Exit with `exitCode` this long after start; omit to run until stopped. */
  exitAfterMs: nonNegativeMs.optional(),
  /** Exit code used when `exitAfterMs` elapses (default 0). */
  exitCode: z.number().int().optional(),
  /** Report the exit as `OOMKilled` (exit code 137 unless `exitCode` is set). */
  oomKilled: z.boolean().optional(),
  /** `startContainer` takes this long to return. */
  startDelayMs: nonNegativeMs.optional(),
  /** `startContainer` fails with this message (gRPC Unknown), as runc does. */
  startError: z.string().optional(),
  /** The process ignores SIGTERM: `stopContainer` waits the whole timeout, then kills. */
  ignoreSigterm: z.boolean().optional(),
  /** Exit code after a SIGTERM the process honours (default 143). */
  sigtermExitCode: z.number().int().optional(),
  /** Lines written to stdout when the container starts. */
  logs: z.array(z.string()).optional(),
  /** Scripted `execSync` results, matched on the exact command line. */
  exec: z.array(z.strictObject({
    command: z.array(z.string()).min(1),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
    exitCode: z.number().int().optional(),
    delayMs: nonNegativeMs.optional(),
  })).optional(),
  /** Memory working set reported by stats, in bytes (default 8 MiB). */
  memoryBytes: z.number().int().nonnegative().optional(),
});

/** How pulling one image behaves. */
export const SimImageBehaviorSchema = z.strictObject({
  /** A pull takes this long. */
  pullDelayMs: nonNegativeMs.optional(),
  /** The first N pulls fail; `-1` means every pull fails. */
  pullFailures: z.number().int().min(-1).optional(),
  /** Message used for scripted pull failures. */
  pullError: z.string().optional(),
  /** Image size in bytes (default 5 MiB). */
  sizeBytes: z.number().int().nonnegative().optional(),
});

/** A whole simulated-runtime scenario. */
export const SimScenarioSchema = z.strictObject({
  /** Images present before any pull (default: the pause image). */
  preloadedImages: z.array(z.string().min(1)).optional(),
  /** Images the "registry" has; omit to let every reference pull. */
  registryImages: z.array(z.string().min(1)).optional(),
  /** Registries (host[:port]) that need these credentials to pull. */
  registryAuth: z.record(
    z.string(),
    z.strictObject({ username: z.string(), password: z.string() }),
  ).optional(),
  /** Per image reference (as written or normalized). */
  images: z.record(z.string(), SimImageBehaviorSchema).optional(),
  /** Per container name (`metadata.name`); wins over the image's entry. */
  containers: z.record(z.string(), SimContainerBehaviorSchema).optional(),
  /** Per image reference; used when no container-name entry matches. */
  containersByImage: z.record(z.string(), SimContainerBehaviorSchema)
    .optional(),
  /** Runtime conditions reported by `status()`. */
  runtimeReady: z.boolean().optional(),
  networkReady: z.boolean().optional(),
  /**
   * Also append container output to each container's CRI log file on the
   * host (`logDirectory/logPath`), as containerd does; off by default so the
   * sim touches no files.
   */
  logFiles: z.boolean().optional(),
  /** Subnet prefix for pod IPs, e.g. `10.88` gives 10.88.x.y (default). */
  podIpPrefix: z.string().regex(/^\d{1,3}\.\d{1,3}$/).optional(),
});

/** See {@linkcode SimContainerBehaviorSchema}. */
export type SimContainerBehavior = z.infer<typeof SimContainerBehaviorSchema>;
/** See {@linkcode SimImageBehaviorSchema}. */
export type SimImageBehavior = z.infer<typeof SimImageBehaviorSchema>;
/** See {@linkcode SimScenarioSchema}. */
export type SimScenario = z.infer<typeof SimScenarioSchema>;

/**
 * Validates scenario data (parsed JSON or YAML).
 *
 * @param data the parsed document
 * @param source where it came from, for the error message
 * @throws TypeError naming the first bad field, with the zod error as `cause`
 */
export function parseSimScenario(
  data: unknown,
  source = "scenario",
): SimScenario {
  const result = SimScenarioSchema.safeParse(data ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue && issue.path.length > 0
    ? issue.path.map(String).join(".")
    : "(root)";
  throw new TypeError(
    `Invalid simulated runtime ${source}: field "${path}": ${
      issue?.message ?? "invalid"
    }; fix the value or remove the field`,
    { cause: result.error },
  );
}
