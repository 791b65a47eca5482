/**
 * Exec credential plugins of a kubeconfig user (`users[].user.exec`), as client-go's exec
 * authenticator runs them: the command prints an `ExecCredential` whose status carries a
 * bearer token or a client certificate and key; the answer is kept until its
 * `expirationTimestamp` passes or the API server answers 401 to it, then the plugin runs again.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import { isAbs, join } from "../util/posix_path.ts";

/** The `ExecCredential` API versions client-go accepts (v1alpha1 is gone upstream). */
export const EXEC_API_VERSIONS = [
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
] as const;

/** The cluster extension whose value reaches the plugin as `spec.cluster.config`. */
const EXEC_EXTENSION = "client.authentication.k8s.io/exec";

type InteractiveMode = "Never" | "IfAvailable" | "Always";

/** A validated `exec` entry plus where it came from (for messages). */
export interface ExecConfig {
  command: string;
  args: string[];
  /** Extra environment, over the kubelet's own. */
  env: Record<string, string>;
  apiVersion: string;
  interactiveMode: InteractiveMode;
  /** The JSON of `KUBERNETES_EXEC_INFO`. */
  execInfo: string;
  installHint?: string;
  kubeconfigPath: string;
  userName: string;
}

/** What the plugin returned, decoded. */
export interface ExecCredential {
  token?: string;
  certPem?: string;
  keyPem?: string;
  /** Epoch ms after which the plugin runs again; undefined: until a 401. */
  expiresAt?: number;
}

/** The cluster fields client-go hands a plugin with `provideClusterInfo: true`. */
export interface ExecClusterInfo {
  server: string;
  caPem?: string;
  tlsServerName?: string;
  insecureSkipTlsVerify?: boolean;
  proxyUrl?: string;
  /** The raw `extensions` list of the cluster entry. */
  extensions?: unknown;
}

type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Thrown for an unusable `exec` entry or a failed plugin run; names kubeconfig and user. */
export class ExecPluginError extends Error {
  override name = "ExecPluginError";
}

function extensionConfig(extensions: unknown): unknown {
  if (!Array.isArray(extensions)) return undefined;
  const entry = extensions.find((e) => isDict(e) && e.name === EXEC_EXTENSION);
  return isDict(entry) ? entry.extension : undefined;
}

function clusterSpec(cluster: ExecClusterInfo): Dict {
  const config = extensionConfig(cluster.extensions);
  return {
    server: cluster.server,
    ...(cluster.tlsServerName
      ? { "tls-server-name": cluster.tlsServerName }
      : {}),
    ...(cluster.insecureSkipTlsVerify
      ? { "insecure-skip-tls-verify": true }
      : {}),
    ...(cluster.caPem
      ? { "certificate-authority-data": btoa(cluster.caPem) }
      : {}),
    ...(cluster.proxyUrl ? { "proxy-url": cluster.proxyUrl } : {}),
    ...(config !== undefined ? { config } : {}),
  };
}

/**
 * Validates a kubeconfig user's `exec` entry (client-go's clientcmd validation): a command,
 * a supported apiVersion, `interactiveMode` set for v1, and string env pairs. A command with
 * a slash resolves against the kubeconfig's directory; a bare name is looked up on PATH.
 */
