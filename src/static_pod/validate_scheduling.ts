/**
 * Upstream's checks of where a pod may run (`pkg/apis/core/validation` with the default
 * `PodValidationOptions`): node and pod (anti-)affinity with their label selectors and node
 * selector terms, topology spread constraints, readiness and scheduling gates. Texts and paths
 * are upstream's.
 *
 * @module
 */

import {
  dnsSubdomain,
  Errors,
  type Json,
  labelName,
  list,
  obj,
  set,
  str,
  strings,
  validateLabels,
} from "./field_errors.ts";
import { dns1123LabelErrors, labelValueErrors } from "../util/k8s_names.ts";

const IN_NOT_IN = "must be specified when `operator` is 'In' or 'NotIn'";
const EXISTS =
  "may not be specified when `operator` is 'Exists' or 'DoesNotExist'";

/** Upstream `ValidateLabelSelector` (metav1), invalid label values refused. */
function labelSelector(errs: Errors, selector: unknown, path: string): void {
  const s = obj(selector);
  if (!s) return;
  validateLabels(s.matchLabels, `${path}.matchLabels`, errs);
  list(s.matchExpressions).forEach((e, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = strings(e.values);
    const op = str(e.operator);
    if (op === "In" || op === "NotIn") {
      if (values.length === 0) errs.required(`${at}.values`, IN_NOT_IN);
    } else if (op === "Exists" || op === "DoesNotExist") {
      if (values.length > 0) errs.forbidden(`${at}.values`, EXISTS);
    } else {
      errs.invalid(`${at}.operator`, op, "not a valid selector operator");
    }
    labelName(errs, `${at}.key`, str(e.key));
    values.forEach((v, j) => {
      for (const m of labelValueErrors(v)) {
        errs.invalid(`${at}.values[${j}]`, v, m);
      }
    });
  });
}

/** Upstream `ValidateNodeSelectorRequirement`. */
function nodeSelectorRequirement(
  errs: Errors,
  rq: Json,
  checkValues: boolean,
  at: string,
): void {
  const values = strings(rq.values);
  const op = str(rq.operator);
  if (op === "In" || op === "NotIn") {
    if (values.length === 0) errs.required(`${at}.values`, IN_NOT_IN);
  } else if (op === "Exists" || op === "DoesNotExist") {
    if (values.length > 0) errs.forbidden(`${at}.values`, EXISTS);
  } else if (op === "Gt" || op === "Lt") {
    if (values.length !== 1) {
      errs.required(
        `${at}.values`,
        "must be specified single value when `operator` is 'Lt' or 'Gt'",
      );
    }
  } else errs.invalid(`${at}.operator`, op, "not a valid selector operator");
  labelName(errs, `${at}.key`, str(rq.key));
  if (!checkValues) return;
  values.forEach((v, j) => {
    for (const m of labelValueErrors(v)) {
      errs.invalid(`${at}.values[${j}]`, v, m);
    }
  });
}

/** Upstream `ValidateNodeFieldSelectorRequirement` (only `metadata.name`). */
function nodeFieldRequirement(errs: Errors, rq: Json, at: string): void {
  const values = strings(rq.values);
  const op = str(rq.operator);
  if (op === "In" || op === "NotIn") {
    if (values.length !== 1) {
      errs.required(
        `${at}.values`,
        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
      );
    }
  } else errs.invalid(`${at}.operator`, op, "not a valid selector operator");
  const key = str(rq.key);
  if (key !== "metadata.name") {
    errs.invalid(`${at}.key`, key, "not a valid field selector key");
    return;
  }
  values.forEach((v, j) => dnsSubdomain(errs, `${at}.values[${j}]`, v));
}

/** Upstream `ValidateNodeSelectorTerm`. */
function nodeSelectorTerm(
  errs: Errors,
  term: Json,
  checkValues: boolean,
  at: string,
): void {
  list(term.matchExpressions).forEach((rq, j) =>
    nodeSelectorRequirement(
      errs,
      rq,
      checkValues,
      `${at}.matchExpressions[${j}]`,
    )
  );
  list(term.matchFields).forEach((rq, j) =>
    nodeFieldRequirement(errs, rq, `${at}.matchFields[${j}]`)
  );
}

