/**
 * The node's own registry logins (upstream `credentialprovider.NewDefaultDockerKeyring`): the
 * first readable and valid `config.json` in the kubelet's root dir, its working directory,
 * `$HOME/.docker` and `/.docker`; failing that, the first `.dockercfg` in the root dir, the
 * working directory, `$HOME` and `/`. Read again at most every five minutes. Every pod's pulls
 * may use these logins, after the pod's own pull secrets.
 * @module
 */
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { errorMessage } from "../../util/error_message.ts";
import { type DockerConfig, keyringOf } from "./pull_credentials.ts";

/** How long a read of the node's docker config is reused (upstream's caching provider). */
export const NODE_DOCKER_CONFIG_LIFETIME_MS = 5 * 60_000;

/** Where the node's docker config is looked for. */
export interface NodeDockerConfigPaths {
  /** `--root-dir`: looked at first. */
  rootDir: string;
  /** The kubelet's working directory. */
  cwd?: string | undefined;
  /** `$HOME`, when known. */
  home?: string | undefined;
}

/** The files to try, in upstream's order: every config.json first, then every .dockercfg. */
export function nodeDockerConfigFiles(
  paths: NodeDockerConfigPaths,
): { file: string; form: "config.json" | ".dockercfg" }[] {
  const join = (dir: string, name: string) =>
    dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
  const json = [
    paths.rootDir,
    paths.cwd,
    paths.home && join(paths.home, ".docker"),
    "/.docker",
  ];
  const cfg = [paths.rootDir, paths.cwd, paths.home, "/"];
  const seen = new Set<string>();
  const out: { file: string; form: "config.json" | ".dockercfg" }[] = [];
  for (
    const [dirs, form] of [[json, "config.json"], [cfg, ".dockercfg"]] as const
  ) {
    for (const dir of dirs) {
      if (!dir) continue;
      const file = join(dir, form);
      if (seen.has(file)) continue;
      seen.add(file);
      out.push({ file, form });
    }
  }
  return out;
}

/**
 * The docker config a file's text holds, or an error text: config.json carries its logins
 * under `auths`, a .dockercfg is the map itself. An entry whose `auth` is not
 * `base64(user:password)` makes the whole file invalid, as upstream's decoder does.
 */
export function parseNodeDockerConfig(
  text: string,
  form: "config.json" | ".dockercfg",
): { ok: true; config: DockerConfig } | { ok: false; error: string } {
  const invalid = {
    ok: false,
    error: "error occurred while trying to unmarshal json",
  } as const;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid;
  }
  const isMap = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isMap(value)) return invalid;
  const config = form === "config.json" ? value.auths ?? {} : value;
  if (!isMap(config)) return invalid;
  for (const entry of Object.values(config)) {
    if (!isMap(entry)) return invalid;
    for (const key of ["username", "password", "auth", "email"]) {
      if (entry[key] !== undefined && typeof entry[key] !== "string") {
        return invalid;
      }
    }
  }
  try {
    keyringOf([config as DockerConfig]);
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
  return { ok: true, config: config as DockerConfig };
}

/**
 * Reads one file's text; undefined when it does not exist or may not be read; rejects on other
 * read errors (logged, and the next file is tried).
 */
export type ReadOptionalText = (path: string) => Promise<string | undefined>;

/** The node's docker config, re-read after {@linkcode NODE_DOCKER_CONFIG_LIFETIME_MS}. */
export class NodeDockerConfig {
  #paths: NodeDockerConfigPaths;
  #read: ReadOptionalText;
  #clock: Clock;
  #logger: Logger;
  #cached: DockerConfig = {};
  #expiresAt = -Infinity;

  constructor(
    paths: NodeDockerConfigPaths,
    deps: { read: ReadOptionalText; clock: Clock; logger: Logger },
  ) {
    this.#paths = paths;
    this.#read = deps.read;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
  }

  /** The logins of the first valid file, or none. */
  async config(): Promise<DockerConfig> {
    const now = this.#clock.now();
    if (now < this.#expiresAt) return this.#cached;
    this.#cached = await this.#readFirst();
    this.#expiresAt = now + NODE_DOCKER_CONFIG_LIFETIME_MS;
    return this.#cached;
  }

  async #readFirst(): Promise<DockerConfig> {
    for (const { file, form } of nodeDockerConfigFiles(this.#paths)) {
      let text: string | undefined;
      try {
        text = await this.#read(file);
      } catch (e) {
        this.#logger.warn("Cannot read a docker config file", {
          path: file,
          err: errorMessage(e),
        });
        continue;
      }
      if (text === undefined) continue;
      const parsed = parseNodeDockerConfig(text, form);
      if (!parsed.ok) {
        this.#logger.warn("Ignoring an invalid docker config file", {
          path: file,
          err: parsed.error,
        });
        continue;
      }
      return parsed.config;
    }
    return {};
  }
}

/**
 * Reads a file's text when it exists and this process may read it: a path the permission plan
 * does not grant counts as absent (the plan grants the root dir's and `/.docker`'s files).
 */
export async function readOptionalText(
  path: string,
): Promise<string | undefined> {
  const granted = await Deno.permissions.query({ name: "read", path });
  if (granted.state !== "granted") return undefined;
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (
      e instanceof Deno.errors.NotFound || e instanceof Deno.errors.IsADirectory
    ) {
      return undefined;
    }
    throw e;
  }
}
