/**
 * The files of configMap, secret and projected volumes (upstream `MakePayload` of the
 * configmap and secret plugins and the projected plugin's `collectData`), as a pure function
 * of the volume's sources and the objects read for them: `path → {data, mode}`. The
 * `kube-api-access-*` volume the ServiceAccount admission plugin adds is a projected volume
 * of a token, the `kube-root-ca.crt` ConfigMap and the namespace; nothing special.
 *
 * {@linkcode collectVolumePayload} reads what a volume needs (objects through the
 * {@linkcode ObjectGetter}, tokens through the {@linkcode TokenSource}) and builds the payload;
 * the volume manager writes it with its atomic writer.
 * @module
 */
import {
  ApiNotFoundError,
  type ConfigMap,
  type ObjectKind,
  type Pod,
  type Secret,
} from "../api/mod.ts";
import type { ObjectGetter } from "./object_manager.ts";
import type { TokenSource } from "./token_manager.ts";
import { errorMessage } from "../util/error_message.ts";

/** core/v1 KeyToPath. */
export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

/** A configMap or secret projection (`name` is `secretName` on a secret volume). */
export interface ObjectProjection {
  name?: string;
  items?: KeyToPath[];
  optional?: boolean;
}

/** core/v1 ServiceAccountTokenProjection. */
export interface ServiceAccountTokenProjection {
  audience?: string;
  expirationSeconds?: number;
  path: string;
}

/** core/v1 VolumeProjection. */
export interface VolumeProjection {
  configMap?: ObjectProjection;
  secret?: ObjectProjection;
  downwardAPI?: { items?: unknown[] };
  serviceAccountToken?: ServiceAccountTokenProjection;
  clusterTrustBundle?: unknown;
}

/** One file of a payload; `data` as text or bytes. */
export interface ProjectedFile {
  data: string | Uint8Array;
  mode: number;
}

/** A volume's files by relative path. */
export type Payload = Map<string, ProjectedFile>;

/** One object read for a volume: the object, or why it could not be read. */
export type ObjectLookup<T> = { object: T } | { error: Error };

/** What {@linkcode projectedPayload} reads, resolved beforehand. */
export interface ProjectionInputs {
  configMap(name: string): ObjectLookup<ConfigMap> | undefined;
  secret(name: string): ObjectLookup<Secret> | undefined;
  /** The token of `sources[index].serviceAccountToken`. */
  token(index: number): { token: string } | { error: Error } | undefined;
  /** The files of a downwardAPI source (the volume manager's downward API engine). */
  downwardAPI(items: unknown[], defaultMode: number): Payload;
}

/** Upstream default mode of configMap, secret and projected volume files (0644). */
export const DEFAULT_MODE = 0o644;

/** The token lifetime the API defaults `expirationSeconds` to. */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

