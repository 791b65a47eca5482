/**
 * Small re-implementations of Go helpers the validation messages depend
 * on: `%v` of durations, `filepath.Clean`, `cpuset.Parse`, qualified-name
 * and label-value checks, `url.Parse` scheme handling, image patterns.
 * @module
 */
import { clean } from "../util/posix_path.ts";
import { formatGoDuration, parseGoDuration } from "../util/go_duration.ts";

/** Milliseconds of a duration string; absent counts as 0. */
export function ms(value: string | undefined): number {
  return value === undefined ? 0 : parseGoDuration(value);
}

/** Go `%v` of a `metav1.Duration`: `{200ms}`. */
export function metaDuration(value: string | undefined): string {
  return `{${formatGoDuration(ms(value))}}`;
}

/** Go `%v` of a `time.Duration`: `1ns`, `-1ns`, `2m0s`. */
export function goDuration(value: string | undefined): string {
  return formatGoDuration(ms(value));
}

/** Go `%q` for the strings these messages quote. */
export function q(value: string): string {
  return JSON.stringify(value);
}

/** Go `filepath.Clean` on Unix. */
export function cleanPath(path: string): string {
  return clean(path);
}

/** `cpuset.Parse`: returns an error text, or undefined when valid. */
export function cpusetProblem(text: string): string | undefined {
  if (text === "") return undefined;
  for (const part of text.split(",")) {
    const bounds = part.split("-");
    if (bounds.length > 2) return `invalid range "${part}"`;
    for (const bound of bounds) {
      if (!/^\d+$/.test(bound)) {
        return `strconv.Atoi: parsing ${q(bound)}: invalid syntax`;
      }
    }
    if (bounds.length === 2 && Number(bounds[0]) > Number(bounds[1])) {
      return `invalid range "${part}" (${bounds[0]} > ${bounds[1]})`;
    }
  }
  return undefined;
}

const NAME_REGEXP = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN_REGEXP =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** apimachinery `IsQualifiedName`. */
export function isQualifiedName(value: string): boolean {
  const parts = value.split("/");
  let name = parts[0] ?? "";
  if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (
      prefix === "" || prefix.length > 253 ||
      !DNS1123_SUBDOMAIN_REGEXP.test(prefix)
    ) return false;
  } else if (parts.length > 2) return false;
  return name !== "" && name.length <= 63 && NAME_REGEXP.test(name);
}

/** apimachinery `IsValidLabelValue`. */
export function isValidLabelValue(value: string): boolean {
  return value === "" || (value.length <= 63 && NAME_REGEXP.test(value));
}

/**
 * The part of Go's `url.Parse` that matters for tracing endpoints.
 * Returns the scheme, or throws Error with Go's text.
 */
export function goUrlScheme(raw: string): string {
  let scheme = "";
  let rest = raw;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) break;
      continue;
    }
    if (c === ":") {
      if (i === 0) throw new Error(`parse ${q(raw)}: missing protocol scheme`);
      scheme = raw.slice(0, i);
      rest = raw.slice(i + 1);
    }
    break;
  }
  if (scheme === "" && !rest.startsWith("/")) {
    const segment = rest.split("/")[0] ?? "";
    if (segment.includes(":")) {
      throw new Error(
        `parse ${q(raw)}: first path segment in URL cannot contain colon`,
      );
    }
  }
  const badEscape = /%(?![0-9A-Fa-f]{2})(.{0,2})/.exec(rest);
  if (badEscape) {
    throw new Error(
      `parse ${q(raw)}: invalid URL escape ${q("%" + (badEscape[1] ?? ""))}`,
    );
  }
  return scheme.toLowerCase();
}

const HOST_REGEXP = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d+)?$/;
const PATH_REGEXP =
  /^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

/**
 * `preloadedImagesVerificationAllowlist` pattern check; returns the
 * problem text, or undefined when the pattern is valid.
 */
export function imagePatternProblem(pattern: string): string | undefined {
  if (pattern.trim() !== pattern) {
    return `leading/trailing spaces are not allowed: ${pattern}`;
  }
  if (pattern.length < 3) {
    return `the supplied pattern is too short: ${pattern}`;
  }
  let image = pattern;
  if (pattern.includes("*")) {
    if (!pattern.endsWith("/*") || pattern.slice(0, -2).includes("*")) {
      return `not a valid wildcard pattern, only patterns ending with '/*' are allowed: ${pattern}`;
    }
    image = pattern.slice(0, -2);
  }
  const slash = image.indexOf("/");
  const host = slash < 0 ? image : image.slice(0, slash);
  const path = slash < 0 ? "" : image.slice(slash + 1);
  if (image.includes("@") || path.includes(":")) {
    return `neither tag nor digest is accepted in an image reference: ${pattern}`;
  }
  if (!/[.:]/.test(host) && host !== "localhost") {
    return "at least registry hostname is required";
  }
  if (!HOST_REGEXP.test(host) || (path !== "" && !PATH_REGEXP.test(path))) {
    return "failed to parse as an image name: invalid reference format";
  }
  return undefined;
}
