import assert from "node:assert/strict";
import { readKubeconfig } from "./kubeconfig.ts";
import { kubeconfigNeeds, serverHostPort } from "./mod.ts";

Deno.test("serverHostPort() defaults the port from the scheme", () => {
  assert.equal(
    serverHostPort("https://api.example.com"),
    "api.example.com:443",
  );
  assert.equal(serverHostPort("http://10.0.0.1"), "10.0.0.1:80");
  assert.equal(serverHostPort("https://[fd00::1]:6443/path"), "[fd00::1]:6443");
  assert.equal(serverHostPort("unix:///x.sock"), undefined);
  assert.equal(serverHostPort("not a url"), undefined);
});

Deno.test("kubeconfigNeeds() uses every cluster and user without a current context", async () => {
  const needs = await kubeconfigNeeds(
    [
      "clusters:",
      "- {name: a, cluster: {server: 'https://a:6443'}}",
      "- {name: b, cluster: {server: 'https://b:7443', certificate-authority: /ca/b.crt}}",
      "users:",
      "- {name: u, user: {tokenFile: token}}",
    ].join("\n"),
    "/etc/kube/config",
  );
  assert.deepEqual(needs.servers, ["a:6443", "b:7443"]);
  assert.deepEqual(needs.files, ["/ca/b.crt", "/etc/kube/token"]);
});

Deno.test("kubeconfigNeeds() ignores embedded data and odd shapes", async () => {
  const needs = await kubeconfigNeeds(
    [
      "current-context: c",
      "contexts: [{name: c, context: {cluster: a, user: u}}]",
      "clusters: [{name: a, cluster: {server: 'https://a', certificate-authority-data: AAAA}}, 7]",
      "users: [{name: u, user: {client-certificate-data: AAAA, token: abc}}]",
    ].join("\n"),
    "/k",
  );
  assert.deepEqual(needs, { servers: ["a:443"], files: [], commands: [] });
  assert.deepEqual(await kubeconfigNeeds("", "/k"), {
    servers: [],
    files: [],
    commands: [],
  });
  assert.deepEqual(await kubeconfigNeeds("- a\n- b\n", "/k"), {
    servers: [],
    files: [],
    commands: [],
  });
});

Deno.test("kubeconfigNeeds() rejects text that is not YAML, naming the file", async () => {
  await assert.rejects(
    async () =>
      await kubeconfigNeeds(
        "clusters: [unclosed",
        "/etc/kubernetes/kubelet.conf",
      ),
    (error: unknown) =>
      error instanceof SyntaxError &&
      error.message.includes('"/etc/kubernetes/kubelet.conf"'),
  );
});

Deno.test("readKubeconfig() reads YAML 1.1 scalars as client-go (sigs.k8s.io/yaml) does", async () => {
  const doc = await readKubeconfig(
    "clusters:\n- name: a\n  cluster:\n    server: https://a:6443\n    insecure-skip-tls-verify: yes\npreferences:\n  colors: on\n  mode: 0777\n  limit: 1e3\n",
  );
  assert.deepStrictEqual(doc, {
    clusters: [{
      name: "a",
      cluster: { server: "https://a:6443", "insecure-skip-tls-verify": true },
    }],
    preferences: { colors: true, mode: 511, limit: 1000 },
  });
});

Deno.test("kubeconfigNeeds() names the current user's exec plugin, relative to the kubeconfig when it has a slash", async () => {
  const doc = (command: string) =>
    [
      "current-context: c",
      "contexts: [{name: c, context: {cluster: a, user: u}}, {name: d, context: {cluster: a, user: v}}]",
      "clusters: [{name: a, cluster: {server: 'https://a:6443'}}]",
      `users: [{name: u, user: {exec: {command: '${command}', apiVersion: client.authentication.k8s.io/v1}}}, {name: v, user: {exec: {command: other}}}]`,
    ].join("\n");
  assert.deepEqual(
    (await kubeconfigNeeds(doc("get-token"), "/etc/k/kubelet.conf")).commands,
    ["get-token"],
  );
  assert.deepEqual(
    (await kubeconfigNeeds(doc("bin/get-token"), "/etc/k/kubelet.conf"))
      .commands,
    ["/etc/k/bin/get-token"],
  );
  assert.deepEqual(
    (await kubeconfigNeeds(doc("/usr/bin/t"), "/etc/k/kubelet.conf")).commands,
    ["/usr/bin/t"],
  );
});
