/**
 * Differences between kubelet.ts and the upstream kubelet that the differential scenarios
 * show and that we keep for now, each with its reason; docs/differences.md says the same in
 * prose. A difference that matches none of these fails the differential test.
 */
import type { Difference } from "./run.ts";

export interface KnownDifference {
  /** Scenario names it applies to (substring); every scenario when absent. */
  scenario?: string;
  /** Matches `Difference.what`: `lifecycle`, `sandbox` or `container <name>`. */
  what: RegExp;
  /** Matches `Difference.detail`, as a pattern or a test. */
  detail: RegExp | ((detail: string) => boolean);
  why: string;
}

/** The two lifecycles of a `lifecycle` difference, or undefined for another detail. */
function lifecycles(
  detail: string,
): { ours: string[]; upstream: string[] } | undefined {
  const m = /^ours \[(.*)\] ≠ upstream \[(.*)\]$/.exec(detail);
  if (!m) return undefined;
  const steps = (s: string) => s === "" ? [] : s.split(", ");
  return { ours: steps(m[1]!), upstream: steps(m[2]!) };
}

/** A lifecycle without its RemoveContainer steps, repeats in a row counted once. */
function withoutRemovals(steps: string[]): string[] {
  const out: string[] = [];
  for (const s of steps) {
    if (!s.startsWith("RemoveContainer ") && out[out.length - 1] !== s) {
      out.push(s);
    }
  }
  return out;
}

/** True when the lifecycles differ only in when (or whether) exited containers were removed. */
function onlyRemovals(detail: string): boolean {
  const l = lifecycles(detail);
  return l !== undefined &&
    withoutRemovals(l.ours).join("\n") ===
      withoutRemovals(l.upstream).join("\n");
}

/**
 * True when, removals aside, one side only went further in the same crash loop: the longer
 * lifecycle starts with the shorter one and adds nothing but restarts.
 */
function onlyMoreRestarts(detail: string): boolean {
  const l = lifecycles(detail);
  if (!l) return false;
  const [a, b] = [withoutRemovals(l.ours), withoutRemovals(l.upstream)];
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.every((s, i) => long[i] === s) &&
    long.slice(short.length).every((s) =>
      s.startsWith("CreateContainer ") || s.startsWith("StartContainer ")
    );
}

/**
 * True when two container mount lists differ only in where a subPath's host path points:
 * upstream's bind mount `<pod>/volume-subpaths/<volume>/<container>/<index>`, kubelet.ts's
 * resolved path inside the volume `<pod>/volumes/<plugin>/<volume>/<subPath>`.
 */
function onlySubPathSources(detail: string): boolean {
  const m = /^mounts: (\[.*\]) ≠ (\[.*\])$/.exec(detail);
  if (!m) return false;
  const norm = (json: string) =>
    (JSON.parse(json) as { hostPath?: string }[]).map((mount) => ({
      ...mount,
      hostPath: (mount.hostPath ?? "")
        .replace(/\/volume-subpaths\/([^/]+)\/[^/]+\/\d+$/, "/subpath:$1")
        .replace(
          /\/volumes\/kubernetes\.io~[^/]+\/([^/]+)\/.+$/,
          "/subpath:$1",
        ),
    }));
  return JSON.stringify(norm(m[1]!)) === JSON.stringify(norm(m[2]!));
}

/** The two JSON values of a `field: a ≠ b` detail for `field`, or undefined. */
function sides(
  detail: string,
  field: string,
): { ours: unknown; upstream: unknown } | undefined {
  const prefix = `${field}: `;
  if (!detail.startsWith(prefix)) return undefined;
  // the values are JSON, so " ≠ " splits them unless a string holds it
  const parts = detail.slice(prefix.length).split(" ≠ ");
  if (parts.length !== 2) return undefined;
  const parse = (s: string) => s === "(absent)" ? undefined : JSON.parse(s);
  return { ours: parse(parts[0]!), upstream: parse(parts[1]!) };
}

type Env = { key: string; value: string };
const sortedEnv = (l: unknown) =>
  JSON.stringify(
    [...(l as Env[] ?? [])].sort((a, b) => a.key.localeCompare(b.key)),
  );

/** True when two env lists hold the same variables in another order. */
function onlyEnvOrder(detail: string): boolean {
  const v = sides(detail, "envs");
  return v !== undefined && sortedEnv(v.ours) === sortedEnv(v.upstream);
}

export const KNOWN_DIFFERENCES: KnownDifference[] = [
  {
    what: /^container /,
    detail: onlyEnvOrder,
    why:
      "env order: upstream collects envFrom and env into a Go map and appends it, then the service variables from another map, so their order changes from run to run; kubelet.ts keeps declaration order (envFrom, then env, then services)",
  },
  {
    scenario: "volumes",
    what: /^container /,
    detail: onlySubPathSources,
    why:
      "a subPath's host path: upstream bind-mounts an O_NOFOLLOW descriptor of it under volume-subpaths/; kubelet.ts cannot mount and hands the runtime the resolved path inside the volume, started only while no container can change it (docs/volumes.md)",
  },
  {
    what: /^lifecycle$/,
    detail: onlyRemovals,
    why:
      "upstream removes exited containers as soon as PLEG reports them dead, keeping the newest one of a running pod and none of a deleted pod (pod_container_deletor); kubelet.ts leaves them to container GC",
  },
  {
    scenario: "crash loop",
    what: /^lifecycle$/,
    detail: onlyMoreRestarts,
    why:
      "kubelet.ts restarts a crash-looping container when its back-off expires; upstream retries at the pod worker's next requeue, 10–15 s (jittered) after the sync that hit the back-off, so its restarts come later and a fixed window holds fewer of them",
  },
];

/** The reason a difference is kept, or undefined when it is new. */
export function explain(scenario: string, d: Difference): string | undefined {
  return KNOWN_DIFFERENCES.find((k) =>
    (k.scenario === undefined || scenario.includes(k.scenario)) &&
    k.what.test(d.what) &&
    (typeof k.detail === "function"
      ? k.detail(d.detail)
      : k.detail.test(d.detail))
  )?.why;
}
