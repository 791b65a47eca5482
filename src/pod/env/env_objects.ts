/**
 * Env values from ConfigMaps and Secrets (upstream `makeEnvironmentVariables`):
 * `valueFrom.configMapKeyRef`/`secretKeyRef` and `envFrom` with its prefix, over objects
 * fetched for the container before its config is built ({@linkcode fetchEnvObjects}).
 *
 * Upstream v1.34 passes every `envFrom` key through (relaxed env var name validation is on by
 * default, so the old `InvalidEnvironmentVariableNames` skipping is gone); so does this.
 * Without an API server upstream fails every such reference, optional or not, with
 * `couldn't get configMap <ns>/<name>, no kubeClient defined`; so does this.
 * @module
 */
import { ApiNotFoundError } from "../../api/mod.ts";
import type { ConfigMap, ObjectKind, Secret } from "../../api/mod.ts";
import {
  base64Bytes,
  containerReferences,
  type ObjectGetter,
  type ObjectLookup,
} from "../../objects/mod.ts";
import type { Container, EnvVarSource, Pod } from "../types.ts";

/** The container's ConfigMaps and Secrets, by name, in the pod's namespace. */
export interface EnvObjects {
  configMap(name: string): ObjectLookup<ConfigMap> | undefined;
  secret(name: string): ObjectLookup<Secret> | undefined;
}

/** What an env reference resolved to: a value, nothing (optional and missing) or an error. */
export type EnvValue = { value: string } | { skip: true } | { error: string };

/** Reads every object `container`'s env references (errors kept per object). */
export async function fetchEnvObjects(
  getter: ObjectGetter,
  pod: Pod,
  container: Container,
  signal?: AbortSignal,
): Promise<EnvObjects> {
  const ns = pod.metadata.namespace ?? "default";
  const refs = containerReferences(container);
  const read = async <T>(kind: ObjectKind, names: Set<string>) => {
    const out = new Map<string, ObjectLookup<T>>();
    await Promise.all([...names].map(async (name) => {
      try {
        out.set(name, {
          object: await getter.get(kind, ns, name, signal) as T,
        });
      } catch (e) {
        signal?.throwIfAborted();
        out.set(name, { error: e instanceof Error ? e : new Error(String(e)) });
      }
    }));
    return out;
  };
  const [configMaps, secrets] = await Promise.all([
    read<ConfigMap>("configmaps", refs.configmaps),
    read<Secret>("secrets", refs.secrets),
  ]);
  return {
    configMap: (name) => configMaps.get(name),
    secret: (name) => secrets.get(name),
  };
}

const textDecoder = new TextDecoder();

/** Decodes a Secret's base64 `[]byte` value. */
export function decodeSecretValue(b64: string): string {
  return textDecoder.decode(base64Bytes(b64));
}

interface Source {
  kind: "ConfigMap" | "Secret";
  label: "configMap" | "secret";
  lookup: ObjectLookup<ConfigMap | Secret> | undefined;
  data: (o: ConfigMap | Secret) => Record<string, string>;
}

function sourceOf(
  kind: "ConfigMap" | "Secret",
  name: string,
  objects: EnvObjects | undefined,
): Source {
  if (kind === "ConfigMap") {
    return {
      kind,
      label: "configMap",
      lookup: objects?.configMap(name),
      data: (o) => (o as ConfigMap).data ?? {},
    };
  }
  return {
    kind,
    label: "secret",
    lookup: objects?.secret(name),
    data: (o) =>
      Object.fromEntries(
        Object.entries((o as Secret).data ?? {}).map((
          [k, v],
        ) => [k, decodeSecretValue(v)]),
      ),
  };
}

/** The object's data, or what to do instead (skip when optional and missing, or fail). */
function readSource(
  pod: Pod,
  source: Source,
  name: string,
  optional: boolean,
  objects: EnvObjects | undefined,
): { data: Record<string, string> } | { skip: true } | { error: string } {
  const ns = pod.metadata.namespace ?? "default";
  if (!objects) {
    return {
      error:
        `couldn't get ${source.label} ${ns}/${name}, no kubeClient defined`,
    };
  }
  const lookup = source.lookup;
  if (!lookup) return { error: `${source.label} "${name}" not found` };
  if ("error" in lookup) {
    if (optional && lookup.error instanceof ApiNotFoundError) {
      return { skip: true };
    }
    return { error: lookup.error.message };
  }
  return { data: source.data(lookup.object) };
}

/** Resolves a `configMapKeyRef` or `secretKeyRef` (undefined for other sources). */
export function keyRefValue(
  pod: Pod,
  from: EnvVarSource,
  objects: EnvObjects | undefined,
): EnvValue | undefined {
  const ref = from.configMapKeyRef ?? from.secretKeyRef;
  if (!ref) return undefined;
  const kind = from.configMapKeyRef ? "ConfigMap" : "Secret";
  const name = ref.name ?? "";
  const optional = ref.optional === true;
  const read = readSource(
    pod,
    sourceOf(kind, name, objects),
    name,
    optional,
    objects,
  );
  if (!("data" in read)) return read;
  const value = read.data[ref.key];
  if (value !== undefined) return { value };
  if (optional) return { skip: true };
  return {
    error: `couldn't find key ${ref.key} in ${kind} ${
      pod.metadata.namespace ?? "default"
    }/${name}`,
  };
}

/**
 * The variables of `container.envFrom` in order (later sources replace earlier keys), or the
 * first error.
 */
export function envFromVariables(
  pod: Pod,
  container: Container,
  objects: EnvObjects | undefined,
): { vars: Map<string, string> } | { error: string; index: number } {
  const vars = new Map<string, string>();
  const list = container.envFrom ?? [];
  for (let index = 0; index < list.length; index++) {
    const from = list[index]!;
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const kind = from.configMapRef ? "ConfigMap" : "Secret";
    const name = ref.name ?? "";
    const read = readSource(
      pod,
      sourceOf(kind, name, objects),
      name,
      ref.optional === true,
      objects,
    );
    if ("skip" in read) continue;
    if ("error" in read) return { error: read.error, index };
    for (const [k, v] of Object.entries(read.data)) {
      vars.set(`${from.prefix ?? ""}${k}`, v);
    }
  }
  return { vars };
}
