/**
 * Upstream's `field.ErrorList` for the static pod validation: each error's type, path, detail and
 * the text `Error()` prints, plus the small readers the validation modules share over a decoded
 * (JSON-shaped) pod.
 *
 * @module
 */

import { DecodedQuantity } from "./go_quantity.ts";
import {
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  labelValueErrors,
  qualifiedNameErrors,
} from "../util/k8s_names.ts";

/** A decoded object. */
export type Json = Record<string, unknown>;

/** One upstream `field.Error`: type (`Required value`, `Invalid value`…), path and detail. */
export interface FieldError {
  type: string;
  field: string;
  detail: string;
  /** Upstream's `Error()` text. */
  message: string;
}

/** The value when it is an object (a quantity is a scalar here). */
export const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) &&
    !(v instanceof DecodedQuantity)
    ? v as Json
    : undefined;
/** The objects of a list (absent → empty). */
export const list = (v: unknown): Json[] =>
  Array.isArray(v) ? v.map((x) => obj(x) ?? {}) : [];
/** The strings of a list (absent → empty). */
export const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.map((x) => typeof x === "string" ? x : "") : [];
/** The string, or "" as Go's zero value. */
export const str = (v: unknown): string => typeof v === "string" ? v : "";
/** The number, or 0 as Go's zero value. */
export const num = (v: unknown): number => typeof v === "number" ? v : 0;
/** Whether a pointer field is set. */
export const set = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * The bad value as `ErrorBody` prints it: numbers and booleans bare, strings quoted, anything else
 * as JSON (`json.Marshal`; internal structs marshal with their Go field names, which this
 * JSON-shaped pod cannot reproduce, so such texts may differ).
 */
function badValueText(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  if (value === undefined) return "null";
  return JSON.stringify(value);
}

/** An error list being built, in upstream's order. */
export class Errors {
  readonly list: FieldError[] = [];
  private add(
    type: string,
    field: string,
    body: string,
    detail: string,
  ): void {
    const message = `${field}: ${body}${detail ? `: ${detail}` : ""}`;
    this.list.push({ type, field, detail, message });
  }
  required(field: string, detail = ""): void {
    this.add("FieldValueRequired", field, "Required value", detail);
  }
  forbidden(field: string, detail: string): void {
    this.add("FieldValueForbidden", field, "Forbidden", detail);
  }
  invalid(field: string, value: unknown, detail: string): void {
    this.add(
      "FieldValueInvalid",
      field,
      `Invalid value: ${badValueText(value)}`,
      detail,
    );
  }
  duplicate(field: string, value: unknown): void {
    this.add(
      "FieldValueDuplicate",
      field,
      `Duplicate value: ${badValueText(value)}`,
      "",
    );
  }
  notFound(field: string, value: unknown, detail = ""): void {
    this.add(
      "FieldValueNotFound",
      field,
      `Not found: ${badValueText(value)}`,
      detail,
    );
  }
  notSupported(field: string, value: unknown, valid: string[]): void {
    this.add(
      "FieldValueNotSupported",
      field,
      `Unsupported value: ${badValueText(value)}`,
      valid.length
        ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(", ")}`
        : "",
    );
  }
  tooLong(field: string, max: number): void {
    this.add(
      "FieldValueTooLong",
      field,
      "Too long",
      `may not be more than ${max} bytes`,
    );
  }
}

/** Upstream `ValidateDNS1123Label`. */
export function dnsLabel(errs: Errors, field: string, value: string): void {
  for (const m of dns1123LabelErrors(value)) errs.invalid(field, value, m);
}

/** Upstream `ValidateDNS1123Subdomain` (and `NameIsDNSSubdomain`). */
export function dnsSubdomain(errs: Errors, field: string, value: string): void {
  for (const m of dns1123SubdomainErrors(value)) errs.invalid(field, value, m);
}

/** Upstream `ValidateLabelName` / `ValidateQualifiedName`. */
export function labelName(errs: Errors, field: string, value: string): void {
  for (const m of qualifiedNameErrors(value)) errs.invalid(field, value, m);
}

/** Upstream `ValidateLabels`. */
export function validateLabels(
  map: unknown,
  field: string,
  errs: Errors,
): void {
  for (const [k, v] of Object.entries(obj(map) ?? {})) {
    labelName(errs, field, k);
    for (const m of labelValueErrors(str(v))) errs.invalid(field, v, m);
  }
}
