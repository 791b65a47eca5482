/**
 * Loads a kubeconfig into what a connection needs: the server URL, the CA, and the client
 * credentials (certificate and key, a bearer token, or an exec credential plugin), following client-go's
 * `clientcmd` rules for the current context, `*-data` over file fields, and file paths
 * relative to the kubeconfig's directory. The entries are read by client-node's
 * `config_types` (its kubeconfig entry parser, without the rest of the package).
 * @module
 */
import {
  type Cluster,
  type Context,
  newClusters,
  newContexts,
  newUsers,
  type User,
} from "@kubernetes/client-node/dist/config_types.js";
import { type Clock, systemClock } from "../clock/mod.ts";
import {
  type CredentialSource,
  ExecCredentialProvider,
  type ExecRunner,
  parseExecConfig,
} from "./exec_credential.ts";
import { readYaml } from "../util/yaml.ts";

/** A resolved API server connection. */
export interface Connection {
  /** Base URL without a trailing slash, e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** PEM of the cluster CA bundle; undefined → the system roots. */
  caPem?: string;
  /** PEM of the client certificate (chain). */
  certPem?: string;
  /** PEM of the client key. */
  keyPem?: string;
  /** Bearer token. */
  token?: string;
  /** Where the client certificate came from, for expiry checks and logs. */
  certFile?: string;
  /** An exec credential plugin: its token or certificate replace the static ones. */
  exec?: CredentialSource;
}

/** A parsed kubeconfig: the current context's cluster and user entries. */
export interface KubeconfigEntries {
  cluster: Cluster;
  user: User | undefined;
  /** The kubeconfig's directory, which relative file paths resolve against. */
  dir: string;
  /** The kubeconfig's path, for messages. */
  path: string;
  /** The cluster entry's `extensions` (an exec plugin may receive one of them). */
  clusterExtensions?: unknown;
}

