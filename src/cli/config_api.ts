/**
 * The config area's validation entry points, looked up by name so this
 * command keeps type-checking while that area lands them. Without them no
 * configuration issue is reported.
 * @module
 */
import * as configArea from "../config/mod.ts";
import type { KubeletConfiguration } from "../config/mod.ts";
import type { FeatureGates } from "../features/mod.ts";

/** One configuration problem, in upstream wording. */
export interface ValidationIssue {
  field: string;
  message: string;
}

interface ValidationApi {
  validateKubeletConfiguration?: (
    config: KubeletConfiguration,
    gates: FeatureGates,
  ) => ValidationIssue[];
  formatValidationIssues?: (issues: ValidationIssue[]) => string;
}

const api = configArea as unknown as ValidationApi;

/** `ValidateKubeletConfiguration`: every problem of `config`. */
export function validateConfiguration(
  config: KubeletConfiguration,
  gates: FeatureGates,
): ValidationIssue[] {
  return api.validateKubeletConfiguration?.(config, gates) ?? [];
}

/** Upstream aggregate text: one message, or `[m1, m2]`. */
export function formatIssues(issues: ValidationIssue[]): string {
  if (api.formatValidationIssues) return api.formatValidationIssues(issues);
  const texts = issues.map((i) => i.message);
  return texts.length === 1 ? texts[0] ?? "" : `[${texts.join(", ")}]`;
}
