import assert from "node:assert/strict";
import { readYaml } from "./yaml.ts";

// Expected values are what sigs.k8s.io/yaml v1.6.0 (go-yaml v2) gives for
// the same text with YAMLToJSON / YAMLToJSONStrict, checked with Go.

async function value(text: string): Promise<unknown> {
  return (await readYaml(text)).value;
}

async function problem(text: string): Promise<string> {
  try {
    await readYaml(text);
  } catch (err) {
    assert.ok(err instanceof SyntaxError, String(err));
    return err.message;
  }
  throw new Error(`no error for ${JSON.stringify(text)}`);
}

const SCALARS: Array<[string, unknown]> = [
  ["yes", true],
  ["Yes", true],
  ["YES", true],
  ["yEs", "yEs"],
  ["on", true],
  ["ON", true],
  ["oN", "oN"],
  ["y", true],
  ["N", false],
  ["off", false],
  ["~", null],
  ["", null],
  ["0777", 511],
  ["0o17", 15],
  ["0x1F", 31],
  ["-0x1F", -31],
  ["+12", 12],
  ["1_000", 1000],
  ["08", 8],
  ["1e3", 1000],
  ["1.", 1],
  [".5", 0.5],
  ["1e400", "1e400"],
  ["2001-12-14", "2001-12-14"],
  ["12:30", "12:30"],
  ["10Mi", "10Mi"],
  ["0b101", 5],
];

Deno.test("readYaml() resolves YAML 1.1 scalars as go-yaml v2 on the fast and the full path", async () => {
  for (const [text, want] of SCALARS) {
    assert.deepStrictEqual(await value(`k: ${text}\n`), { k: want }, text);
    // An anchor sends the document to the full reader.
    assert.deepStrictEqual(
      await value(`x: &a 1\nk: ${text}\n`),
      { x: 1, k: want },
      `full: ${text}`,
    );
  }
  assert.deepStrictEqual(await value("k: 'yes'\nj: \"0777\"\n"), {
    k: "yes",
    j: "0777",
  });
});

Deno.test("readYaml() rejects a repeated key unless asked for the lenient reading", async () => {
  const text = "a: 1\nb: 2\na: 3\n";
  assert.equal(await problem(text), 'yaml: line 3: key "a" already set in map');
  const lenient = await readYaml(text, { allowDuplicateKeys: true });
  assert.deepStrictEqual(lenient.value, { a: 3, b: 2 });
  assert.deepStrictEqual(lenient.duplicateKeys, [
    'yaml: line 3: key "a" already set in map',
  ]);
});

Deno.test("readYaml() merges <<, writes non-string keys as JSON keys and reads explicit tags", async () => {
  const merged = "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n";
  assert.equal(
    await problem(merged),
    "yaml: line 4: key true already set in map",
  );
  assert.deepStrictEqual(
    (await readYaml(merged, { allowDuplicateKeys: true })).value,
    { base: { x: 1, true: 2 }, m: { x: 1, true: 3 } },
  );
  assert.deepStrictEqual(
    await value("1.5: a\nyes: b\n1e3: c\n0x1F: d\n"),
    { "1.5": "a", true: "b", "1000": "c", "31": "d" },
  );
  assert.deepStrictEqual(
    await value(
      'k: !!str 123\nj: !!int "12"\ni: !!float 3\nb: !!binary aGVsbG8=\n',
    ),
    { k: "123", j: 12, i: 3, b: "hello" },
  );
  assert.equal(
    await problem("k: !!int abc\n"),
    "yaml: cannot decode !!str `abc` as a !!int",
  );
});

