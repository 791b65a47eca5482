import assert from "node:assert/strict";
import { parseAllDocuments, stringify } from "yaml";
import {
  parseYamlStreamSubset,
  parseYamlSubset,
  resolvePlainScalar,
  UNSUPPORTED,
} from "./yaml_subset.ts";
import { seededRandom } from "./seeded_random.ts";

type Mode = "1.1" | "1.1-go" | "1.2";

/** The full parser's reading, or undefined when it reports any error. */
function fullParse(text: string, mode: Mode): { value: unknown } | undefined {
  const docs = parseAllDocuments(text, {
    uniqueKeys: true,
    strict: false,
    version: mode === "1.2" ? "1.2" : "1.1",
    ...(mode === "1.1-go"
      ? {
        customTags: (tags) =>
          tags.filter((t) =>
            typeof t === "string" ||
            (t.tag !== "tag:yaml.org,2002:timestamp" &&
              (t as { format?: string }).format !== "TIME")
          ),
      }
      : {}),
  });
  if (!Array.isArray(docs) || docs.length !== 1) return undefined;
  const doc = docs[0]!;
  if (doc.errors.length > 0) return undefined;
  return { value: doc.toJS({ maxAliasCount: 100 }) };
}

/** Asserts the subset reader agrees with the full parser in every mode. */
function assertAgrees(text: string): unknown {
  const fast = parseYamlSubset(text);
  if (fast === UNSUPPORTED) return fast;
  for (const mode of ["1.1", "1.1-go", "1.2"] as const) {
    const full = fullParse(text, mode);
    assert.ok(full, `full parser (${mode}) rejects ${JSON.stringify(text)}`);
    assert.deepStrictEqual(
      fast,
      full.value,
      `${mode}: ${JSON.stringify(text)}`,
    );
    assert.equal(
      JSON.stringify(fast),
      JSON.stringify(full.value),
      `key order (${mode}): ${JSON.stringify(text)}`,
    );
  }
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

Deno.test("parseYamlSubset() leaves everything outside the subset to the full parser", () => {
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
    "a: yes\n", // YAML 1.1 boolean, a string in 1.2
    "a: 0777\n", // octal in 1.1
    "a: 1e3\n", // a float in 1.2, a string in 1.1
    "a: 1_000\n",
    "a: .inf\n",
    "a: 1:20\n", // sexagesimal
    "a: 2001-12-14\n", // timestamp
    "a: -0\n",
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
    "a: 9007199254740993\n", // beyond a double's integer precision
    "__proto__: 1\n",
    "a: b\u00a0\n", // no-break space
  ];
  for (const text of cases) {
    assert.equal(parseYamlSubset(text), UNSUPPORTED, JSON.stringify(text));
  }
});

Deno.test("resolvePlainScalar() answers only where YAML 1.1 and 1.2 agree", () => {
  const agreed: Array<[string, unknown]> = [
    ["", null],
    ["~", null],
    ["Null", null],
    ["true", true],
    ["FALSE", false],
    ["0", 0],
    ["-42", -42],
    ["3.25", 3.25],
    ["10Mi", "10Mi"],
    ["1m0s", "1m0s"],
    ["127.0.0.1", "127.0.0.1"],
    [
      "unix:///run/containerd/containerd.sock",
      "unix:///run/containerd/containerd.sock",
    ],
  ];
  for (const [text, value] of agreed) {
    assert.equal(resolvePlainScalar(text), value, text);
    assert.deepStrictEqual(assertAgrees(`k: ${text}\n`), { k: value });
  }
  for (
    const text of [
      "y",
      "On",
      "OFF",
      "012",
      "0x1F",
      "0o17",
      "+1",
      ".5",
      "1.",
      "6e2",
      "e5",
      "E3",
    ]
  ) {
    assert.equal(resolvePlainScalar(text), undefined, text);
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

Deno.test("parseYamlSubset() agrees with the full parser on 4000 generated documents", () => {
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

/** The full parser's reading of a stream, or undefined on any error. */
function fullStream(text: string): unknown[] | undefined {
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  if (list.some((d) => d.errors.length > 0)) return undefined;
  return list.map((d) => d.toJS({ maxAliasCount: 100 }));
}

Deno.test("parseYamlStreamSubset() splits documents like the full parser", () => {
  const cases: Array<[string, unknown[]]> = [
    ["", []],
    ["# only a comment\n", []],
    ["a: 1\n", [{ a: 1 }]],
    ["---\na: 1\n", [{ a: 1 }]],
    ["# c\n---\na: 1\n", [{ a: 1 }]],
    ["a: 1\n---\n", [{ a: 1 }, null]],
    ["---\n---\na: 1\n", [null, { a: 1 }]],
    ["a: 1\n--- # next\n# nothing\n---\nb: [2]\n", [{ a: 1 }, null, {
      b: [2],
    }]],
  ];
  for (const [text, expected] of cases) {
    assert.deepStrictEqual(parseYamlStreamSubset(text), expected, text);
    assert.deepStrictEqual(fullStream(text), expected, text);
  }
  for (
    const text of [
      "a: 1\n...\n",
      "--- a: 1\n",
      "a: 1\n---\nb: &x 1\n",
      "a:\t1\n---\n",
    ]
  ) {
    assert.equal(parseYamlStreamSubset(text), UNSUPPORTED, text);
  }
});

Deno.test("parseYamlStreamSubset() agrees with the full parser on 1500 generated streams", () => {
  const rand = seededRandom(99);
  let fast = 0;
  for (let i = 0; i < 1500; i++) {
    const parts: string[] = [];
    const n = 1 + Math.floor(rand() * 4);
    for (let d = 0; d < n; d++) {
      const roll = rand();
      parts.push(
        roll < 0.15
          ? "# empty\n"
          : stringify({ doc: d, v: randomValue(rand, 1) }, { lineWidth: 0 }),
      );
    }
    const separator = rand() < 0.8 ? "---\n" : "--- # sep\n";
    let text = (rand() < 0.3 ? separator : "") + parts.join(separator);
    if (rand() < 0.2) text += separator;
    const mine = parseYamlStreamSubset(text);
    if (mine === UNSUPPORTED) continue;
    fast++;
    const full = fullStream(text);
    assert.ok(full, `full parser rejects ${JSON.stringify(text)}`);
    assert.deepStrictEqual(mine, full, JSON.stringify(text));
  }
  assert.ok(fast > 500, `only ${fast} of 1500 streams on the fast path`);
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
    const fast = parseYamlStreamSubset(text);
    assert.notEqual(fast, UNSUPPORTED, `${file} is outside the subset`);
    assert.deepStrictEqual(fast, fullStream(text), file);
  }
});
