/**
 * `ValidateKubeletConfiguration`
 * (pkg/kubelet/apis/config/validation/validation.go): the feature-gate merge
 * (whose error is returned alone), the rule table, the component validators,
 * and upstream's aggregate error text (`utilerrors.NewAggregate`).
 * @module
 */
import type { FeatureGates } from "../features/mod.ts";
import type { KubeletConfiguration } from "./schema.ts";
import {
  type HostFacts,
  loggingIssues,
  metricsIssues,
  osIssues,
  tracingIssues,
} from "./validation_components.ts";
import {
  LATE_RULES,
  type Rule,
  type RuleContext,
  RULES,
  type ValidationIssue,
} from "./validation_rules.ts";

/** Options for validateKubeletConfiguration. */
export interface ValidationOptions {
  /** OS for the OS-specific checks (default `Deno.build.os`). */
  os?: string;
  /** Host cgroup version for the OS-specific checks (default 2). */
  cgroupVersion?: 1 | 2;
  /** The kubelet's own version for `showHiddenMetricsForVersion` (default 1.34). */
  binaryVersion?: { major: number; minor: number };
}

function runRules(rules: readonly Rule[], ctx: RuleContext): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const rule of rules) {
    const result = rule.check(ctx);
    if (result === undefined) continue;
    const list = Array.isArray(result) ? result : [result];
    for (const item of list) {
      out.push(
        typeof item === "string" ? { field: rule.field, message: item } : item,
      );
    }
  }
  return out;
}

/**
 * Validates a configuration against the gates (`gates` plus the config's
 * own `featureGates`, on a copy). Returns every issue in upstream order;
 * an empty list means valid. A bad `featureGates` entry is returned alone.
 */
export function validateKubeletConfiguration(
  config: KubeletConfiguration,
  gates: FeatureGates,
  options: ValidationOptions = {},
): ValidationIssue[] {
  const local = gates.clone();
  try {
    local.setFromMap(config.featureGates ?? {});
  } catch (err) {
    return [{ field: "featureGates", message: (err as Error).message }];
  }
  const ctx: RuleContext = { c: config, gate: (name) => local.enabled(name) };
  const host: HostFacts = {
    os: options.os ?? Deno.build.os,
    cgroupVersion: options.cgroupVersion ?? 2,
  };
  return [
    ...runRules(RULES, ctx),
    ...osIssues(config, host),
    ...metricsIssues(config, options.binaryVersion ?? { major: 1, minor: 34 }),
    ...loggingIssues(config, ctx.gate),
    ...tracingIssues(config),
    ...runRules(LATE_RULES, ctx),
  ];
}

/**
 * Upstream's aggregate text: messages de-duplicated; one message alone,
 * several as `[a, b]`. Empty input gives "".
 */
export function formatValidationIssues(
  issues: readonly ValidationIssue[],
): string {
  const messages = [...new Set(issues.map((i) => i.message))];
  if (messages.length <= 1) return messages[0] ?? "";
  return `[${messages.join(", ")}]`;
}
