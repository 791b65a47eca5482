/**
 * Registry credentials from a pod's `imagePullSecrets` (upstream `credentialprovider`):
 * `kubernetes.io/dockerconfigjson` and `kubernetes.io/dockercfg` Secrets become a keyring
 * indexed by registry key (host, optional port and path; `*` and `?` globs per host label),
 * looked up by the image's normalized repository. Every matching credential is returned, most
 * specific key first, for the puller to try in turn; Docker Hub images fall back to the
 * `index.docker.io` entry.
 * @module
 */
import type { Secret } from "../../api/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { ObjectGetter } from "../../objects/mod.ts";
import { imageRepository } from "../../util/image_reference.ts";
import { decodeSecretValue } from "../env/env_objects.ts";
import type { Pod } from "../types.ts";

/** One credential, as CRI `AuthConfig` carries it. */
export interface RegistryCredential {
  username: string;
  password: string;
}

/** Registry key → credentials, keys sorted so the most specific match comes first. */
export interface Keyring {
  keys: string[];
  credentials: Map<string, RegistryCredential[]>;
}

const DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson";
const DOCKERCFG = "kubernetes.io/dockercfg";
const DEFAULT_REGISTRY_KEY = "index.docker.io";

/** One entry of a docker config (`auths` of config.json, or a .dockercfg): registry → login. */
export interface DockerConfigEntry {
  username?: string;
  password?: string;
  auth?: string;
}

/** A docker config: registry key → entry. */
export type DockerConfig = Record<string, DockerConfigEntry>;

function entryCredential(entry: DockerConfigEntry): RegistryCredential {
  if (entry.auth) {
    const decoded = decodeSecretValue(entry.auth);
    const colon = decoded.indexOf(":");
    if (colon < 0) {
      throw new Error(
        "unable to parse auth field, must be formatted as base64(username:password)",
      );
    }
    return {
      username: decoded.slice(0, colon),
      password: decoded.slice(colon + 1),
    };
  }
  return { username: entry.username ?? "", password: entry.password ?? "" };
}

/** The registry key of a config entry: scheme dropped, `/v1/` or `/v2/` meaning the host. */
function registryKey(location: string): string {
  const rest = location.replace(/^https?:\/\//, "");
  const slash = rest.indexOf("/");
  const host = slash < 0 ? rest : rest.slice(0, slash);
  let path = slash < 0 ? "" : rest.slice(slash);
  if (path.startsWith("/v1/") || path.startsWith("/v2/")) path = path.slice(3);
  return path && path !== "/" ? host + path : host;
}

/** The docker config of a pull secret, or undefined when it is not one. */
function dockerConfigOf(secret: Secret): DockerConfig | undefined {
  const name = `${secret.metadata.namespace}/${secret.metadata.name}`;
  const read = (key: string) => {
    const raw = secret.data?.[key];
    if (!raw) return undefined;
    try {
      return JSON.parse(decodeSecretValue(raw));
    } catch (e) {
      throw new Error(
        `pull secret ${name}: ${key} is not JSON (${(e as Error).message})`,
      );
    }
  };
  if (secret.type === DOCKER_CONFIG_JSON) {
    return (read(".dockerconfigjson") as { auths?: DockerConfig } | undefined)
      ?.auths;
  }
  if (secret.type === DOCKERCFG) return read(".dockercfg");
  return undefined;
}

/**
 * Builds the keyring of `secrets` (other Secret types are ignored).
 * @throws when a pull secret's config is not JSON, as upstream fails the pull.
 */
export function makeKeyring(secrets: readonly Secret[]): Keyring {
  return keyringOf(secrets.map((secret) => dockerConfigOf(secret) ?? {}));
}

/**
 * The keyring of docker configs, in order (upstream `BasicDockerKeyring.Add`).
 * @throws when an entry's `auth` is not `base64(username:password)`.
 */
export function keyringOf(configs: readonly DockerConfig[]): Keyring {
  const credentials = new Map<string, RegistryCredential[]>();
  for (const config of configs) {
    for (const [location, entry] of Object.entries(config)) {
      const key = registryKey(location);
      credentials.set(key, [
        ...(credentials.get(key) ?? []),
        entryCredential(entry),
      ]);
    }
  }
  const keys = [...credentials.keys()].sort().reverse();
  return { keys, credentials };
}

function splitLocation(
  s: string,
): { host: string; port: string; path: string } {
  const rest = s.replace(/^https?:\/\//, "");
  const slash = rest.indexOf("/");
  const hostPort = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash);
  const colon = hostPort.lastIndexOf(":");
  return colon < 0
    ? { host: hostPort, port: "", path }
    : { host: hostPort.slice(0, colon), port: hostPort.slice(colon + 1), path };
}

function globLabel(glob: string, label: string): boolean {
  const pattern = glob.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${pattern}$`).test(label);
}

/** Whether registry key `glob` covers `target` (same port, label-wise host globs, path prefix). */
export function registryMatches(glob: string, target: string): boolean {
  const g = splitLocation(glob);
  const t = splitLocation(target);
  if (g.port !== t.port) return false;
  const gl = g.host.split(".");
  const tl = t.host.split(".");
  if (gl.length !== tl.length) return false;
  if (!gl.every((label, i) => globLabel(label, tl[i]!))) return false;
  return t.path.startsWith(g.path);
}

function isDefaultRegistry(repository: string): boolean {
  const first = repository.split("/", 1)[0]!;
  if (!repository.includes("/")) return true;
  return first === "docker.io" || !/[.:]/.test(first);
}

/** The credentials to try for `image`, in order; empty: pull anonymously. */
export function lookupCredentials(
  keyring: Keyring,
  image: string,
): RegistryCredential[] {
  const repository = imageRepository(image);
  const found = keyring.keys.filter((k) => registryMatches(k, repository))
    .flatMap((k) => keyring.credentials.get(k)!);
  if (found.length > 0) return found;
  return isDefaultRegistry(repository)
    ? keyring.credentials.get(DEFAULT_REGISTRY_KEY) ?? []
    : [];
}

/**
 * Reads the pod's `imagePullSecrets` (upstream `getPullSecretsForPod`): an unreadable Secret is
 * logged and left out, the pull then goes ahead without it.
 */
export async function pullSecretsFor(
  deps: { objects: ObjectGetter; logger: Logger },
  pod: Pod,
  signal?: AbortSignal,
): Promise<Secret[]> {
  const ns = pod.metadata.namespace ?? "default";
  const out: Secret[] = [];
  for (const ref of pod.spec.imagePullSecrets ?? []) {
    if (!ref.name) continue;
    try {
      out.push(
        await deps.objects.get("secrets", ns, ref.name, signal) as Secret,
      );
    } catch (e) {
      signal?.throwIfAborted();
      deps.logger.info(
        "Unable to retrieve pull secret, the image pull may not succeed.",
        {
          pod: `${ns}/${pod.metadata.name}`,
          secret: `${ns}/${ref.name}`,
          err: String(e),
        },
      );
    }
  }
  return out;
}
