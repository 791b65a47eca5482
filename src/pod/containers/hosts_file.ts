/**
 * The kubelet-managed `/etc/hosts` of a pod (upstream `makeHostsMount`/`ensureHostsFile` in
 * kubelet_pods.go): `<rootDir>/pods/<uid>/etc-hosts`, rewritten before each container starts
 * and bind-mounted at `/etc/hosts`. A pod on the pod network gets the localhost entries and a
 * line per pod IP with its host name; a host-network pod gets the node's own hosts file; both
 * end with the `hostAliases` entries. Mounted once the sandbox has an IP; a host-network pod
 * always, as upstream gives it the node's addresses as pod IPs.
 *
 * @module
 */

import type { HostAlias, Pod } from "../types.ts";
import { podHostNameAndDomain } from "./pod_hostname.ts";

/** The hosts file's path under the kubelet root dir. */
export function hostsFilePath(rootDir: string, podUid: string): string {
  return `${rootDir.replace(/\/+$/, "")}/pods/${podUid}/etc-hosts`;
}

function aliasLines(aliases: readonly HostAlias[] | undefined): string {
  if (!aliases || aliases.length === 0) return "";
  const lines = aliases.map((a) =>
    `${a.ip}\t${(a.hostnames ?? []).join("\t")}\n`
  );
  return `\n# Entries added by HostAliases.\n${lines.join("")}`;
}

/** Options of {@linkcode hostsFileContent}. */
export interface HostsFileOptions {
  podIPs: readonly string[];
  clusterDomain?: string;
  /** The node's /etc/hosts text, needed for host-network pods. */
  nodeHosts?: string;
}

/** The hosts file text for `pod` (upstream `managedHostsFileContent`/`nodeHostsFileContent`). */
export function hostsFileContent(pod: Pod, options: HostsFileOptions): string {
  if (pod.spec.hostNetwork) {
    return "# Kubernetes-managed hosts file (host network).\n" +
      (options.nodeHosts ?? "") + aliasLines(pod.spec.hostAliases);
  }
  const { hostname, domain } = podHostNameAndDomain(
    pod,
    options.clusterDomain ?? "",
  );
  const names = domain ? `${hostname}.${domain}\t${hostname}` : hostname;
  return [
    "# Kubernetes-managed hosts file.\n",
    "127.0.0.1\tlocalhost\n",
    "::1\tlocalhost ip6-localhost ip6-loopback\n",
    "fe00::0\tip6-localnet\n",
    "fe00::0\tip6-mcastprefix\n",
    "fe00::1\tip6-allnodes\n",
    "fe00::2\tip6-allrouters\n",
    ...options.podIPs.map((ip) => `${ip}\t${names}\n`),
    aliasLines(pod.spec.hostAliases),
  ].join("");
}

/** File access the hosts file needs. */
export interface HostsFileIo {
  /** Creates a directory with its parents. */
  mkdir(path: string): Promise<void>;
  /** Writes a whole file with mode 0644. */
  writeTextFile(path: string, text: string): Promise<void>;
  /** Reads the node's /etc/hosts. */
  readNodeHosts(): Promise<string>;
}

/** {@linkcode HostsFileIo} on the host file system. */
export const denoHostsFileIo: HostsFileIo = {
  mkdir: (path) => Deno.mkdir(path, { recursive: true, mode: 0o750 }),
  async writeTextFile(path, text) {
    await Deno.writeTextFile(path, text, { mode: 0o644 });
    await Deno.chmod(path, 0o644);
  },
  readNodeHosts: () => Deno.readTextFile("/etc/hosts"),
};

/**
 * Writes the pod's hosts file and returns its path, or undefined when upstream would not
 * mount one (no pod IP yet on the pod network). Rejects when a file cannot be read or written.
 */
export async function ensureHostsFile(
  io: HostsFileIo,
  pod: Pod,
  options: HostsFileOptions & { rootDir: string },
): Promise<string | undefined> {
  if (options.podIPs.length === 0 && !pod.spec.hostNetwork) return undefined;
  const path = hostsFilePath(options.rootDir, pod.metadata.uid ?? "");
  await io.mkdir(path.slice(0, path.lastIndexOf("/")));
  const nodeHosts = pod.spec.hostNetwork ? await io.readNodeHosts() : undefined;
  await io.writeTextFile(
    path,
    hostsFileContent(pod, {
      ...options,
      ...(nodeHosts !== undefined ? { nodeHosts } : {}),
    }),
  );
  return path;
}
