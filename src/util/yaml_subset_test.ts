import assert from "node:assert/strict";
import { stringify } from "yaml";
import { parseYamlSubset, UNSUPPORTED } from "./yaml_subset.ts";
import { readYamlFull } from "./yaml_full.ts";
import { seededRandom } from "./seeded_random.ts";

/** The full reader's value, or undefined when it reports any error. */
function fullParse(text: string): { value: unknown } | undefined {
  try {
    const read = readYamlFull(text, { allowDuplicateKeys: false });
    return read.documents === 1 ? { value: read.value } : undefined;
  } catch {
    return undefined;
  }
}

/** Asserts the subset reader agrees with the full reader. */
function assertAgrees(text: string): unknown {
  const fast = parseYamlSubset(text);
  if (fast === UNSUPPORTED) return fast;
  const full = fullParse(text);
  assert.ok(full, `full reader rejects ${JSON.stringify(text)}`);
  assert.deepStrictEqual(fast, full.value, JSON.stringify(text));
  assert.equal(
    JSON.stringify(fast),
    JSON.stringify(full.value),
    `key order: ${JSON.stringify(text)}`,
  );
  return fast;
}

Deno.test("parseYamlSubset() reads the block style of config files", () => {
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
  assert.deepStrictEqual(assertAgrees(text), {
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

Deno.test("parseYamlSubset() reads JSON documents over several lines", () => {
  const doc = {
    kind: "KubeletConfiguration",
    maxPods: 20,
    nested: { list: [1, -2.5, true, null, 'x "q" \\ /'], empty: [] },
  };
  assert.deepStrictEqual(assertAgrees(JSON.stringify(doc, null, 2)), doc);
  assert.deepStrictEqual(assertAgrees(JSON.stringify(doc)), doc);
});

Deno.test("parseYamlSubset() leaves everything outside the subset to the full reader", () => {
  const cases = [
    "a: &x 1\nb: *x\n", // anchors and aliases
    "a: !!str 1\n", // tags
    "a: |\n  text\n", // block scalars
    "a: >\n  text\n",
    "a: one\n  two\n", // multi-line plain scalar
    'a: "one\n  two"\n', // multi-line quoted scalar
    "a: [1,\n 2]\n", // multi-line flow inside a block
    "a: 1\na: 2\n", // duplicate keys
    "a:\tb\n", // tabs
    "a: b\r\n", // CR
    "a: 1\n---\nb: 2\n", // several documents
    "%YAML 1.1\n---\na: 1\n",
    "? a\n: b\n", // complex key
    "<<: {a: 1}\n", // merge key
    "1: a\n", // non-string key
    "a: b: c\n", // error
    "a: 'x' y\n", // error
    "a:\n  b: 1\n c: 2\n", // bad indentation
    "just a scalar\n",
    "",
    "# only a comment\n",
    'a: "\\x41"\n', // escapes outside the simple set
    "{a:1}\n", // one plain scalar in flow context
    "[a, b,]\n", // trailing comma
    '{"a": 1} x\n',
    "__proto__: 1\n",
    "a: b\u00a0\n", // no-break space
  ];
  for (const text of cases) {
    assert.equal(parseYamlSubset(text), UNSUPPORTED, JSON.stringify(text));
  }
});

Deno.test("parseYamlSubset() resolves plain scalars like go-yaml v2", () => {
  const cases: Array<[string, unknown]> = [
    ["yes", true],
    ["On", true],
    ["n", false],
    ["0777", 511],
    ["1e3", 1000],
    ["0x1F", 31],
    ["~", null],
    ["10Mi", "10Mi"],
  ];
  for (const [text, value] of cases) {
    assert.deepStrictEqual(assertAgrees(`k: ${text}\n`), { k: value }, text);
  }
});

const SCALARS: unknown[] = [
  "plain",
  "two words",
  "",
  "10Mi",
  "0.0.0.0",
  "a:b",
  "a: b",
  "a #b",
  "a#b",
  "-x",
  "- x",
  "'q'",
  '"dq"',
  "yes",
  "No",
  "null",
  "~",
  "123",
  "0123",
  "1e5",
  "1.5",
  ".inf",
  "2001-01-01",
  "1:30",
  "@at",
  "%pc",
  "*star",
  "&amp",
  "!bang",
  "[x]",
  "{x}",
  "x,y",
  "tab\there",
  "line\nbreak",
  "é ü 🧪",
  "back\\slash",
  0,
  7,
  -3,
  2.5,
  -0.125,
  true,
  false,
  null,
];

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)] as T;
}

function randomValue(rand: () => number, depth: number): unknown {
  const roll = rand();
  if (depth > 3 || roll < 0.5) return pick(rand, SCALARS);
  if (roll < 0.75) {
    const out: Record<string, unknown> = {};
    const n = Math.floor(rand() * 4);
    for (let i = 0; i < n; i++) {
      out[String(pick(rand, SCALARS)) || "k"] = randomValue(rand, depth + 1);
    }
    return out;
  }
  return Array.from(
    { length: Math.floor(rand() * 4) },
    () => randomValue(rand, depth + 1),
  );
}

const MUTATIONS = [
  " ",
  "  ",
  "\n",
  "-",
  ":",
  "#",
  "'",
  '"',
  "[",
  "]",
  "{",
  "}",
  ",",
  "&a",
  "*a",
  "!",
  "|",
  "?",
  "---\n",
  "\t",
];

Deno.test("parseYamlSubset() agrees with the full reader on 4000 generated documents", () => {
  const rand = seededRandom(20261202);
  let fast = 0;
  for (let i = 0; i < 4000; i++) {
    const value = {
      root: randomValue(rand, 0),
      [`k${i}`]: pick(rand, SCALARS),
    };
    const style = rand();
    let text = style < 0.2
      ? JSON.stringify(value, null, rand() < 0.5 ? 2 : 0)
      : stringify(value, {
        indentSeq: rand() < 0.5,
        indent: rand() < 0.8 ? 2 : 4,
        collectionStyle: rand() < 0.2 ? "flow" : "any",
        defaultStringType: pick(
          rand,
          ["PLAIN", "QUOTE_DOUBLE", "QUOTE_SINGLE"] as const,
        ),
        defaultKeyType: rand() < 0.3 ? "PLAIN" : null,
        lineWidth: 0,
        version: rand() < 0.5 ? "1.1" : "1.2",
      });
    if (rand() < 0.4) {
      const at = Math.floor(rand() * (text.length + 1));
      text = text.slice(0, at) + pick(rand, MUTATIONS) + text.slice(at);
    }
    if (rand() < 0.15) text = `# header\n---\n${text}# footer\n`;
    if (assertAgrees(text) !== UNSUPPORTED) fast++;
  }
  // Most generated documents must stay on the fast path, or it is useless.
  assert.ok(fast > 1500, `only ${fast} of 4000 on the fast path`);
});

Deno.test("kubeadm-style manifests, kubeconfigs and configs take the fast path and agree", async () => {
  const files = [
    "./testdata/kube-apiserver.yaml",
    "./testdata/kubelet.conf",
    "../../tests/fixtures/kubeadm_config.yaml",
    "../../examples/kubelet-config.yaml",
    "../../examples/manifests/httpd.yaml",
    "../../examples/manifests/init.yaml",
  ];
  for (const file of files) {
    const text = await Deno.readTextFile(new URL(file, import.meta.url));
    const fast = assertAgrees(text);
    assert.notEqual(fast, UNSUPPORTED, `${file} is outside the subset`);
  }
});
