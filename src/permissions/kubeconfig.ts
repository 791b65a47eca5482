/**
 * Reads the parts of a kubeconfig that decide permissions: the API server
 * address(es) (net) and the credential files it references (read).
 * @module
 */
import { dir, isAbs, join } from "../util/posix_path.ts";
import { readYaml } from "../util/yaml.ts";

/** What a kubeconfig makes the kubelet touch. */
export interface KubeconfigNeeds {
  /** `host:port` of each API server the kubelet may contact. */
  servers: string[];
  /** Files named in the kubeconfig (CA, client cert/key, token file). */
  files: string[];
  /** Exec credential plugins: a bare name (found on PATH) or a resolved path. */
  commands: string[];
}

type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function namedEntries(
  doc: Dict,
  key: string,
  inner: string,
): Map<string, Dict> {
  const out = new Map<string, Dict>();
  const list = doc[key];
  if (!Array.isArray(list)) return out;
  for (const item of list) {
    if (!isDict(item) || typeof item.name !== "string") continue;
    const body = item[inner];
    if (isDict(body)) out.set(item.name, body);
  }
  return out;
}

/**
 * Turns an API server URL into the `host:port` Deno's `--allow-net` expects.
 * Returns undefined for a value that is not an http(s) URL.
 */
export function serverHostPort(server: string): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  const port = url.port !== ""
    ? url.port
    : (url.protocol === "https:" ? "443" : "80");
  return `${url.hostname}:${port}`;
}

/**
 * Reads kubeconfig text as client-go's loader does (`sigs.k8s.io/yaml`
 * semantics through the one YAML reader: `insecure-skip-tls-verify: yes`
 * is true, `0777` is 511). Rejects with SyntaxError for invalid YAML.
 */
export async function readKubeconfig(text: string): Promise<unknown> {
  return (await readYaml(text)).value;
}

/**
 * Extracts the API servers and referenced files from kubeconfig text. Uses the
 * current context when set, otherwise every cluster and user listed. Relative
 * file paths are resolved against the kubeconfig's own directory, as kubectl
 * and the kubelet do.
 * Rejects with SyntaxError when the text is not YAML.
 */
export async function kubeconfigNeeds(
  text: string,
  path: string,
): Promise<KubeconfigNeeds> {
  let doc: unknown;
  try {
    doc = await readKubeconfig(text);
  } catch (cause) {
    throw new SyntaxError(`Cannot parse kubeconfig "${path}": not valid YAML`, {
      cause,
    });
  }
  const needs: KubeconfigNeeds = { servers: [], files: [], commands: [] };
  if (!isDict(doc)) return needs;
  const clusters = namedEntries(doc, "clusters", "cluster");
  const users = namedEntries(doc, "users", "user");
  const contexts = namedEntries(doc, "contexts", "context");
  const current = typeof doc["current-context"] === "string"
    ? contexts.get(doc["current-context"])
    : undefined;
  const pickedClusters = current && typeof current.cluster === "string"
    ? [clusters.get(current.cluster)]
    : [...clusters.values()];
  const pickedUsers = current && typeof current.user === "string"
    ? [users.get(current.user)]
    : [...users.values()];
  const base = dir(path);
  const addFile = (value: unknown) => {
    if (typeof value !== "string" || value === "") return;
    needs.files.push(isAbs(value) ? value : join(base, value));
  };
  for (const cluster of pickedClusters) {
    if (!cluster) continue;
    if (typeof cluster.server === "string") {
      const hostPort = serverHostPort(cluster.server);
      if (hostPort) needs.servers.push(hostPort);
    }
    addFile(cluster["certificate-authority"]);
  }
  for (const user of pickedUsers) {
    if (!user) continue;
    addFile(user["client-certificate"]);
    addFile(user["client-key"]);
    addFile(user.tokenFile);
    const exec = user.exec;
    if (isDict(exec) && typeof exec.command === "string" && exec.command) {
      // client-go: a command with a slash is relative to the kubeconfig, a bare name is on PATH
      needs.commands.push(
        exec.command.includes("/") && !isAbs(exec.command)
          ? join(base, exec.command)
          : exec.command,
      );
    }
  }
  return needs;
}
