import assert from "node:assert/strict";
import { defaultKubeletFlags } from "./kubelet_flags.ts";
import { isKubeletLabel, validateKubeletFlags } from "./validate_flags.ts";

function check(labels: Record<string, string>): string | undefined {
  const flags = defaultKubeletFlags();
  flags.nodeLabels = labels;
  return validateKubeletFlags(flags)?.message;
}

Deno.test("validateKubeletFlags() accepts empty and non-kubernetes labels", () => {
  assert.equal(check({}), undefined);
  assert.equal(
    check({ "cloud.google.com/metadata-proxy-ready": "true" }),
    undefined,
  );
  assert.equal(
    check({ "node.kubernetes.io/role": "x", "kubernetes.io/hostname": "n1" }),
    undefined,
  );
  assert.equal(check({ "a.kubelet.kubernetes.io/b": "" }), undefined);
});

Deno.test("validateKubeletFlags() rejects unknown kubernetes.io labels with upstream text", () => {
  assert.equal(
    check({
      "beta.kubernetes.io/metadata-proxy-ready": "true",
      "k8s.io/z": "1",
    }),
    "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [beta.kubernetes.io/metadata-proxy-ready k8s.io/z]\n" +
      "--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) " +
      "or be in the specifically allowed set (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, " +
      "failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname, " +
      "kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region, topology.kubernetes.io/zone)",
  );
});

Deno.test("validateKubeletFlags() reports bad values keyed by the value", () => {
  assert.equal(
    check({ "cloud.google.com/repository": "kubernetes/kubernetes" }),
    "invalid node labels: 'kubernetes/kubernetes' - a valid label must be an empty string or consist of alphanumeric characters, " +
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', " +
      "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  );
  assert.match(
    check({ "Bad_Prefix/x": "" }) ?? "",
    /^invalid node labels: 'Bad_Prefix\/x' - prefix part a lowercase RFC 1123/,
  );
});

Deno.test("isKubeletLabel() allows the kubelet namespaces and the well-known set", () => {
  assert.equal(isKubeletLabel("kubernetes.io/os"), true);
  assert.equal(isKubeletLabel("x.node.kubernetes.io/y"), true);
  assert.equal(isKubeletLabel("kubernetes.io/role"), false);
});
