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

const NO_CGROUPS =
  "no pod cgroups, QoS or resource mapping yet: the runtime's defaults apply (docs/differences.md, resources)";

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

/** True when a `mounts` difference is only the upstream kubelet's /etc/hosts mount. */
function sameMountsBesidesEtcHosts(detail: string): boolean {
  const m = /^mounts: (.*) ≠ (.*)$/.exec(detail);
  if (!m) return false;
  const rest = (json: string) => {
    try {
      const mounts = JSON.parse(json) as { containerPath?: string }[];
      return JSON.stringify(
        mounts.filter((x) => x.containerPath !== "/etc/hosts"),
      );
    } catch {
      return undefined;
    }
  };
  const ours = rest(m[1]!);
  return ours !== undefined && ours === rest(m[2]!);
}

export const KNOWN_DIFFERENCES: KnownDifference[] = [
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
  {
    what: /^sandbox$/,
    detail: /^linux\.(cgroupParent|resources|overhead):/,
    why: NO_CGROUPS,
  },
  {
    what: /^container /,
    detail:
      /^linux\.resources\.(cpuPeriod|cpuShares|cpuQuota|hugepageLimits|oomScoreAdj|memoryLimitInBytes):/,
    why: NO_CGROUPS,
  },
  {
    what: /^sandbox$/,
    detail: /^dnsConfig:/,
    why:
      "the node's resolvConf is not passed to the pod syncer yet: pods get the runtime's DNS defaults",
  },
  {
    what: /^container /,
    detail: sameMountsBesidesEtcHosts,
    why:
      "no kubelet-managed /etc/hosts yet (hostAliases, pod hostname): the runtime's file is used",
  },
  {
    what: /^container /,
    detail: /^annotations\.io\.kubernetes\.container\.type:/,
    why:
      "kubelet.ts records a container's type (init, regular, ephemeral) on the container so that a restarted kubelet can tell them apart without the pod spec",
  },
  {
    what: /^container /,
    detail: /^linux\.securityContext\.runAsUser: \(absent\) ≠ \{\}$/,
    why:
      "upstream resolves the image's user (root here) through ImageStatus and sends it; kubelet.ts leaves the image's user to the runtime: the same uid",
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
