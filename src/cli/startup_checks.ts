/**
 * Values upstream only parses once the kubelet starts, after configuration validation passed
 * (`cmd/kubelet/app/server.go` `run`/`RunKubelet`, `NewMainKubelet`): eviction thresholds
 * (`eviction.ParseThresholdConfig`), reserved resources (`parseResourceList`) and `--node-ip`
 * (`ParseNodeIPArgument`). Upstream fails its start-up on them; we report them before starting
 * and in `--dry-run`, with upstream's wording after the field name.
 *
 * @module
 */

import type { KubeletConfiguration } from "../config/mod.ts";
import type { KubeletFlags } from "../flags/mod.ts";
import {
  parseGracePeriod,
  parseMinimumReclaim,
  parseThresholdStatement,
} from "../eviction/mod.ts";
import { parseQuantity } from "../util/quantity.ts";
import { errorMessage } from "../util/error_message.ts";

const RESERVABLE = new Set(["cpu", "memory", "ephemeral-storage", "pid"]);

type StringMap = Readonly<Record<string, string>> | undefined;

function message(error: unknown): string {
  return errorMessage(error);
}

/**
 * Upstream `ParseThresholdConfig`: every statement of `evictionHard`, `evictionSoft`,
 * `evictionSoftGracePeriod` and `evictionMinimumReclaim` must parse, and each soft threshold
 * needs a grace period. Returns one problem per field, `<field>: <upstream error>`.
 */
export function evictionProblems(config: {
  evictionHard?: StringMap;
  evictionSoft?: StringMap;
  evictionSoftGracePeriod?: StringMap;
  evictionMinimumReclaim?: StringMap;
}): string[] {
  const problems: string[] = [];
  const each = (
    field: string,
    map: StringMap,
    check: (signal: string, value: string) => unknown,
  ) => {
    for (const [signal, value] of Object.entries(map ?? {}).sort()) {
      try {
        check(signal, value);
      } catch (error) {
        problems.push(`${field}: ${message(error)}`);
        return;
      }
    }
  };
  each("evictionHard", config.evictionHard, parseThresholdStatement);
  each("evictionSoft", config.evictionSoft, parseThresholdStatement);
  each(
    "evictionSoftGracePeriod",
    config.evictionSoftGracePeriod,
    parseGracePeriod,
  );
  each(
    "evictionMinimumReclaim",
    config.evictionMinimumReclaim,
    parseMinimumReclaim,
  );
  if (problems.length === 0) {
    const periods = config.evictionSoftGracePeriod ?? {};
    for (const [signal, value] of Object.entries(config.evictionSoft ?? {})) {
      if (value === "0%" || value === "100%") continue;
      if (!(signal in periods)) {
        problems.push(
          `evictionSoft: grace period must be specified for the soft eviction threshold ${signal}`,
        );
        break;
      }
    }
  }
  return problems;
}

/** Upstream `parseResourceList` for `kubeReserved`/`systemReserved` (server.go `run`). */
export function reservedProblems(config: {
  kubeReserved?: StringMap;
  systemReserved?: StringMap;
}): string[] {
  const problems: string[] = [];
  const fields = [
    ["kubeReserved", "--kube-reserved", config.kubeReserved],
    ["systemReserved", "--system-reserved", config.systemReserved],
  ] as const;
  for (const [field, flag, map] of fields) {
    for (const [name, value] of Object.entries(map ?? {}).sort()) {
      let problem: string | undefined;
      if (!RESERVABLE.has(name)) problem = `cannot reserve "${name}" resource`;
      else {
        try {
          if (parseQuantity(value).value < 0) {
            problem =
              `resource quantity for "${name}" cannot be negative: ${value}`;
          }
        } catch (error) {
          problem =
            `failed to parse quantity "${value}" for "${name}" resource: ${
              message(error)
            }`;
        }
      }
      if (problem) {
        problems.push(`${field}: ${flag} value failed to parse: ${problem}`);
        break;
      }
    }
  }
  return problems;
}

const IPV4_REGEXP = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** `netutils.ParseIPSloppy` family: 4, 6, or undefined when the text is no IP. */
function ipFamily(text: string): 4 | 6 | undefined {
  const v4 = IPV4_REGEXP.exec(text);
  if (v4) return v4.slice(1).every((o) => Number(o) <= 255) ? 4 : undefined;
  if (!text.includes(":")) return undefined;
  try {
    new URL(`http://[${text}]/`);
    return 6;
  } catch {
    return undefined;
  }
}

function isUnspecified(text: string): boolean {
  return text === "0.0.0.0" || /^[0:]+$/.test(text) && text.includes("::");
}

/**
 * Upstream `RunKubelet` with `ParseNodeIPArgument`: entries that are no IP are ignored (logged
 * upstream), but more than two IPs, two of one family, or a dual-stack pair with an unspecified
 * address (or with a legacy cloud provider) fail the start.
 */
export function nodeIPProblems(
  flags: Pick<KubeletFlags, "nodeIP" | "cloudProvider">,
): string[] {
  const text = flags.nodeIP ?? "";
  if (text === "") return [];
  const ips = text.split(",").map((s) => s.trim()).filter((s) =>
    ipFamily(s) !== undefined
  );
  let problem: string | undefined;
  if (
    ips.length > 2 ||
    (ips.length === 2 && ipFamily(ips[0]!) === ipFamily(ips[1]!))
  ) {
    problem = "must contain either a single IP or a dual-stack pair of IPs";
  } else if (
    ips.length === 2 && flags.cloudProvider !== "" &&
    flags.cloudProvider !== "external"
  ) {
    problem = "dual-stack not supported in this configuration";
  } else if (ips.length === 2 && ips.some(isUnspecified)) {
    problem = "dual-stack node IP cannot include '0.0.0.0' or '::'";
  }
  return problem ? [`nodeIP: bad --node-ip "${text}": ${problem}`] : [];
}

/** Every start-up problem of `config` and `flags`, each `<field>: <upstream error>`. */
export function startupProblems(
  config: KubeletConfiguration,
  flags: KubeletFlags,
): string[] {
  const c = config as {
    evictionHard?: StringMap;
    evictionSoft?: StringMap;
    evictionSoftGracePeriod?: StringMap;
    evictionMinimumReclaim?: StringMap;
    kubeReserved?: StringMap;
    systemReserved?: StringMap;
  };
  return [
    ...reservedProblems(c),
    ...evictionProblems(c),
    ...nodeIPProblems(flags),
  ];
}
