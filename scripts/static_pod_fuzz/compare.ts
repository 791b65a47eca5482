/**
 * Compares kubelet.ts's reading of a manifest with the oracle's answer (upstream's kubelet
 * code): accept/reject, failure class, validation error fields, UID, and the defaulted pod.
 *
 * @module
 */

import { readManifest } from "../../src/static_pod/mod.ts";
import type { FuzzCase } from "./cases.ts";

/** The oracle's JSON line for one case. */
export interface OracleAnswer {
  ok: boolean;
  class?: string;
  error?: string;
  fields?: { type: string; field: string; detail: string }[];
  uids?: string[];
  hashed?: string[];
  pods?: Record<string, unknown>[];
}

/** How one case compared. */
export interface Comparison {
  /** Empty when kubelet.ts agrees with the oracle. */
  mismatches: string[];
  /** Same class but another message (not counted as a mismatch). */
  messageDiffers: boolean;
  /** For a pod both refuse in validation: each error's type, field and detail as upstream's. */
  detailsIdentical?: boolean | undefined;
  /** For a pod both refuse in validation: the whole error text as upstream prints it. */
  textIdentical?: boolean | undefined;
  /** Our error text. */
  ours?: string | undefined;
}

/** Drops empty values (Go's omitempty and the oracle's null timestamps) for a fair compare. */
function prune(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(prune);
    return items.length ? items : undefined;
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = prune((value as Record<string, unknown>)[k]);
      if (v !== undefined) out[k] = v;
    }
    return Object.keys(out).length ? out : undefined;
  }
  if (value === null || value === "" || value === false || value === 0) {
    return undefined;
  }
  return value;
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at ${i}: ours …${a.slice(Math.max(0, i - 60), i + 60)}… upstream …${
    b.slice(Math.max(0, i - 60), i + 60)
  }…`;
}

/** Runs kubelet.ts on `c` and compares with `answer`. */
export async function compareCase(
  c: FuzzCase,
  answer: OracleAnswer,
): Promise<Comparison> {
  const ours = await readManifest(c.data, {
    source: c.source === "url" ? "http" : "file",
    origin: c.path,
    nodeName: c.node,
  });
  const mismatches: string[] = [];
  let messageDiffers = false;
  let detailsIdentical: boolean | undefined;
  let textIdentical: boolean | undefined;
  if (ours.ok !== answer.ok) {
    mismatches.push(
      `accept: ours ${
        ours.ok ? "accepted" : `refused (${ours.class}: ${ours.message})`
      }, upstream ${
        answer.ok ? "accepted" : `refused (${answer.class}: ${answer.error})`
      }`,
    );
  } else if (!ours.ok && !answer.ok) {
    if (ours.class !== answer.class) {
      mismatches.push(
        `class: ours ${ours.class} (${ours.message}), upstream ${answer.class} (${answer.error})`,
      );
    } else if (ours.class === "validation") {
      const a = (ours.fields ?? []).map((f) => `${f.type} ${f.field}`).sort();
      const b = (answer.fields ?? []).map((f) => `${f.type} ${f.field}`)
        .sort();
      if (a.join("\n") !== b.join("\n")) {
        mismatches.push(
          `validation fields: ours [${a.join(", ")}], upstream [${
            b.join(", ")
          }]`,
        );
      }
      const full = (f: { type: string; field: string; detail: string }) =>
        `${f.type} ${f.field} ${f.detail}`;
      const x = (ours.fields ?? []).map(full).sort().join("\n");
      const y = (answer.fields ?? []).map(full).sort().join("\n");
      detailsIdentical = x === y;
      textIdentical = ours.message === answer.error;
    }
    if (!answer.error?.includes(ours.message)) messageDiffers = true;
  } else if (ours.ok && answer.ok) {
    const uids = ours.pods.map((p) =>
      (p.metadata as Record<string, unknown>).uid
    );
    if (JSON.stringify(uids) !== JSON.stringify(answer.uids ?? [])) {
      const h = firstDifference(ours.hashed[0] ?? "", answer.hashed?.[0] ?? "");
      mismatches.push(`uid: ${h}`);
    }
    const mine = ours.pods.map((p) => {
      const copy = structuredClone(p);
      const ann = (copy.metadata as Record<string, unknown>).annotations as
        | Record<string, unknown>
        | undefined;
      delete ann?.["kubernetes.io/config.source"];
      return prune(copy);
    });
    const theirs = (answer.pods ?? []).map(prune);
    const x = JSON.stringify(mine);
    const y = JSON.stringify(theirs);
    if (x !== y) mismatches.push(`pod: ${firstDifference(x, y)}`);
  }
  return {
    mismatches,
    messageDiffers,
    detailsIdentical,
    textIdentical,
    ours: ours.ok ? undefined : ours.message,
  };
}
