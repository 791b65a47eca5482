/**
 * The `--version` flag value (component-base verflag): `true`/`false`,
 * `raw`, or `vX.Y.Z…` to change the reported version (same major, minor and
 * patch as the build only).
 * @module
 */
import { goQuote, parseGoBool } from "../util/go_strconv.ts";
import type { FlagValue } from "./flag_set.ts";

/** What `--version` asked for. */
export type VersionRequest = "false" | "true" | "raw";

const VERSION_REGEXP = /^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$/;
const EXTRA_REGEXP =
  /^(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*$/;

/** apimachinery `ParseSemantic`: returns [major, minor, patch] or throws with its text. */
export function parseSemanticVersion(text: string): [number, number, number] {
  const match = VERSION_REGEXP.exec(text);
  if (!match) throw new Error(`could not parse ${goQuote(text)} as version`);
  const components = (match[1] ?? "").split(".");
  if (components.length !== 3) {
    throw new Error(`illegal version string ${goQuote(text)}`);
  }
  const numbers = components.map((c) => {
    if (c.startsWith("0") && c !== "0") {
      throw new Error(
        `illegal zero-prefixed version component ${goQuote(c)} in ${
          goQuote(text)
        }`,
      );
    }
    return Number(c);
  });
  const extra = match[2] ?? "";
  if (extra !== "" && !EXTRA_REGEXP.test(extra)) {
    throw new Error(
      `could not parse pre-release/metadata (${extra}) in version ${
        goQuote(text)
      }`,
    );
  }
  return numbers as [number, number, number];
}

/** Checks a `--version=vX.Y.Z` override against the build's version. */
export function validateDynamicVersion(dynamic: string, build: string): void {
  if (dynamic === "") throw new Error("version must not be empty");
  if (dynamic === build) return;
  const wanted = parseSemanticVersion(dynamic);
  const have = parseSemanticVersion(build);
  if (wanted.some((n, i) => n !== have[i])) {
    throw new Error(
      `version ${
        goQuote(dynamic)
      } must match major/minor/patch of default version ${goQuote(build)}`,
    );
  }
}

/** Options for {@linkcode createVersionValue}. */
export interface VersionValueOptions {
  /** The build's version (`v1.34.0+…`). */
  buildVersion: string;
  /** Receives the reported version after a valid `--version=v…`. */
  onDynamicVersion?: (version: string) => void;
  /** Receives the request (`true`, `false`, `raw`). */
  onRequest?: (request: VersionRequest) => void;
}

/** The `--version` value; `request()` tells what was asked for. */
export function createVersionValue(
  options: VersionValueOptions,
): FlagValue & { request(): VersionRequest } {
  let request: VersionRequest = "false";
  return {
    type: "version",
    zero: "custom",
    set(s) {
      if (s === "raw") {
        request = "raw";
      } else if (s.startsWith("v")) {
        validateDynamicVersion(s, options.buildVersion);
        options.onDynamicVersion?.(s);
        return;
      } else {
        request = parseGoBool(s) ? "true" : "false";
      }
      options.onRequest?.(request);
    },
    text: () => request === "raw" ? "raw" : request,
    request: () => request,
  };
}