export function parseExecConfig(
  raw: unknown,
  where: {
    kubeconfigPath: string;
    userName: string;
    dir: string;
    cluster: ExecClusterInfo;
  },
): ExecConfig {
  const prefix =
    `kubeconfig "${where.kubeconfigPath}" user "${where.userName}": exec`;
  const fail = (what: string): never => {
    throw new ExecPluginError(`${prefix}.${what}`);
  };
  if (!isDict(raw)) return fail(" must be a mapping");
  const command = typeof raw.command === "string" ? raw.command : "";
  if (command === "") fail("command must be set to the plugin to run");
  const apiVersion = typeof raw.apiVersion === "string" ? raw.apiVersion : "";
  if (!(EXEC_API_VERSIONS as readonly string[]).includes(apiVersion)) {
    fail(
      `apiVersion "${apiVersion}" is not supported; use ${
        EXEC_API_VERSIONS.join(" or ")
      }`,
    );
  }
  let mode = raw.interactiveMode ?? "";
  if (mode === "") {
    if (apiVersion.endsWith("/v1")) {
      fail(
        `interactiveMode must be set for ${apiVersion} (Never, IfAvailable or Always)`,
      );
    }
    mode = "IfAvailable";
  }
  if (mode !== "Never" && mode !== "IfAvailable" && mode !== "Always") {
    fail(
      `interactiveMode "${mode}" is invalid; use Never, IfAvailable or Always`,
    );
  }
  if (mode === "Always") {
    // The kubelet never has a terminal on standard input.
    fail(
      `interactiveMode Always needs a terminal on standard input, which the kubelet does not have; use Never`,
    );
  }
  const args: string[] = [];
  if (raw.args !== undefined && raw.args !== null) {
    if (
      !Array.isArray(raw.args) || raw.args.some((a) => typeof a !== "string")
    ) fail("args must be a list of strings");
    args.push(...raw.args as string[]);
  }
  const env: Record<string, string> = {};
  if (raw.env !== undefined && raw.env !== null) {
    if (!Array.isArray(raw.env)) fail("env must be a list of {name, value}");
    for (const [i, entry] of (raw.env as unknown[]).entries()) {
      if (
        !isDict(entry) || typeof entry.name !== "string" || entry.name === "" ||
        typeof entry.value !== "string"
      ) fail(`env[${i}] must have a non-empty string name and a string value`);
      env[(entry as Dict).name as string] = (entry as Dict).value as string;
    }
  }
  const provide = raw.provideClusterInfo === true;
  const execInfo = JSON.stringify({
    kind: "ExecCredential",
    apiVersion,
    spec: {
      ...(provide ? { cluster: clusterSpec(where.cluster) } : {}),
      interactive: false,
    },
  });
  return {
    command: resolveExecCommand(command, where.dir),
    args,
    env,
    apiVersion,
    interactiveMode: mode as InteractiveMode,
    execInfo,
    ...(typeof raw.installHint === "string" && raw.installHint
      ? { installHint: raw.installHint }
      : {}),
    kubeconfigPath: where.kubeconfigPath,
    userName: where.userName,
  };
}

/**
 * client-go resolves a command with a path separator against the kubeconfig's directory. The
 * result keeps a slash (`./plugin` for a kubeconfig in the working directory): a bare name
 * would be looked up on PATH instead.
 */
export function resolveExecCommand(command: string, dir: string): string {
  if (!command.includes("/") || isAbs(command)) return command;
  const path = join(dir, command);
  return path.includes("/") ? path : `./${path}`;
}

/** Decodes a plugin's standard output into a credential (client-go's checks and wording). */
export function parseExecOutput(
  stdout: string,
  config: Pick<
    ExecConfig,
    "apiVersion" | "command" | "kubeconfigPath" | "userName"
  >,
): ExecCredential {
  const fail = (what: string): never => {
    throw new ExecPluginError(
      `kubeconfig "${config.kubeconfigPath}" user "${config.userName}": exec plugin "${config.command}" ${what}`,
    );
  };
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch (cause) {
    return fail(
      `printed no ExecCredential JSON on standard output (${
        (cause as Error).message
      }): ${JSON.stringify(stdout.slice(0, 200))}`,
    );
  }
  if (!isDict(doc) || doc.kind !== "ExecCredential") {
    fail(`printed JSON that is not kind ExecCredential`);
  }
  const cred = doc as Dict;
  if (cred.apiVersion !== config.apiVersion) {
    fail(
      `is configured to use API version ${config.apiVersion}, plugin returned version ${
        String(cred.apiVersion)
      }`,
    );
  }
  if (!isDict(cred.status)) fail("didn't return a status field");
  const status = cred.status as Dict;
  const str = (key: string): string | undefined =>
    typeof status[key] === "string" && status[key] !== ""
      ? status[key] as string
      : undefined;
  const token = str("token");
  const cert = str("clientCertificateData");
  const key = str("clientKeyData");
  if (!token && !cert && !key) {
    fail("didn't return a token or cert/key pair");
  }
  if ((cert === undefined) !== (key === undefined)) {
    fail("returned only certificate or private key, not both");
  }
  const out: ExecCredential = {};
  if (token) out.token = token;
  // clientCertificateData/clientKeyData carry PEM text itself, not base64
  if (cert && key) {
    out.certPem = cert;
    out.keyPem = key;
  }
  const exp = status.expirationTimestamp;
  if (exp !== undefined && exp !== null) {
    const ms = typeof exp === "string" ? Date.parse(exp) : NaN;
    if (Number.isNaN(ms)) {
      fail(
        `returned status.expirationTimestamp ${
          JSON.stringify(exp)
        }, not an RFC 3339 time`,
      );
    }
    out.expiresAt = ms;
  }
  return out;
}

