/**
 * The document envelope (apiVersion/kind) and small helpers shared by the
 * fast and the full decode paths. Loads neither zod nor the yaml package.
 * @module
 */

/** The only accepted envelope. */
export const KUBELET_CONFIG_API_VERSION = "kubelet.config.k8s.io/v1beta1";
/** The only accepted kind. */
export const KUBELET_CONFIG_KIND = "KubeletConfiguration";

/** The result of parsing one config text. */
export interface ParsedText {
  /** The decoded top-level value. */
  value: unknown;
  /** Strict-mode problems (duplicate keys), already resolved leniently. */
  strictErrors: string[];
}

/** `a.b[0].c` from a path of keys and indexes. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** Renders a document as compact JSON for upstream-style messages. */
export function compactJson(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/**
 * Checks the envelope. Returns undefined when it is the v1beta1
 * KubeletConfiguration, else the problem text.
 */
export function envelopeProblem(
  value: Record<string, unknown>,
): string | undefined {
  const kind = value.kind;
  const apiVersion = value.apiVersion;
  if (typeof kind !== "string" || kind === "") {
    return `Object 'Kind' is missing in '${compactJson(value)}'`;
  }
  if (typeof apiVersion !== "string" || apiVersion === "") {
    return `Object 'apiVersion' is missing in '${compactJson(value)}'`;
  }
  if (
    apiVersion !== KUBELET_CONFIG_API_VERSION || kind !== KUBELET_CONFIG_KIND
  ) {
    return `no kind "${kind}" is registered for version "${apiVersion}"; use apiVersion: ${KUBELET_CONFIG_API_VERSION} and kind: ${KUBELET_CONFIG_KIND}`;
  }
  return undefined;
}

/** Whether a decoded value is a mapping (a JSON object). */
export function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
