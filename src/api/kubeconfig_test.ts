import assert from "node:assert/strict";
import {
  connectionFromEntries,
  loadKubeconfig,
  parseKubeconfig,
  renderCertKubeconfig,
} from "./kubeconfig.ts";

const files: Record<string, string> = {
  "/etc/k/ca.crt": "CA-PEM",
  "/etc/k/pki/client.crt": "CERT-PEM",
  "/etc/k/pki/client.key": "KEY-PEM",
};
const read = (path: string) => {
  const text = files[path];
  return text === undefined
    ? Promise.reject(new Deno.errors.NotFound(path))
    : Promise.resolve(text);
};

const TWO_CONTEXTS = `
apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: { server: "https://a.example:6443/", certificate-authority: ca.crt }
- name: b
  cluster: { server: "https://b.example", certificate-authority-data: ${
  btoa("B-CA")
} }
users:
- name: ua
  user: { client-certificate: pki/client.crt, client-key: /etc/k/pki/client.key }
- name: ub
  user: { token: secret-token }
contexts:
- name: ca
  context: { cluster: a, user: ua }
- name: cb
  context: { cluster: b, user: ub }
current-context: cb
`;

Deno.test("parseKubeconfig() picks the current context's cluster and user", async () => {
  const e = await parseKubeconfig(TWO_CONTEXTS, "/etc/k/kubelet.conf");
  assert.equal(e.cluster.name, "b");
  assert.equal(e.user?.name, "ub");
  assert.equal(e.dir, "/etc/k");
});

Deno.test("parseKubeconfig() reads scalars with go-yaml v2 rules, like every other YAML input", async () => {
  const text = [
    "clusters:",
    "- name: c",
    "  cluster: {server: https://c.example, insecure-skip-tls-verify: yes}",
    "users: [{name: u, user: {token: t}}]",
    "",
  ].join("\n");
  const e = await parseKubeconfig(text, "/etc/k/kubelet.conf");
  // go-yaml v2 (client-go's reader) reads `yes` as true; YAML 1.2 as text.
  assert.equal(e.cluster.skipTLSVerify, true);
});

Deno.test("connectionFromEntries() decodes data fields and reads files relative to the kubeconfig", async () => {
  const b = await connectionFromEntries(
    await parseKubeconfig(TWO_CONTEXTS, "/etc/k/kubelet.conf"),
    { readTextFile: read },
  );
  assert.deepEqual(b, {
    server: "https://b.example",
    caPem: "B-CA",
    token: "secret-token",
  });
  const a = await connectionFromEntries(
    await parseKubeconfig(
      TWO_CONTEXTS.replace("current-context: cb", "current-context: ca"),
      "/etc/k/kubelet.conf",
    ),
    { readTextFile: read },
  );
  assert.deepEqual(a, {
    server: "https://a.example:6443",
    caPem: "CA-PEM",
    certPem: "CERT-PEM",
    keyPem: "KEY-PEM",
    certFile: "/etc/k/pki/client.crt",
  });
});

Deno.test("loadKubeconfig() rejects an exec entry without apiVersion, insecure TLS and unparsable text", async () => {
  const exec = `clusters: [{name: c, cluster: {server: "https://x"}}]
users: [{name: u, user: {exec: {command: helper}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x`;
  await assert.rejects(
    loadKubeconfig("/k", { readTextFile: () => Promise.resolve(exec) }),
    /kubeconfig "\/k" user "u": exec\.apiVersion "" is not supported/,
  );
  const insecure =
    `clusters: [{name: c, cluster: {server: "https://x", insecure-skip-tls-verify: true}}]`;
  await assert.rejects(
    loadKubeconfig("/k", { readTextFile: () => Promise.resolve(insecure) }),
    /insecure-skip-tls-verify/,
  );
  await assert.rejects(
    loadKubeconfig("/k", { readTextFile: () => Promise.resolve("a: [") }),
    SyntaxError,
  );
  await assert.rejects(
    loadKubeconfig("/k", {
      readTextFile: () => Promise.resolve("kind: Config"),
    }),
    /no cluster/,
  );
});

Deno.test("renderCertKubeconfig() round-trips through the loader", async () => {
  const text = renderCertKubeconfig({
    server: "https://127.0.0.1:6443",
    caPem: "CA\n",
    pairFile: "/var/lib/kubelet/pki/kubelet-client-current.pem",
  });
  const conn = await loadKubeconfig(
    "/etc/k/kubelet.conf",
    {
      readTextFile: (path) =>
        path === "/etc/k/kubelet.conf"
          ? Promise.resolve(text)
          : Promise.resolve(`PAIR ${path}`),
    },
  );
  assert.equal(conn.server, "https://127.0.0.1:6443");
  assert.equal(conn.caPem, "CA\n");
  assert.equal(
    conn.certPem,
    "PAIR /var/lib/kubelet/pki/kubelet-client-current.pem",
  );
  assert.equal(conn.keyPem, conn.certPem);
});