Deno.test("readYaml() reads the first document only and bounds aliases", async () => {
  const two = await readYaml("---\na: 1\n---\nb: 2\n");
  assert.deepStrictEqual(two.value, { a: 1 });
  assert.equal(two.documents, 2);
  assert.equal(
    await problem("a: *nope\n"),
    "yaml: unknown anchor 'nope' referenced",
  );
  const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  const names = "abcdefghi";
  for (let i = 1; i < names.length; i++) {
    lines.push(
      `${names[i]}: &${names[i]} [${Array(9).fill(`*${names[i - 1]}`)}]`,
    );
  }
  assert.match(await problem(lines.join("\n")), /excessive aliasing/);
});

Deno.test("readYaml() fails on .inf and .nan like Go's JSON encoder", async () => {
  assert.equal(await problem("a: .inf\n"), "json: unsupported value: +Inf");
  assert.equal(await problem("a: [-.Inf]\n"), "json: unsupported value: -Inf");
  assert.equal(await problem("a: &x .nan\n"), "json: unsupported value: NaN");
});

Deno.test("readYaml() reports syntax errors with line and column", async () => {
  assert.match(
    await problem("a: [1, 2\nb: x\n"),
    /^yaml: line \d+, column \d+: /,
  );
});

Deno.test("readYaml() reads the block style of config files", async () => {
  const text = [
    "# leading comment",
    "---",
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration   # trailing comment",
    "authentication:",
    "  x509:",
    "    clientCAFile: /etc/kubernetes/pki/ca.crt",
    "  webhook: {enabled: true, cacheTTL: 0s}",
    "clusterDNS:",
    "- 10.96.0.10",
    "-   '10.96.0.11'",
    "evictionHard:",
    '  "memory.available": 100Mi',
    "  nodefs.available: 10%",
    "featureGates: {}",
    "registerWithTaints:",
    "  - key: a",
    "    effect: NoSchedule",
    "  -",
    "    key: b",
    '    value: "x\\ty\\u00e9"',
    "maxPods: 110",
    "memoryThrottlingFactor: 0.9",
    "podPidsLimit: -1",
    "staticPodURL:",
    "address: 0.0.0.0",
    "tlsCipherSuites: [TLS_A, 'TLS_B']",
    "",
  ].join("\n");
  assert.deepStrictEqual(await value(text), {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    authentication: {
      x509: { clientCAFile: "/etc/kubernetes/pki/ca.crt" },
      webhook: { enabled: true, cacheTTL: "0s" },
    },
    clusterDNS: ["10.96.0.10", "10.96.0.11"],
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" },
    featureGates: {},
    registerWithTaints: [
      { key: "a", effect: "NoSchedule" },
      { key: "b", value: "x\ty\u00e9" },
    ],
    maxPods: 110,
    memoryThrottlingFactor: 0.9,
    podPidsLimit: -1,
    staticPodURL: null,
    address: "0.0.0.0",
    tlsCipherSuites: ["TLS_A", "TLS_B"],
  });
});

Deno.test("readYaml() reads JSON documents over several lines", async () => {
  const doc = {
    kind: "KubeletConfiguration",
    maxPods: 20,
    nested: { list: [1, -2.5, true, null, 'x "q" \\ /'], empty: [] },
  };
  assert.deepStrictEqual(await value(JSON.stringify(doc, null, 2)), doc);
  assert.deepStrictEqual(await value(JSON.stringify(doc)), doc);
});

Deno.test("readYaml() reads kubeadm-style manifests, kubeconfigs and configs", async () => {
  const files: Array<[string, string]> = [
    ["./testdata/kube-apiserver.yaml", "Pod"],
    ["./testdata/kubelet.conf", "Config"],
    ["../../tests/fixtures/kubeadm_config.yaml", "KubeletConfiguration"],
    ["../../examples/kubelet-config.yaml", "KubeletConfiguration"],
    ["../../examples/manifests/httpd.yaml", "Pod"],
    ["../../examples/manifests/init.yaml", "Pod"],
  ];
  for (const [file, kind] of files) {
    const text = await Deno.readTextFile(new URL(file, import.meta.url));
    const doc = await value(text) as Record<string, unknown>;
    assert.equal(doc.kind, kind, file);
  }
});
