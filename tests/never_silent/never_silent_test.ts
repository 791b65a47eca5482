/**
 * Nothing silently ignored: every config field and pod field has a verdict row, and each row's
 * evidence holds (the honouring module mentions the field; the refusal test exists).
 */
import assert from "node:assert/strict";
import { KubeletConfigurationSchema } from "../../src/config/schema.ts";
import { NOT_CARRIED_OUT } from "../../src/cli/unhonoured_settings.ts";
import {
  CONFIG_VERDICTS,
  type FieldVerdict,
  POD_VERDICTS,
} from "./field_verdicts.ts";
import { V1_34_POD_FIELDS } from "./v1_34_pod_fields.ts";

const ROOT = new URL("../../", import.meta.url);
const GENERIC_REFUSAL =
  "src/cli/unhonoured_settings_test.ts: changedIgnoredSettings(): each field no part reads warns once set away from its default";

function read(path: string): string {
  return Deno.readTextFileSync(new URL(path, ROOT));
}

/** The problems of `rows` against the fields they must cover, none when all hold. */
function problems(rows: readonly FieldVerdict[], fields: readonly string[]) {
  const out: string[] = [];
  const byField = new Map(rows.map((r) => [r[0], r]));
  for (const field of fields) {
    if (!byField.has(field)) {
      out.push(`${field}: no row (honoured | refused | no-op upstream too)`);
    }
  }
  for (const [field, verdict, evidence] of rows) {
    if (!fields.includes(field)) out.push(`${field}: row for no such field`);
    const name = field.slice(field.lastIndexOf(".") + 1);
    if (verdict === "honoured") {
      if (!read(evidence).includes(name)) {
        out.push(`${field}: ${evidence} does not mention ${name}`);
      }
    } else if (verdict === "refused") {
      const at = evidence.indexOf(": ");
      const [file, test] = [evidence.slice(0, at), evidence.slice(at + 2)];
      const text = read(file);
      if (at < 0 || !text.includes(test)) {
        out.push(`${field}: no test "${test}" in ${file}`);
      }
      if (evidence === GENERIC_REFUSAL) {
        if (!(NOT_CARRIED_OUT as readonly string[]).includes(field)) {
          out.push(`${field}: not in NOT_CARRIED_OUT`);
        }
      } else if (!text.includes(name)) {
        out.push(`${field}: ${file} never mentions ${name}`);
      }
    } else if (evidence.trim().length < 10) {
      out.push(`${field}: say why upstream does not act on it either`);
    }
  }
  return out;
}

Deno.test("every KubeletConfiguration field is honoured, refused, or a no-op upstream too", () => {
  const fields = Object.keys(KubeletConfigurationSchema.shape);
  assert.equal(fields.length, 125);
  assert.deepEqual(problems(CONFIG_VERDICTS, fields), []);
});

Deno.test("every v1.34 pod spec, container and security context field is honoured, refused, or a no-op upstream too", () => {
  assert.deepEqual(problems(POD_VERDICTS, V1_34_POD_FIELDS), []);
});

Deno.test("the check fails on a new field without a row, and on evidence that does not hold", () => {
  assert.deepEqual(problems([], ["apiVersion"]), [
    "apiVersion: no row (honoured | refused | no-op upstream too)",
  ]);
  assert.deepEqual(
    problems([["maxPods", "honoured", "src/cli/version.ts"]], ["maxPods"]),
    ["maxPods: src/cli/version.ts does not mention maxPods"],
  );
  assert.deepEqual(
    problems([["maxPods", "refused", GENERIC_REFUSAL]], ["maxPods"]),
    ["maxPods: not in NOT_CARRIED_OUT"],
  );
});