/** Upstream `validateNodeAffinity`. */
function nodeAffinity(errs: Errors, na: Json, path: string): void {
  const required = obj(na.requiredDuringSchedulingIgnoredDuringExecution);
  if (required) {
    const at =
      `${path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;
    const terms = list(required.nodeSelectorTerms);
    if (terms.length === 0) {
      errs.required(at, "must have at least one node selector term");
    }
    terms.forEach((t, i) => nodeSelectorTerm(errs, t, true, `${at}[${i}]`));
  }
  const at = `${path}.preferredDuringSchedulingIgnoredDuringExecution`;
  list(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
    const weight = typeof t.weight === "number" ? t.weight : 0;
    if (weight <= 0 || weight > 100) {
      errs.invalid(`${at}[${i}].weight`, weight, "must be in the range 1-100");
    }
    // preferred terms may carry any label value (upstream: they can still match one node)
    nodeSelectorTerm(
      errs,
      obj(t.preference) ?? {},
      false,
      `${at}[${i}].preference`,
    );
  });
}

/** Upstream `validateLabelKeys` for matchLabelKeys/mismatchLabelKeys. */
function labelKeys(
  errs: Errors,
  keys: string[],
  selector: Json | undefined,
  at: string,
): void {
  if (keys.length === 0) return;
  if (!selector) {
    errs.forbidden(at, "must not be specified when labelSelector is not set");
    return;
  }
  keys.forEach((k, i) => labelName(errs, `${at}[${i}]`, k));
}

/** Upstream `validatePodAffinityTerm`. */
function podAffinityTerm(errs: Errors, term: Json, at: string): void {
  const selector = obj(term.labelSelector);
  labelSelector(errs, term.labelSelector, `${at}.labelSelector`);
  labelSelector(errs, term.namespaceSelector, `${at}.namespaceSelector`);
  for (const ns of strings(term.namespaces)) {
    for (const m of dns1123LabelErrors(ns)) {
      errs.invalid(`${at}.namespace`, ns, m);
    }
  }
  const match = strings(term.matchLabelKeys);
  const mismatch = strings(term.mismatchLabelKeys);
  labelKeys(errs, match, selector, `${at}.matchLabelKeys`);
  labelKeys(errs, mismatch, selector, `${at}.mismatchLabelKeys`);
  if (selector) {
    const index = new Map(match.map((k, i) => [k, i]));
    const seen = new Set(Object.keys(obj(selector.matchLabels) ?? {}));
    for (const e of list(selector.matchExpressions)) {
      const key = str(e.key);
      const i = index.get(key);
      if (i !== undefined && seen.has(key)) {
        errs.invalid(
          `${at}[${i}]`,
          key,
          "exists in both matchLabelKeys and labelSelector",
        );
      }
      seen.add(key);
    }
  }
  const mismatched = new Set(mismatch);
  match.forEach((k, i) => {
    if (mismatched.has(k)) {
      errs.invalid(
        `${at}.matchLabelKeys[${i}]`,
        k,
        "exists in both matchLabelKeys and mismatchLabelKeys",
      );
    }
  });
  const topologyKey = str(term.topologyKey);
  if (!topologyKey) errs.required(`${at}.topologyKey`, "can not be empty");
  labelName(errs, `${at}.topologyKey`, topologyKey);
}

/** Upstream `validatePodAffinity` / `validatePodAntiAffinity`. */
function podAffinity(errs: Errors, pa: Json, path: string): void {
  const required = "requiredDuringSchedulingIgnoredDuringExecution";
  list(pa[required]).forEach((t, i) =>
    podAffinityTerm(errs, t, `${path}.${required}[${i}]`)
  );
  const preferred = "preferredDuringSchedulingIgnoredDuringExecution";
  list(pa[preferred]).forEach((t, i) => {
    const at = `${path}.${preferred}[${i}]`;
    const weight = typeof t.weight === "number" ? t.weight : 0;
    if (weight <= 0 || weight > 100) {
      errs.invalid(`${at}.weight`, weight, "must be in the range 1-100");
    }
    podAffinityTerm(
      errs,
      obj(t.podAffinityTerm) ?? {},
      `${at}.podAffinityTerm`,
    );
  });
}

/** Upstream `validateAffinity`. */
export function validateAffinity(spec: Json, errs: Errors): void {
  const affinity = obj(spec.affinity);
  if (!affinity) return;
  const node = obj(affinity.nodeAffinity);
  if (node) nodeAffinity(errs, node, "spec.affinity.nodeAffinity");
  const pod = obj(affinity.podAffinity);
  if (pod) podAffinity(errs, pod, "spec.affinity.podAffinity");
  const anti = obj(affinity.podAntiAffinity);
  if (anti) podAffinity(errs, anti, "spec.affinity.podAntiAffinity");
}

/** Upstream `validateReadinessGates`. */
export function validateReadinessGates(spec: Json, errs: Errors): void {
  list(spec.readinessGates).forEach((g, i) =>
    labelName(
      errs,
      `spec.readinessGates[${i}].conditionType`,
      str(g.conditionType),
    )
  );
}

/** Upstream `validateSchedulingGates`. */
export function validateSchedulingGates(spec: Json, errs: Errors): void {
  const seen = new Set<string>();
  list(spec.schedulingGates).forEach((g, i) => {
    const name = str(g.name);
    labelName(errs, `spec.schedulingGates[${i}]`, name);
    if (seen.has(name)) errs.duplicate(`spec.schedulingGates[${i}]`, name);
    seen.add(name);
  });
}

const WHEN_UNSATISFIABLE = ["DoNotSchedule", "ScheduleAnyway"];
const INCLUSION_POLICIES = ["Honor", "Ignore"];
const NOT_POSITIVE = "must be greater than zero";

/** Upstream `validateTopologySpreadConstraints` (default options). */
export function validateTopologySpread(spec: Json, errs: Errors): void {
  const constraints = list(spec.topologySpreadConstraints);
  constraints.forEach((c, i) => {
    const at = `spec.topologySpreadConstraints[${i}]`;
    const maxSkew = typeof c.maxSkew === "number" ? c.maxSkew : 0;
    if (maxSkew <= 0) errs.invalid(`${at}.maxSkew`, maxSkew, NOT_POSITIVE);
    const key = str(c.topologyKey);
    if (!key) errs.required(`${at}.topologyKey`, "can not be empty");
    const action = str(c.whenUnsatisfiable);
    if (!WHEN_UNSATISFIABLE.includes(action)) {
      errs.notSupported(`${at}.whenUnsatisfiable`, action, WHEN_UNSATISFIABLE);
    }
    const repeated = constraints.slice(i + 1).some((r) =>
      str(r.topologyKey) === key && str(r.whenUnsatisfiable) === action
    );
    if (repeated) {
      errs.duplicate(
        `${at}.{topologyKey, whenUnsatisfiable}`,
        `{${key}, ${action}}`,
      );
    }
    if (set(c.minDomains)) {
      const min = typeof c.minDomains === "number" ? c.minDomains : 0;
      if (min <= 0) errs.invalid(`${at}.minDomains`, min, NOT_POSITIVE);
      if (action !== "DoNotSchedule") {
        errs.invalid(
          `${at}.minDomains`,
          min,
          `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`,
        );
      }
    }
    for (const policy of ["nodeAffinityPolicy", "nodeTaintsPolicy"]) {
      if (!set(c[policy])) continue;
      const value = str(c[policy]);
      if (!INCLUSION_POLICIES.includes(value)) {
        errs.notSupported(`${at}.${policy}`, value, INCLUSION_POLICIES);
      }
    }
    const keys = strings(c.matchLabelKeys);
    const selector = obj(c.labelSelector);
    if (keys.length > 0) {
      const selectorKeys = new Set<string>();
      if (selector) {
        for (const k of Object.keys(obj(selector.matchLabels) ?? {})) {
          selectorKeys.add(k);
        }
        for (const e of list(selector.matchExpressions)) {
          selectorKeys.add(str(e.key));
        }
      } else {
        errs.forbidden(
          `${at}.matchLabelKeys`,
          "must not be specified when labelSelector is not set",
        );
      }
      keys.forEach((k, j) => {
        labelName(errs, `${at}.matchLabelKeys[${j}]`, k);
        if (selectorKeys.has(k)) {
          errs.invalid(
            `${at}.matchLabelKeys[${j}]`,
            k,
            "exists in both matchLabelKeys and labelSelector",
          );
        }
      });
    }
    labelSelector(errs, c.labelSelector, `${at}.labelSelector`);
  });
}
