/**
 * Image credential plugins (upstream `pkg/credentialprovider/plugin`): for an image repository
 * that one of a plugin's `matchImages` covers, the kubelet runs the plugin with a
 * `CredentialProviderRequest` on stdin and reads a `CredentialProviderResponse` from stdout,
 * whose `auth` map becomes registry logins for the pull. Answers are cached per image,
 * registry or globally as the plugin says, for the plugin's duration or the configured default;
 * concurrent requests for one image run the plugin once. A failing plugin is logged and the
 * pull goes on without its logins.
 * @module
 */
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { errorMessage } from "../../util/error_message.ts";
import { parseGoDuration } from "../../util/go_duration.ts";
import type { CredentialProvider } from "./credential_provider_config.ts";
import {
  type DockerConfig,
  type Keyring,
  keyringOf,
  registryMatches,
} from "./pull_credentials.ts";

/** Runs a plugin with `stdin`; resolves with its stdout, rejects with the reason it failed. */
export type RunCredentialPlugin = (
  provider: CredentialProvider,
  stdin: string,
  image: string,
) => Promise<string>;

const GLOBAL_CACHE_KEY = "<global>";
const PURGE_INTERVAL_MS = 15 * 60_000;

/** The request a plugin reads, encoded as upstream's JSON encoder writes it. */
export function credentialProviderRequest(
  apiVersion: string,
  image: string,
): string {
  return `${
    JSON.stringify({ kind: "CredentialProviderRequest", apiVersion, image })
  }\n`;
}

/** A plugin's answer, checked. */
export interface CredentialProviderResponse {
  cacheKeyType: string;
  /** Milliseconds; undefined: the provider's default. */
  cacheDuration?: number;
  auth: DockerConfig;
}

/**
 * Decodes a plugin's stdout. The response must carry the provider's own apiVersion and kind
 * `CredentialProviderResponse`, and nothing unknown.
 * @throws with upstream's texts; never with the response itself (it may hold passwords).
 */
export function parseCredentialProviderResponse(
  stdout: string,
  apiVersion: string,
): CredentialProviderResponse {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    throw new Error("error reading GVK from response: invalid JSON");
  }
  const map = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!map(value)) {
    throw new Error("error reading GVK from response: not a JSON object");
  }
  const actual = typeof value.apiVersion === "string" ? value.apiVersion : "";
  if (actual !== apiVersion) {
    throw new Error(
      `apiVersion from credential plugin response did not match expected apiVersion:${apiVersion}, actual apiVersion:${actual}`,
    );
  }
  const bad = new Error(
    "error decoding credential provider plugin response from stdout",
  );
  if (value.kind !== "CredentialProviderResponse") throw bad;
  const known = new Set([
    "kind",
    "apiVersion",
    "cacheKeyType",
    "cacheDuration",
    "auth",
  ]);
  if (Object.keys(value).some((k) => !known.has(k))) throw bad;
  if (typeof value.cacheKeyType !== "string") throw bad;
  let cacheDuration: number | undefined;
  if (value.cacheDuration != null) {
    if (typeof value.cacheDuration !== "string") throw bad;
    try {
      cacheDuration = parseGoDuration(value.cacheDuration);
    } catch {
      throw bad;
    }
  }
  const auth: DockerConfig = {};
  if (value.auth != null) {
    if (!map(value.auth)) throw bad;
    for (const [key, entry] of Object.entries(value.auth)) {
      if (!map(entry)) throw bad;
      if (
        Object.keys(entry).some((k) => k !== "username" && k !== "password")
      ) {
        throw bad;
      }
      const { username = "", password = "" } = entry;
      if (typeof username !== "string" || typeof password !== "string") {
        throw bad;
      }
      auth[key] = { username, password };
    }
  }
  return {
    cacheKeyType: value.cacheKeyType,
    ...(cacheDuration !== undefined ? { cacheDuration } : {}),
    auth,
  };
}