function decodeBase64(text: string): string {
  const bin = atob(text.replace(/\s+/g, ""));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

function resolvePath(dir: string, path: string): string {
  return path.startsWith("/") ? path : `${dir}/${path}`;
}

/**
 * Parses kubeconfig text (through the one YAML reader, `util/yaml.ts`) and picks the current context (or the only/first cluster and user
 * when no context is current). Throws SyntaxError for unparsable text and TypeError when no
 * cluster is defined.
 */
export async function parseKubeconfig(
  text: string,
  path: string,
): Promise<KubeconfigEntries> {
  let doc: Record<string, unknown>;
  try {
    doc = ((await readYaml(text)).value ?? {}) as Record<string, unknown>;
  } catch (cause) {
    throw new SyntaxError(`Cannot parse kubeconfig "${path}"`, { cause });
  }
  let clusters: Cluster[];
  let users: User[];
  let contexts: Context[];
  try {
    clusters = newClusters(doc.clusters);
    users = newUsers(doc.users);
    contexts = newContexts(doc.contexts);
  } catch (cause) {
    throw new TypeError(
      `Invalid kubeconfig "${path}": ${(cause as Error).message}`,
      { cause },
    );
  }
  const currentName = typeof doc["current-context"] === "string"
    ? doc["current-context"]
    : undefined;
  const context = contexts.find((c) => c.name === currentName) ?? contexts[0];
  const cluster = context
    ? clusters.find((c) => c.name === context.cluster)
    : clusters[0];
  const user = context ? users.find((u) => u.name === context.user) : users[0];
  if (!cluster) {
    throw new TypeError(`Invalid kubeconfig "${path}": no cluster to use`);
  }
  const slash = path.lastIndexOf("/");
  const rawCluster = Array.isArray(doc.clusters)
    ? (doc.clusters as { name?: unknown; cluster?: { extensions?: unknown } }[])
      .find((c) => c?.name === cluster.name)
    : undefined;
  return {
    cluster,
    user,
    dir: slash > 0 ? path.slice(0, slash) : ".",
    path,
    ...(rawCluster?.cluster?.extensions !== undefined
      ? { clusterExtensions: rawCluster.cluster.extensions }
      : {}),
  };
}

/** What {@linkcode connectionFromEntries} uses besides the entries. */
export interface ConnectionDeps {
  readTextFile?: (path: string) => Promise<string>;
  /** Clock of an exec plugin's credential expiry (default the system clock). */
  clock?: Clock;
  /** Runs an exec plugin (default `Deno.Command`). */
  runExec?: ExecRunner;
}

/** Reads the files a kubeconfig's entries name and returns the connection. */
export async function connectionFromEntries(
  entries: KubeconfigEntries,
  deps: ConnectionDeps = {},
): Promise<Connection> {
  const readTextFile = deps.readTextFile ?? Deno.readTextFile;
  const { cluster, user, dir } = entries;
  if (cluster.skipTLSVerify) {
    throw new TypeError(
      `Unsupported kubeconfig cluster "${cluster.name}": insecure-skip-tls-verify`,
    );
  }
  const conn: Connection = { server: cluster.server.replace(/\/+$/, "") };
  if (cluster.caData) conn.caPem = decodeBase64(cluster.caData);
  else if (cluster.caFile) {
    conn.caPem = await readTextFile(resolvePath(dir, cluster.caFile));
  }
  if (!user) return conn;
  if (user.authProvider) {
    throw new TypeError(
      `Unsupported kubeconfig user "${user.name}": auth-provider credentials (use an exec plugin)`,
    );
  }
  if (user.exec) {
    const config = parseExecConfig(user.exec, {
      kubeconfigPath: entries.path,
      userName: user.name,
      dir,
      cluster: {
        server: conn.server,
        ...(conn.caPem ? { caPem: conn.caPem } : {}),
        ...(cluster.tlsServerName
          ? { tlsServerName: cluster.tlsServerName }
          : {}),
        ...(cluster.proxyUrl ? { proxyUrl: cluster.proxyUrl } : {}),
        ...(entries.clusterExtensions !== undefined
          ? { extensions: entries.clusterExtensions }
          : {}),
      },
    });
    conn.exec = new ExecCredentialProvider({
      clock: deps.clock ?? systemClock,
      ...(deps.runExec ? { run: deps.runExec } : {}),
    }, config);
  }
  if (user.certData) conn.certPem = decodeBase64(user.certData);
  else if (user.certFile) {
    conn.certFile = resolvePath(dir, user.certFile);
    conn.certPem = await readTextFile(conn.certFile);
  }
  if (user.keyData) conn.keyPem = decodeBase64(user.keyData);
  else if (user.keyFile) {
    conn.keyPem = await readTextFile(resolvePath(dir, user.keyFile));
  }
  if (user.token) conn.token = user.token;
  return conn;
}

/** Reads a kubeconfig file and returns the connection of its current context. */
export async function loadKubeconfig(
  path: string,
  deps: ConnectionDeps = {},
): Promise<Connection> {
  const readTextFile = deps.readTextFile ?? Deno.readTextFile;
  return await connectionFromEntries(
    await parseKubeconfig(await readTextFile(path), path),
    deps,
  );
}

/**
 * Renders the kubeconfig the kubelet writes after TLS bootstrap (upstream
 * `writeKubeconfigFromBootstrapping`): the bootstrap cluster, and a user whose certificate
 * and key both point at the rotating pair file.
 */
export function renderCertKubeconfig(
  options: { server: string; caPem?: string; pairFile: string },
): string {
  const ca = options.caPem
    ? `    certificate-authority-data: ${btoa(options.caPem)}\n`
    : "";
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: default-cluster",
    "  cluster:",
    `    server: ${JSON.stringify(options.server)}`,
    ca.trimEnd(),
    "contexts:",
    "- name: default-context",
    "  context:",
    "    cluster: default-cluster",
    "    namespace: default",
    "    user: default-auth",
    "current-context: default-context",
    "users:",
    "- name: default-auth",
    "  user:",
    `    client-certificate: ${JSON.stringify(options.pairFile)}`,
    `    client-key: ${JSON.stringify(options.pairFile)}`,
    "",
  ].filter((line) => line !== "").join("\n") + "\n";
}
