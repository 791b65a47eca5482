/**
 * Pure readers for tests/cluster/kubectl_top_test.ts: `kubectl top` tables and the metric
 * families of a Prometheus text exposition with their label names.
 */

/** One `kubectl top` row's figures; `cpuMillis` undefined for `<unknown>`. */
export interface TopRow {
  cpuMillis?: number;
  memoryBytes?: number;
}

const UNITS: Record<string, number> = {
  "": 1,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
};

function cpu(text: string | undefined): number | undefined {
  const m = /^(\d+)(m?)$/.exec(text ?? "");
  if (!m) return undefined;
  return m[2] ? Number(m[1]) : Number(m[1]) * 1000;
}

function memory(text: string | undefined): number | undefined {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(text ?? "");
  return m ? Number(m[1]) * UNITS[m[2] ?? ""]! : undefined;
}

function rows(text: string): string[][] {
  return text.trim().split("\n").slice(1).map((l) => l.trim().split(/\s+/));
}

/** `kubectl top node`: node name → figures. */
export function parseTopNodes(text: string): Map<string, TopRow> {
  const out = new Map<string, TopRow>();
  for (const [name, c, , m] of rows(text)) {
    if (!name) continue;
    const row: TopRow = {};
    const cm = cpu(c);
    const mb = memory(m);
    if (cm !== undefined) row.cpuMillis = cm;
    if (mb !== undefined) row.memoryBytes = mb;
    out.set(name, row);
  }
  return out;
}

/** `kubectl top pod -A`: `namespace/name` → figures (rows without both are left out). */
export function parseTopPods(
  text: string,
): Map<string, Required<TopRow>> {
  const out = new Map<string, Required<TopRow>>();
  for (const [ns, name, c, m] of rows(text)) {
    const cpuMillis = cpu(c);
    const memoryBytes = memory(m);
    if (cpuMillis === undefined || memoryBytes === undefined) continue;
    out.set(`${ns}/${name}`, { cpuMillis, memoryBytes });
  }
  return out;
}

/**
 * Each family with a sample → the sorted label-name sets its samples carry (one entry per
 * distinct set, each `a,b,c`), from the sample lines themselves.
 */
export function familyLabels(text: string): Map<string, string[]> {
  const sets = new Map<string, Set<string>>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s/.exec(line);
    if (!m) continue;
    const names = [...(m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)]
      .map((x) => x[1]!).sort().join(",");
    const set = sets.get(m[1]!) ?? new Set<string>();
    set.add(names);
    sets.set(m[1]!, set);
  }
  return new Map(
    [...sets].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map((
      [f, s],
    ) => [f, [...s].sort()]),
  );
}
