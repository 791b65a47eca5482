/**
 * A feature-gate set with component-base `SetFromMap` semantics.
 * @module
 */
import { type FeatureSpec, KNOWN_FEATURES } from "./known_gates.ts";

const ALL_ALPHA = "AllAlpha";
const ALL_BETA = "AllBeta";

/** Thrown by `setFromMap` with upstream's texts (aggregated like Go). */
export class FeatureGateError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[], options?: ErrorOptions) {
    super(
      problems.length === 1 ? problems[0] : `[${problems.join(", ")}]`,
      options,
    );
    this.name = "FeatureGateError";
    this.problems = problems;
  }
}

/** The kubelet's mutable feature-gate set. */
export class FeatureGates {
  #known: Readonly<Record<string, FeatureSpec>>;
  #enabled: Map<string, boolean>;

  constructor(
    known: Readonly<Record<string, FeatureSpec>> = KNOWN_FEATURES,
    enabled: Map<string, boolean> = new Map(),
  ) {
    this.#known = known;
    this.#enabled = new Map(enabled);
  }

  /**
   * Applies `name → value` settings. Throws FeatureGateError for an unknown
   * gate (first one only, like upstream) or for locked gates; nothing is
   * changed on error. Returns the warnings for GA and deprecated gates.
   */
  setFromMap(settings: Record<string, boolean>): string[] {
    const next = new Map(this.#enabled);
    const problems: string[] = [];
    const warnings: string[] = [];
    const names = Object.keys(settings).sort();
    for (const name of names) {
      const value = settings[name] === true;
      if (name === ALL_ALPHA || name === ALL_BETA) {
        const stage = name === ALL_ALPHA ? "ALPHA" : "BETA";
        for (const [gate, spec] of Object.entries(this.#known)) {
          if (spec.stage === stage && !spec.lockToDefault) {
            next.set(gate, value);
          }
        }
        continue;
      }
      const spec = this.#known[name];
      if (spec === undefined) {
        throw new FeatureGateError([`unrecognized feature gate: ${name}`]);
      }
      if (spec.lockToDefault && value !== spec.default) {
        problems.push(
          `cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`,
        );
        continue;
      }
      next.set(name, value);
      if (spec.stage === "GA") {
        warnings.push(
          `Setting GA feature gate ${name}=${value}. It will be removed in a future release.`,
        );
      } else if (spec.stage === "DEPRECATED") {
        warnings.push(
          `Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`,
        );
      }
    }
    if (problems.length > 0) throw new FeatureGateError(problems);
    this.#enabled = next;
    return warnings;
  }

  /** Whether a gate is on. Throws RangeError for a gate that is not registered. */
  enabled(name: string): boolean {
    const spec = this.#known[name];
    if (spec === undefined) {
      throw new RangeError(
        `feature "${name}" is not registered in FeatureGate`,
      );
    }
    return this.#enabled.get(name) ?? spec.default;
  }

  /** Whether a gate name is registered. */
  has(name: string): boolean {
    return name in this.#known;
  }

  /** Help-text lines for `--feature-gates`, sorted like upstream. */
  knownFeatures(): string[] {
    const lines = [
      `${ALL_ALPHA}=true|false (ALPHA - default=false)`,
      `${ALL_BETA}=true|false (BETA - default=false)`,
    ];
    for (const [name, spec] of Object.entries(this.#known)) {
      if (spec.stage === "GA" || spec.stage === "DEPRECATED") continue;
      lines.push(
        `${name}=true|false (${spec.stage} - default=${spec.default})`,
      );
    }
    return lines.sort();
  }

  /** The explicitly set gates (name → value). */
  overrides(): Record<string, boolean> {
    return Object.fromEntries(this.#enabled);
  }

  /** An independent copy (upstream `DeepCopy`). */
  clone(): FeatureGates {
    return new FeatureGates(this.#known, this.#enabled);
  }
}

/** A gate set with the v1.34 defaults and nothing overridden. */
export function createFeatureGates(): FeatureGates {
  return new FeatureGates();
}