/** Decodes a base64 `[]byte` value of a Secret or of `binaryData`. */
export function base64Bytes(b64: string): Uint8Array {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/** Wraps an object's data as upstream's `MakePayload`, for either kind. */
function objectPayload(
  kind: "configmaps" | "secrets",
  source: ObjectProjection,
  object: ConfigMap | Secret | undefined,
  defaultMode: number,
): Payload {
  const files = new Map<string, string | Uint8Array>();
  if (kind === "configmaps") {
    const cm = object as ConfigMap | undefined;
    for (const [k, v] of Object.entries(cm?.data ?? {})) files.set(k, v);
    for (const [k, v] of Object.entries(cm?.binaryData ?? {})) {
      if (!files.has(k)) files.set(k, base64Bytes(v));
    }
  } else {
    for (const [k, v] of Object.entries((object as Secret)?.data ?? {})) {
      files.set(k, base64Bytes(v));
    }
  }
  const payload: Payload = new Map();
  if (!source.items || source.items.length === 0) {
    for (const [k, data] of files) payload.set(k, { data, mode: defaultMode });
    return payload;
  }
  for (const item of source.items) {
    const data = files.get(item.key);
    if (data === undefined) {
      if (source.optional) continue;
      throw new Error(
        `${
          kind === "configmaps" ? "configmap" : "secret"
        } references non-existent ${
          kind === "configmaps" ? "config" : "secret"
        } key: ${item.key}`,
      );
    }
    payload.set(item.path, { data, mode: item.mode ?? defaultMode });
  }
  return payload;
}

/**
 * The object's payload, or the error that fails the mount: a missing object is an empty one
 * when optional.
 */
export function objectSourcePayload(
  kind: "configmaps" | "secrets",
  source: ObjectProjection,
  lookup: ObjectLookup<ConfigMap | Secret> | undefined,
  defaultMode: number,
): Payload {
  if (!lookup || "error" in lookup) {
    const error = lookup?.error ??
      new Error(
        `${kind === "configmaps" ? "configmap" : "secret"} "${
          source.name ?? ""
        }" not found`,
      );
    if (!(source.optional && error instanceof ApiNotFoundError)) throw error;
    return objectPayload(kind, source, undefined, defaultMode);
  }
  return objectPayload(kind, source, lookup.object, defaultMode);
}

/**
 * The projected volume's payload (pure). Sources are applied in order, a later path replacing
 * an earlier one; each failing source adds its error and is left out. Tokens get the default
 * mode (upstream writes them 0600 under `fsGroup`); the whole volume is then handed to
 * `fsGroup` after writing (src/pod/containers/object_volumes.ts).
 */
export function projectedPayload(
  sources: readonly VolumeProjection[],
  defaultMode: number,
  inputs: ProjectionInputs,
): { payload: Payload; errors: string[] } {
  const payload: Payload = new Map();
  const errors: string[] = [];
  const merge = (files: Payload) => {
    for (const [k, v] of files) payload.set(k, v);
  };
  sources.forEach((source, index) => {
    try {
      if (source.secret) {
        merge(objectSourcePayload(
          "secrets",
          source.secret,
          inputs.secret(source.secret.name ?? ""),
          defaultMode,
        ));
      } else if (source.configMap) {
        merge(objectSourcePayload(
          "configmaps",
          source.configMap,
          inputs.configMap(source.configMap.name ?? ""),
          defaultMode,
        ));
      } else if (source.downwardAPI) {
        merge(inputs.downwardAPI(source.downwardAPI.items ?? [], defaultMode));
      } else if (source.serviceAccountToken) {
        const got = inputs.token(index);
        if (!got) throw new Error("no token was requested for this source");
        if ("error" in got) throw got.error;
        payload.set(source.serviceAccountToken.path, {
          data: got.token,
          mode: defaultMode,
        });
      } else if (source.clusterTrustBundle) {
        throw new Error(
          "clusterTrustBundle projections are not supported by this kubelet",
        );
      }
    } catch (e) {
      errors.push(errorMessage(e));
    }
  });
  return { payload, errors };
}

/** The message of several errors, as Go's aggregate error prints them. */
export function aggregateMessage(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(", ")}]`;
}

/** The configMap, secret and projected parts of a core/v1 Volume. */
export interface ObjectVolumeSource {
  configMap?: ObjectProjection & { defaultMode?: number };
  secret?: Omit<ObjectProjection, "name"> & {
    secretName?: string;
    defaultMode?: number;
  };
  projected?: { sources?: VolumeProjection[]; defaultMode?: number };
}

async function lookup<T>(
  objects: ObjectGetter,
  kind: ObjectKind,
  ns: string,
  name: string,
  signal?: AbortSignal,
): Promise<ObjectLookup<T>> {
  try {
    return { object: await objects.get(kind, ns, name, signal) as T };
  } catch (e) {
    signal?.throwIfAborted();
    return { error: e instanceof Error ? e : new Error(String(e)) };
  }
}

/**
 * Reads what a configMap, secret or projected volume needs and builds its payload; the error
 * (upstream's text, several joined as Go's aggregate) fails the mount. Undefined: not one of
 * these kinds.
 */
export async function collectVolumePayload(
  deps: {
    objects: ObjectGetter;
    tokens: TokenSource;
    downwardAPI: ProjectionInputs["downwardAPI"];
  },
  pod: Pod,
  volume: ObjectVolumeSource,
  signal?: AbortSignal,
): Promise<{ payload: Payload } | { error: string } | undefined> {
  const ns = pod.metadata.namespace ?? "default";
  const wrap = (build: () => Payload) => {
    try {
      return { payload: build() };
    } catch (e) {
      return { error: errorMessage(e) };
    }
  };
  if (volume.configMap) {
    const source = volume.configMap;
    const got = await lookup<ConfigMap>(
      deps.objects,
      "configmaps",
      ns,
      source.name ?? "",
      signal,
    );
    return wrap(() =>
      objectSourcePayload(
        "configmaps",
        source,
        got,
        source.defaultMode ?? DEFAULT_MODE,
      )
    );
  }
  if (volume.secret) {
    const source = { ...volume.secret, name: volume.secret.secretName ?? "" };
    const got = await lookup<Secret>(
      deps.objects,
      "secrets",
      ns,
      source.name,
      signal,
    );
    return wrap(() =>
      objectSourcePayload(
        "secrets",
        source,
        got,
        source.defaultMode ?? DEFAULT_MODE,
      )
    );
  }
  if (!volume.projected) return undefined;
  const sources = volume.projected.sources ?? [];
  const configMaps = new Map<string, ObjectLookup<ConfigMap>>();
  const secrets = new Map<string, ObjectLookup<Secret>>();
  const tokens = new Map<number, { token: string } | { error: Error }>();
  await Promise.all(sources.map(async (source, index) => {
    if (source.configMap) {
      const name = source.configMap.name ?? "";
      configMaps.set(
        name,
        await lookup(deps.objects, "configmaps", ns, name, signal),
      );
    } else if (source.secret) {
      const name = source.secret.name ?? "";
      secrets.set(
        name,
        await lookup(deps.objects, "secrets", ns, name, signal),
      );
    } else if (source.serviceAccountToken) {
      const t = source.serviceAccountToken;
      try {
        const tr = await deps.tokens.getServiceAccountToken(
          ns,
          pod.spec.serviceAccountName || "default",
          {
            spec: {
              ...(t.audience ? { audiences: [t.audience] } : {}),
              expirationSeconds: t.expirationSeconds ??
                DEFAULT_TOKEN_EXPIRATION_SECONDS,
              boundObjectRef: {
                apiVersion: "v1",
                kind: "Pod",
                name: pod.metadata.name ?? "",
                uid: pod.metadata.uid ?? "",
              },
            },
          },
          signal,
        );
        tokens.set(index, { token: tr.status?.token ?? "" });
      } catch (e) {
        signal?.throwIfAborted();
        tokens.set(index, {
          error: e instanceof Error ? e : new Error(String(e)),
        });
      }
    }
  }));
  const { payload, errors } = projectedPayload(
    sources,
    volume.projected.defaultMode ?? DEFAULT_MODE,
    {
      configMap: (name) => configMaps.get(name),
      secret: (name) => secrets.get(name),
      token: (index) => tokens.get(index),
      downwardAPI: deps.downwardAPI,
    },
  );
  return errors.length > 0 ? { error: aggregateMessage(errors) } : { payload };
}