/** One plugin run's outcome. */
export interface ExecRunResult {
  code: number;
  stdout: string;
}

/** Runs a command with stdin closed and stderr passed through; rejects when it cannot start. */
export type ExecRunner = (
  command: string,
  args: string[],
  env: Record<string, string>,
) => Promise<ExecRunResult>;

/** The real runner: `Deno.Command` (needs `--allow-run` for the command). */
export async function denoExecRunner(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<ExecRunResult> {
  const out = await new Deno.Command(command, {
    args,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

/** Where a request's credentials come from when they can change while the kubelet runs. */
export interface CredentialSource {
  /** The credential to send now (runs the plugin when none is cached or it expired). */
  get(): Promise<ExecCredential>;
  /** The API server refused `used` (401): the next `get` runs the plugin again. */
  unauthorized(used: ExecCredential): void;
}

/** client-go's exec authenticator: caches one credential, one plugin run at a time. */
export class ExecCredentialProvider implements CredentialSource {
  #clock: Clock;
  #run: ExecRunner;
  #config: ExecConfig;
  #cached: ExecCredential | undefined;
  #running: Promise<ExecCredential> | undefined;

  constructor(
    deps: { clock: Clock; run?: ExecRunner },
    config: ExecConfig,
  ) {
    this.#clock = deps.clock;
    this.#run = deps.run ?? denoExecRunner;
    this.#config = config;
  }

  get(): Promise<ExecCredential> {
    const cached = this.#cached;
    if (
      cached &&
      (cached.expiresAt === undefined || this.#clock.now() <= cached.expiresAt)
    ) {
      return Promise.resolve(cached);
    }
    this.#running ??= this.#refresh().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  unauthorized(used: ExecCredential): void {
    if (this.#cached === used) this.#cached = undefined;
  }

  async #refresh(): Promise<ExecCredential> {
    const c = this.#config;
    const plugin =
      `kubeconfig "${c.kubeconfigPath}" user "${c.userName}": exec plugin "${c.command}"`;
    let result: ExecRunResult;
    try {
      result = await this.#run(c.command, c.args, {
        ...c.env,
        KUBERNETES_EXEC_INFO: c.execInfo,
      });
    } catch (cause) {
      const hint = c.installHint ? `\n${c.installHint}` : "";
      if (cause instanceof Deno.errors.NotFound) {
        throw new ExecPluginError(`${plugin}: executable not found${hint}`, {
          cause,
        });
      }
      if (cause instanceof Deno.errors.NotCapable) {
        throw new ExecPluginError(
          `${plugin}: not allowed to run it; grant --allow-run=${c.command} (the permission plan does when built from this kubeconfig)`,
          { cause },
        );
      }
      throw new ExecPluginError(
        `${plugin}: cannot start: ${(cause as Error).message}${hint}`,
        { cause },
      );
    }
    if (result.code !== 0) {
      throw new ExecPluginError(
        `${plugin}: executable failed with exit code ${result.code}`,
      );
    }
    const cred = parseExecOutput(result.stdout, c);
    this.#cached = cred;
    return cred;
  }
}
