/**
 * The component-base validators the kubelet calls (logging, tracing,
 * metrics) and the OS-specific rule, each returning field-path issues.
 * @module
 */
import { parseQuantity } from "../util/quantity.ts";
import type { KubeletConfiguration } from "./schema.ts";
import type { ValidationIssue } from "./validation_rules.ts";
import { goUrlScheme, q } from "./validation_support.ts";

const MAX_VERBOSITY = 2147483647;

/** Host facts the OS-specific checks depend on. */
export interface HostFacts {
  /** `Deno.build.os` name. */
  os: string;
  /** cgroup version of the host (Linux only). */
  cgroupVersion: 1 | 2;
}

/**
 * Upstream `validateKubeletOSConfiguration` (validation_linux.go,
 * validation_others.go, validation_windows.go): at most one issue.
 */
export function osIssues(
  c: KubeletConfiguration,
  host: HostFacts,
): ValidationIssue[] {
  const one = (field: string, message: string) => [{ field, message }];
  const ids = c.userNamespaces?.idsPerPod;
  if (host.os === "linux") {
    const v1 = host.cgroupVersion === 1;
    if (c.failCgroupV1 && v1) {
      return one(
        "failCgroupV1",
        "kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is in maintenance mode",
      );
    }
    if (v1 && c.singleProcessOOMKill === false) {
      return one(
        "singleProcessOOMKill",
        "invalid configuration: singleProcessOOMKill must not be explicitly set to false when using cgroup v1",
      );
    }
    if (ids === undefined) return [];
    const f = "userNamespaces.idsPerPod";
    if (ids < 65536) {
      return one(
        f,
        "invalid configuration: userNamespaces.idsPerPod must not be less than 65536",
      );
    }
    if (ids % 65536 !== 0) {
      return one(
        f,
        "invalid configuration: userNamespaces.idsPerPod must be a multiple of 65536",
      );
    }
    if (ids > 4294967295) {
      return one(
        f,
        "invalid configuration: userNamespaces.idsPerPod must not be more than 4294967295",
      );
    }
    return [];
  }
  const where = host.os === "windows"
    ? "is not supported on Windows"
    : "is only supported on linux";
  if (c.singleProcessOOMKill !== undefined) {
    return one(
      "singleProcessOOMKill",
      `invalid configuration: singleProcessOOMKill ${where}`,
    );
  }
  if (c.userNamespaces !== undefined) {
    return one(
      "userNamespaces",
      `invalid configuration: userNamespaces ${where}`,
    );
  }
  return [];
}

/** `--show-hidden-metrics-for-version`: component-base `metrics.ValidateShowHiddenMetricsVersion`. */
export function metricsIssues(
  c: KubeletConfiguration,
  binary: { major: number; minor: number },
): ValidationIssue[] {
  const v = c.showHiddenMetricsForVersion ?? "";
  const allowed = `${binary.major}.${binary.minor - 1}`;
  if (v === "" || v === allowed) return [];
  return [{
    field: "showHiddenMetricsForVersion",
    message:
      `--show-hidden-metrics-for-version must be omitted or have the value '${allowed}'. Only the previous minor version is allowed`,
  }];
}

function nonZero(quantity: string | undefined): boolean {
  if (quantity === undefined) return false;
  try {
    return parseQuantity(quantity).value !== 0;
  } catch {
    return true;
  }
}

/** component-base `logsapi.Validate`. */
export function loggingIssues(
  c: KubeletConfiguration,
  gate: (name: string) => boolean,
): ValidationIssue[] {
  const log = c.logging;
  const out: ValidationIssue[] = [];
  const add = (field: string, message: string) =>
    out.push({ field, message: `${field}: ${message}` });
  if (log.format !== "text" && log.format !== "json") {
    add(
      "logging.format",
      `Invalid value: ${q(log.format)}: Unsupported log format`,
    );
  } else if (log.format === "json" && !gate("LoggingBetaOptions")) {
    add(
      "logging.format",
      "Forbidden: Log format json is disabled, see LoggingBetaOptions feature",
    );
  }
  if (log.verbosity > MAX_VERBOSITY) {
    add(
      "logging.verbosity",
      `Invalid value: ${log.verbosity}: Must be <= ${MAX_VERBOSITY}`,
    );
  }
  const vmodule = log.vmodule ?? [];
  if (vmodule.length > 0 && log.format !== "text") {
    add("logging.vmodule", "Forbidden: Only supported for text log format");
  }
  vmodule.forEach((item, i) => {
    const f = `logging.vmodule[${i}]`;
    if (item.filePattern === "") {
      add(f, "Required value: File pattern must not be empty");
    }
    if (/[=,]/.test(item.filePattern)) {
      add(
        f,
        `Invalid value: ${
          q(item.filePattern)
        }: File pattern must not contain equal sign or comma`,
      );
    }
    if (item.verbosity > MAX_VERBOSITY) {
      add(f, `Invalid value: ${item.verbosity}: Must be <= ${MAX_VERBOSITY}`);
    }
  });
  if (!gate("LoggingAlphaOptions")) {
    for (const format of ["text", "json"] as const) {
      const opts = log.options[format];
      const base = `logging.options.${format}`;
      if (opts.splitStream) {
        add(
          `${base}.splitStream`,
          "Forbidden: Feature LoggingAlphaOptions is disabled",
        );
      }
      if (nonZero(opts.infoBufferSize)) {
        add(
          `${base}.infoBufferSize`,
          "Forbidden: Feature LoggingAlphaOptions is disabled",
        );
      }
    }
  }
  return out;
}

/** component-base `ValidateTracingConfiguration`. */
export function tracingIssues(c: KubeletConfiguration): ValidationIssue[] {
  const tracing = c.tracing;
  if (tracing === undefined) return [];
  const out: ValidationIssue[] = [];
  const rate = tracing.samplingRatePerMillion;
  const rateField = "tracing.samplingRatePerMillion";
  if (rate !== undefined && rate < 0) {
    out.push({
      field: rateField,
      message:
        `${rateField}: Invalid value: ${rate}: sampling rate must be positive`,
    });
  }
  if (rate !== undefined && rate > 1000000) {
    out.push({
      field: rateField,
      message:
        `${rateField}: Invalid value: ${rate}: sampling rate per million must be less than or equal to one million`,
    });
  }
  const endpoint = tracing.endpoint;
  if (endpoint !== undefined) {
    const field = "tracing.endpoint";
    const target = endpoint.includes("//") ? endpoint : `dns://${endpoint}`;
    try {
      const scheme = goUrlScheme(target);
      if (!["", "dns", "unix", "unix-abstract"].includes(scheme)) {
        out.push({
          field,
          message: `${field}: Invalid value: ${
            q(endpoint)
          }: unsupported scheme: ${scheme}.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md`,
        });
      }
    } catch (err) {
      out.push({
        field,
        message: `${field}: Invalid value: ${q(endpoint)}: ${
          (err as Error).message
        }`,
      });
    }
  }
  return out;
}
