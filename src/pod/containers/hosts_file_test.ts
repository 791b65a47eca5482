import assert from "node:assert/strict";
import {
  ensureHostsFile,
  hostsFileContent,
  type HostsFileIo,
  hostsFilePath,
} from "./hosts_file.ts";
import type { Pod } from "../types.ts";

function pod(spec: Partial<Pod["spec"]> = {}): Pod {
  return {
    metadata: { name: "web", namespace: "prod", uid: "u-1" },
    spec: { containers: [{ name: "app" }], ...spec },
  };
}

const LOCAL = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n" +
  "::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n" +
  "fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n";

Deno.test("hostsFileContent() writes localhost entries and a line per pod IP", () => {
  assert.equal(
    hostsFileContent(pod(), { podIPs: ["10.86.0.5", "fd00::5"] }),
    `${LOCAL}10.86.0.5\tweb\nfd00::5\tweb\n`,
  );
  assert.equal(
    hostsFileContent(pod({ hostname: "db-0", subdomain: "db" }), {
      podIPs: ["10.86.0.5"],
      clusterDomain: "cluster.local",
    }),
    `${LOCAL}10.86.0.5\tdb-0.db.prod.svc.cluster.local\tdb-0\n`,
  );
});

Deno.test("hostsFileContent() appends hostAliases and copies the node's file on the host network", () => {
  const aliases = [{ ip: "1.2.3.4", hostnames: ["a", "b"] }];
  assert.equal(
    hostsFileContent(pod({ hostAliases: aliases }), { podIPs: ["10.0.0.2"] }),
    `${LOCAL}10.0.0.2\tweb\n\n# Entries added by HostAliases.\n1.2.3.4\ta\tb\n`,
  );
  assert.equal(
    hostsFileContent(pod({ hostNetwork: true, hostAliases: aliases }), {
      podIPs: ["192.168.1.2"],
      nodeHosts: "127.0.0.1 localhost\n",
    }),
    "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n" +
      "\n# Entries added by HostAliases.\n1.2.3.4\ta\tb\n",
  );
});

Deno.test("ensureHostsFile() writes <rootDir>/pods/<uid>/etc-hosts once the pod has an IP", async () => {
  const written = new Map<string, string>();
  const dirs: string[] = [];
  const io: HostsFileIo = {
    mkdir: (path) => {
      dirs.push(path);
      return Promise.resolve();
    },
    writeTextFile: (path, text) => {
      written.set(path, text);
      return Promise.resolve();
    },
    readNodeHosts: () => Promise.resolve("node\n"),
  };
  assert.equal(
    await ensureHostsFile(io, pod(), {
      rootDir: "/var/lib/kubelet",
      podIPs: [],
    }),
    undefined,
  );
  assert.equal(written.size, 0);
  const path = await ensureHostsFile(io, pod(), {
    rootDir: "/var/lib/kubelet/",
    podIPs: ["10.0.0.2"],
  });
  assert.equal(path, "/var/lib/kubelet/pods/u-1/etc-hosts");
  assert.equal(path, hostsFilePath("/var/lib/kubelet", "u-1"));
  assert.deepEqual(dirs, ["/var/lib/kubelet/pods/u-1"]);
  assert.equal(written.get(path!), `${LOCAL}10.0.0.2\tweb\n`);
  // a host-network pod gets the node's file even though the runtime reports no pod IP
  await ensureHostsFile(io, pod({ hostNetwork: true }), {
    rootDir: "/r",
    podIPs: [],
  });
  assert.equal(
    written.get("/r/pods/u-1/etc-hosts"),
    "# Kubernetes-managed hosts file (host network).\nnode\n",
  );
});