/** The registry of a repository: its first path segment (host and port). */
function registryOf(repository: string): string {
  return repository.split("/", 1)[0]!;
}

interface CacheEntry {
  config: DockerConfig;
  expiresAt: number;
}

/** One configured plugin with its cache. */
class PluginProvider {
  #cache = new Map<string, CacheEntry>();
  #inFlight = new Map<string, Promise<CredentialProviderResponse>>();
  #lastPurge: number;

  constructor(
    readonly provider: CredentialProvider,
    private readonly deps: {
      run: RunCredentialPlugin;
      clock: Clock;
      logger: Logger;
    },
  ) {
    this.#lastPurge = deps.clock.now();
  }

  #cached(repository: string): DockerConfig | undefined {
    const now = this.deps.clock.now();
    if (now > this.#lastPurge + PURGE_INTERVAL_MS) {
      for (const [key, entry] of this.#cache) {
        if (now > entry.expiresAt) this.#cache.delete(key);
      }
      this.#lastPurge = now;
    }
    for (const key of [repository, registryOf(repository), GLOBAL_CACHE_KEY]) {
      const entry = this.#cache.get(key);
      if (!entry) continue;
      if (now > entry.expiresAt) {
        this.#cache.delete(key);
        continue;
      }
      return entry.config;
    }
    return undefined;
  }

  async provide(repository: string): Promise<DockerConfig> {
    if (
      !this.provider.matchImages.some((m) => registryMatches(m, repository))
    ) {
      return {};
    }
    const cached = this.#cached(repository);
    if (cached) return cached;
    let response: CredentialProviderResponse;
    try {
      let pending = this.#inFlight.get(repository);
      if (!pending) {
        pending = this.#exec(repository).finally(() =>
          this.#inFlight.delete(repository)
        );
        this.#inFlight.set(repository, pending);
      }
      response = await pending;
    } catch (e) {
      this.deps.logger.error(
        "Failed getting credential from external registry credential provider",
        {
          provider: this.provider.name,
          image: repository,
          err: errorMessage(e),
        },
      );
      return {};
    }
    const cacheKey = response.cacheKeyType === "Image"
      ? repository
      : response.cacheKeyType === "Registry"
      ? registryOf(repository)
      : response.cacheKeyType === "Global"
      ? GLOBAL_CACHE_KEY
      : undefined;
    if (cacheKey === undefined) {
      this.deps.logger.error(
        "credential provider plugin did not return a valid cacheKeyType",
        { provider: this.provider.name, cacheKeyType: response.cacheKeyType },
      );
      return {};
    }
    const duration = response.cacheDuration ??
      this.provider.defaultCacheDuration;
    if (duration > 0) {
      this.#cache.set(cacheKey, {
        config: response.auth,
        expiresAt: this.deps.clock.now() + duration,
      });
    }
    return response.auth;
  }

  async #exec(repository: string): Promise<CredentialProviderResponse> {
    const { provider } = this;
    const stdout = await this.deps.run(
      provider,
      credentialProviderRequest(provider.apiVersion, repository),
      repository,
    );
    return parseCredentialProviderResponse(stdout, provider.apiVersion);
  }
}

/** The configured plugins, in config order (upstream's external credential provider keyring). */
export class CredentialPlugins {
  #providers: PluginProvider[];

  constructor(
    providers: readonly CredentialProvider[],
    deps: { run: RunCredentialPlugin; clock: Clock; logger: Logger },
  ) {
    this.#providers = providers.map((p) => new PluginProvider(p, deps));
  }

  /**
   * The keyring of every matching plugin's logins for `repository` (a normalized repository
   * without tag or digest, as upstream passes it).
   */
  async keyring(repository: string): Promise<Keyring> {
    const configs: DockerConfig[] = [];
    for (const p of this.#providers) configs.push(await p.provide(repository));
    return keyringOf(configs);
  }
}
