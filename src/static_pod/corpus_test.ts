import assert from "node:assert/strict";
import {
  compareCase,
  type OracleAnswer,
} from "../../scripts/static_pod_fuzz/compare.ts";
import type { FuzzCase } from "../../scripts/static_pod_fuzz/cases.ts";

// Cases of the differential fuzz (every pod field family accepted and refused) with upstream's answers, recorded by
// `deno task fuzz-static --record` (the oracle is upstream's own kubelet code), so CI checks
// decoding, defaults, validation and UIDs without Go.
const corpus = Deno.readTextFileSync(
  new URL("./testdata/corpus.jsonl", import.meta.url),
).trim().split("\n").map((line) =>
  JSON.parse(line) as { case: FuzzCase; answer: OracleAnswer }
);

Deno.test("readManifest() agrees with upstream's kubelet on the recorded corpus", async () => {
  assert.ok(corpus.length >= 50);
  const problems: string[] = [];
  for (const [i, { case: c, answer }] of corpus.entries()) {
    const cmp = await compareCase(c, answer);
    if (cmp.mismatches.length) {
      problems.push(`#${i} ${c.label}: ${cmp.mismatches.join("; ")}`);
    }
    // each validation error's type, path and detail text are upstream's too
    if (cmp.detailsIdentical === false) {
      problems.push(
        `#${i} ${c.label}: ours ${cmp.ours}, upstream ${answer.error}`,
      );
    }
  }
  assert.deepEqual(problems, []);
  const accepted = corpus.filter((e) => e.answer.ok).length;
  // the corpus holds both accepted and refused manifests
  assert.ok(accepted > 10 && accepted < corpus.length - 10, `${accepted}`);
});
