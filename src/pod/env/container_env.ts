/**
 * Container environment: `$(VAR)` expansion (kubelet's forked `expansion` package semantics) and
 * env var resolution with `valueFrom.fieldRef`, `resourceFieldRef`, ConfigMap and Secret references and `envFrom`
 * (those in `env_objects.ts`).
 *
 * @module
 */

import {
  downwardApiPayload,
  type NodeAllocatable,
  podMetadataField,
} from "../../volume/mod.ts";
import type {
  Container,
  EnvVar,
  Pod,
  ResourceFieldSelector,
} from "../types.ts";
import {
  envFromVariables,
  type EnvObjects,
  keyRefValue,
} from "./env_objects.ts";

/** A container spec field cannot be turned into CRI config (reported as CreateContainerConfigError). */
export class ContainerConfigError extends Error {
  /** Field path in the pod spec, e.g. `spec.containers[0].env[2].valueFrom.fieldRef`. */
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`${field}: ${message}`, options);
    this.name = "ContainerConfigError";
    this.field = field;
  }
}

/**
 * Expands `$(NAME)` references in `input` from `vars`. Unknown references stay as written,
 * `$$` becomes `$`, and a `$` not followed by `(` or `$` is kept literally.
 */
export function expandVars(
  input: string,
  vars: Pick<ReadonlyMap<string, string>, "get">,
): string {
  let out = "";
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (ch !== "$" || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1]!;
    if (next === "$") {
      out += "$";
      i += 2;
    } else if (next === "(") {
      const close = input.indexOf(")", i + 2);
      if (close === -1) {
        // an unterminated reference is copied through as text
        out += "$(";
        i += 2;
      } else {
        const name = input.slice(i + 2, close);
        out += vars.get(name) ?? `$(${name})`;
        i = close + 1;
      }
    } else {
      out += "$" + next;
      i += 2;
    }
  }
  return out;
}

/** Values `fieldRef`s can see besides the pod object. */
export interface EnvContext {
  nodeName: string;
  /** Primary pod IP ("" when unknown). */
  podIP?: string;
  podIPs?: string[];
  hostIP?: string;
  hostIPs?: string[];
  /** The container's ConfigMaps and Secrets; absent: no API server (standalone). */
  objects?: EnvObjects;
  /** Node allocatable, standing in for limits a container does not set. */
  allocatable?: NodeAllocatable;
  /**
   * The pod's service variables (`service_env.ts`): `$(VAR)` may name them, and they are
   * added after the container's own, which win.
   */
  services?: ReadonlyMap<string, string>;
}

function resolveFieldRef(
  pod: Pod,
  fieldPath: string,
  ctx: EnvContext,
): string | undefined {
  const metadata = podMetadataField(pod, fieldPath);
  if (metadata !== undefined) return metadata;
  switch (fieldPath) {
    case "spec.nodeName":
      return pod.spec.nodeName ?? ctx.nodeName;
    case "spec.serviceAccountName":
      return pod.spec.serviceAccountName ?? "";
    case "status.hostIP":
      return ctx.hostIP ?? "";
    case "status.hostIPs":
      return (ctx.hostIPs ?? (ctx.hostIP ? [ctx.hostIP] : [])).join(",");
    case "status.podIP":
      return ctx.podIP ?? "";
    case "status.podIPs":
      return (ctx.podIPs ?? (ctx.podIP ? [ctx.podIP] : [])).join(",");
  }
  return undefined;
}

function containerField(pod: Pod, container: Container): string {
  const inits = pod.spec.initContainers ?? [];
  const initIndex = inits.indexOf(container);
  if (initIndex >= 0) return `spec.initContainers[${initIndex}]`;
  const index = pod.spec.containers.indexOf(container);
  return `spec.containers[${index >= 0 ? index : pod.spec.containers.length}]`;
}

/**
 * Upstream `containerResourceRuntimeValue`: the named container's (default: this one's) limit
 * or request divided by the divisor and rounded up, with node allocatable for an unset limit.
 * The downward API volume engine computes it.
 */
function resourceFieldValue(
  pod: Pod,
  container: Container,
  ref: ResourceFieldSelector,
  options: { field: string; allocatable: NodeAllocatable },
): string {
  try {
    const payload = downwardApiPayload(pod, {
      name: "env",
      items: [{
        path: "value",
        resourceFieldRef: {
          ...ref,
          containerName: ref.containerName || container.name,
        },
      }],
      defaultMode: 0o644,
    }, { node: options.allocatable });
    return payload.get("value")?.data ?? "";
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    const detail = error.message.replace(
      /^volume "env" items\[0\]\.resourceFieldRef\.?/,
      "",
    );
    throw new ContainerConfigError(options.field, detail, { cause: error });
  }
}

function resolveOne(
  pod: Pod,
  container: Container,
  envVar: EnvVar,
  field: string,
  ctx: EnvContext,
  defined: Pick<ReadonlyMap<string, string>, "get">,
): string | undefined {
  const from = envVar.valueFrom;
  if (!from) return expandVars(envVar.value ?? "", defined);
  if (from.fieldRef) {
    const value = resolveFieldRef(pod, from.fieldRef.fieldPath, ctx);
    if (value === undefined) {
      throw new ContainerConfigError(
        `${field}.valueFrom.fieldRef.fieldPath`,
        `unsupported field path "${from.fieldRef.fieldPath}"; use metadata.name, metadata.namespace, metadata.uid, metadata.labels['k'], metadata.annotations['k'], spec.nodeName, spec.serviceAccountName, status.hostIP(s) or status.podIP(s)`,
      );
    }
    return value;
  }
  const fromObject = keyRefValue(pod, from, ctx.objects);
  if (fromObject) {
    if ("value" in fromObject) return fromObject.value;
    if ("skip" in fromObject) return undefined;
    const kind = from.configMapKeyRef ? "configMapKeyRef" : "secretKeyRef";
    throw new ContainerConfigError(
      `${field}.valueFrom.${kind}`,
      fromObject.error,
    );
  }
  if (from.resourceFieldRef) {
    return resourceFieldValue(pod, container, from.resourceFieldRef, {
      field: `${field}.valueFrom.resourceFieldRef`,
      allocatable: ctx.allocatable ?? {},
    });
  }
  return expandVars(envVar.value ?? "", defined);
}

/**
 * Resolves the container's env list to CRI key/values: literal values may reference earlier
 * variables with `$(NAME)`, then service variables; later definitions of a name replace
 * earlier ones in place; service variables the container does not define come last.
 * @throws {ContainerConfigError} for unsupported or unresolvable references.
 */
export function makeEnvironment(
  pod: Pod,
  container: Container,
  ctx: EnvContext,
): { key: string; value: string }[] {
  const base = containerField(pod, container);
  // envFrom first; env entries replace its keys and may reference them
  const fromSources = envFromVariables(pod, container, ctx.objects);
  if ("error" in fromSources) {
    throw new ContainerConfigError(
      `${base}.envFrom[${fromSources.index}]`,
      fromSources.error,
    );
  }
  const defined = fromSources.vars;
  const services = ctx.services ?? new Map<string, string>();
  const visible = { get: (k: string) => defined.get(k) ?? services.get(k) };
  (container.env ?? []).forEach((envVar, i) => {
    const value = resolveOne(
      pod,
      container,
      envVar,
      `${base}.env[${i}]`,
      ctx,
      visible,
    );
    if (value !== undefined) defined.set(envVar.name, value);
  });
  const env = [...defined].map(([key, value]) => ({ key, value }));
  for (const [key, value] of services) {
    if (!defined.has(key)) env.push({ key, value });
  }
  return env;
}
