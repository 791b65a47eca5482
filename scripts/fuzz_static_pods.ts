/**
 * Differential fuzz of kubelet.ts's static pod reading against upstream's (the Go oracle in
 * peers/staticpod, built by `bash scripts/peers.sh static-oracle`).
 *
 *   deno task fuzz-static [--count N] [--seed S] [--show K] [--texts] [--record]
 *
 * --texts also shows validation refusals whose error text differs from upstream's.
 *
 * --record rewrites the committed corpus (src/static_pod/testdata/corpus.jsonl: the first 60
 * cases and, for each pod field family, its first accepted and first refused case, with the
 * oracle's answers), which `corpus_test.ts` replays in CI without Go.
 *
 * @module
 */

// deno-lint-ignore-file no-console -- a command-line tool reporting on the terminal

import { generateCases } from "./static_pod_fuzz/cases.ts";
import { compareCase, type OracleAnswer } from "./static_pod_fuzz/compare.ts";

const args = Deno.args;
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const count = flag("--count", 5000);
const seed = flag("--seed", 1);
const show = flag("--show", 10);
const record = args.includes("--record");

const here = new URL("..", import.meta.url).pathname;
const built = await new Deno.Command("bash", {
  args: [`${here}scripts/peers.sh`, "static-oracle"],
  stdout: "piped",
  stderr: "inherit",
}).output();
if (!built.success) {
  console.error(
    "cannot build the static pod oracle (bash scripts/peers.sh static-oracle)",
  );
  Deno.exit(1);
}
const oracle = new TextDecoder().decode(built.stdout).trim();

const cases = generateCases(count, seed);
const input = cases.map((c) =>
  JSON.stringify({
    data: c.data,
    source: c.source,
    path: c.path,
    node: c.node,
  })
).join("\n") + "\n";
const child = new Deno.Command(oracle, {
  args: ["batch"],
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const writer = child.stdin.getWriter();
const output = child.output();
await writer.write(new TextEncoder().encode(input));
await writer.close();
const result = await output;
if (!result.success) {
  console.error("the static pod oracle failed");
  Deno.exit(1);
}
const answers = new TextDecoder().decode(result.stdout).trim().split("\n").map(
  (l) => JSON.parse(l) as OracleAnswer,
);

let accepted = 0;
let mismatched = 0;
let messageDiffers = 0;
let bothValidation = 0;
let sameDetails = 0;
let sameText = 0;
const detailShown: string[] = [];
const classes = new Map<string, number>();
const kinds = new Map<string, number>();
const shown: string[] = [];
for (let i = 0; i < cases.length; i++) {
  const c = cases[i]!;
  const a = answers[i]!;
  if (a.ok) accepted++;
  else classes.set(a.class!, (classes.get(a.class!) ?? 0) + 1);
  const cmp = await compareCase(c, a);
  if (cmp.messageDiffers) messageDiffers++;
  if (cmp.detailsIdentical !== undefined) {
    bothValidation++;
    if (cmp.detailsIdentical) sameDetails++;
    if (cmp.textIdentical) sameText++;
    else if (detailShown.length < show) {
      detailShown.push(
        `#${i} ${c.label}\n  upstream: ${a.error}\n  ours:     ${cmp.ours}`,
      );
    }
  }
  if (cmp.mismatches.length > 0) {
    mismatched++;
    for (const m of cmp.mismatches) {
      const kind = m.slice(0, m.indexOf(":"));
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    if (shown.length < show) {
      shown.push(`#${i} ${c.label}\n  ${cmp.mismatches.join("\n  ")}`);
    }
  }
}

if (record) {
  // the first 60 cases, then for each pod field family its first accepted and first refused
  const chosen = new Set(cases.slice(0, 60).map((_c, i) => i));
  const seen = new Set<string>();
  cases.forEach((c, i) => {
    for (const family of c.label.matchAll(/pod family (\w+)/g)) {
      const key = `${family[1]} ${answers[i]!.ok}`;
      if (!seen.has(key)) {
        seen.add(key);
        chosen.add(i);
      }
    }
  });
  const corpus = [...chosen].sort((a, b) => a - b).map((i) =>
    JSON.stringify({
      case: cases[i]!,
      answer: { ...answers[i]!, hashed: undefined },
    })
  ).join("\n") + "\n";
  await Deno.writeTextFile(
    `${here}src/static_pod/testdata/corpus.jsonl`,
    corpus,
  );
}

for (const s of shown) console.log(s);
if (args.includes("--texts")) { for (const s of detailShown) console.log(s); }
const pct = (n: number) =>
  bothValidation ? (100 * n / bothValidation).toFixed(1) : "100.0";
console.log(
  `static pod fuzz: ${cases.length} manifests (seed ${seed}), upstream accepted ${accepted}, refused ${
    cases.length - accepted
  } (${
    [...classes].map(([k, v]) => `${k} ${v}`).join(", ")
  }); mismatches ${mismatched} (${
    [...kinds].map(([k, v]) => `${k} ${v}`).join(", ")
  }); same class, other message: ${messageDiffers}; validation refusals ${bothValidation}: identical error details ${sameDetails} (${
    pct(sameDetails)
  }%), identical error text ${sameText} (${pct(sameText)}%)`,
);
if (mismatched > 0) Deno.exitCode = 1;
