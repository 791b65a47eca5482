/**
 * Test support for the config area: a deterministic generator of malformed
 * and mutated KubeletConfiguration documents (for fuzz tests and benches).
 * @module
 */
import { stringify } from "yaml";
import { seededRandom } from "../util/seeded_random.ts";
import { defaultKubeletConfiguration } from "./defaults.ts";

const ODD_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  1e308,
  "",
  "abc",
  "10Mi",
  "1e400",
  "5m",
  "-1s",
  "1h1h1h1h",
  "99999999999999h",
  "+-1",
  "/relative/../path",
  "./x",
  "🧪",
  [],
  ["a", 1, null],
  {},
  { nested: { deeper: [1, 2, 3] } },
];

/** One generated input: the text and how it was made. */
export interface FuzzInput {
  text: string;
  kind:
    | "type"
    | "unknown"
    | "duplicate"
    | "truncate"
    | "noise"
    | "alias"
    | "deep";
  /** For `type` mutations: the field path that was changed. */
  field?: string;
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)] as T;
}

function leafPaths(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return [prefix];
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return [prefix];
  return entries.flatMap(([k, v]) => leafPaths(v, [...prefix, k]));
}

/** Generates `count` mutated documents from the default document. */
export function generateFuzzInputs(count: number, seed = 1): FuzzInput[] {
  const rand = seededRandom(seed);
  const base = defaultKubeletConfiguration() as Record<string, unknown>;
  const paths = leafPaths(base).filter((p) =>
    p.length > 0 && p[0] !== "apiVersion" && p[0] !== "kind"
  );
  const baseText = stringify(base);
  const out: FuzzInput[] = [];
  for (let i = 0; i < count; i++) {
    const roll = rand();
    if (roll < 0.55) {
      const doc = structuredClone(base);
      const path = pick(rand, paths);
      let node = doc as Record<string, unknown>;
      for (const part of path.slice(0, -1)) {
        node = node[part] as Record<string, unknown>;
      }
      node[path[path.length - 1] as string] = structuredClone(
        pick(rand, ODD_VALUES),
      );
      out.push({
        text: JSON.stringify(doc),
        kind: "type",
        field: path.join("."),
      });
    } else if (roll < 0.65) {
      out.push({
        text: `${baseText}unknownField${i}: ${i}\n`,
        kind: "unknown",
      });
    } else if (roll < 0.72) {
      const line = pick(
        rand,
        baseText.split("\n").filter((l) => /^\w/.test(l)),
      );
      out.push({ text: `${baseText}${line}\n`, kind: "duplicate" });
    } else if (roll < 0.86) {
      const cut = Math.floor(rand() * baseText.length);
      out.push({ text: baseText.slice(0, cut), kind: "truncate" });
    } else if (roll < 0.9) {
      const depth = 10 + Math.floor(rand() * 20000);
      out.push({
        text: `${baseText}clusterDNS: ${"[".repeat(depth)}${
          "]".repeat(depth)
        }\n`,
        kind: "deep",
      });
    } else if (roll < 0.97) {
      const at = Math.floor(rand() * baseText.length);
      const junk = pick(rand, [
        "{",
        "]",
        ": :",
        "\t",
        "&a",
        "*b",
        "!!int",
        "'",
        '"',
        "\n  - ",
      ]);
      out.push({
        text: baseText.slice(0, at) + junk + baseText.slice(at),
        kind: "noise",
      });
    } else {
      const depth = 3 + Math.floor(rand() * 6);
      const lines = [
        "apiVersion: kubelet.config.k8s.io/v1beta1",
        "kind: KubeletConfiguration",
        "x0: &x0 [a, a, a, a, a, a, a, a]",
      ];
      for (let d = 1; d < depth; d++) {
        lines.push(`x${d}: &x${d} [${Array(8).fill(`*x${d - 1}`).join(", ")}]`);
      }
      out.push({ text: lines.join("\n") + "\n", kind: "alias" });
    }
  }
  return out;
}
