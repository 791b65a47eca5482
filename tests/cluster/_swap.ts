/**
 * The runtime's view of a node as `scripts/swap.sh snapshot` prints it, and what changed
 * between two snapshots per pod: the check of the swap test that no container or sandbox was
 * created, removed or changed state when the other kubelet took the node over.
 */

/** One container (`C`) or sandbox (`S`) line of `scripts/swap.sh snapshot`. */
export interface RuntimeEntry {
  kind: "C" | "S";
  id: string;
  state: string;
  /** `<namespace>/<name>` of the pod. */
  pod: string;
  /** The container's name; `-` for a sandbox. */
  name: string;
  attempt: number;
}

/** Parses the snapshot text; a line that is not `C|S id state pod name attempt` is an error. */
export function parseSnapshot(text: string): RuntimeEntry[] {
  const entries: RuntimeEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const [kind, id, state, pod, name, attempt, ...rest] = line.trim().split(
      /\s+/,
    );
    if (
      (kind !== "C" && kind !== "S") || !id || !state || !pod || !name ||
      attempt === undefined || rest.length > 0
    ) {
      throw new Error(
        `scripts/swap.sh snapshot: cannot read line "${line}" (want: C|S <id> <state> <ns>/<pod> <container> <attempt>)`,
      );
    }
    entries.push({ kind, id, state, pod, name, attempt: Number(attempt) });
  }
  return entries;
}

/** One pod's runtime objects that differ between two snapshots. */
export interface PodChange {
  pod: string;
  /** In `before` only, or with another state there: `C <id> <state> <name>`. */
  gone: string[];
  /** In `after` only, or with another state there. */
  added: string[];
}

function key(e: RuntimeEntry): string {
  return `${e.kind} ${e.id} ${e.state} ${e.name}`;
}

/** The pods of `pods` whose containers or sandboxes are not the same in both snapshots. */
export function changedPods(
  before: RuntimeEntry[],
  after: RuntimeEntry[],
  pods: readonly string[],
): PodChange[] {
  const changes: PodChange[] = [];
  for (const pod of pods) {
    const was = new Set(before.filter((e) => e.pod === pod).map(key));
    const is = new Set(after.filter((e) => e.pod === pod).map(key));
    const gone = [...was].filter((k) => !is.has(k));
    const added = [...is].filter((k) => !was.has(k));
    if (gone.length || added.length) changes.push({ pod, gone, added });
  }
  return changes;
}
