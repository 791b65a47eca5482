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

/**
 * True when the two lifecycles of a `lifecycle` difference are the same once the
 * RemoveContainer calls the upstream kubelet makes after a pod stopped are set aside.
 */
function onlyUpstreamRemovals(detail: string): boolean {
  const m = /^ours \[(.*)\] ≠ upstream \[(.*)\]$/.exec(detail);
  if (!m) return false;
  const ours = m[1]!.split(", ");
  const upstream = m[2]!.split(", ");
  const stop = upstream.lastIndexOf("StopPodSandbox");
  if (stop < 0) return false;
  const tail = upstream.slice(stop + 1);
  return tail.length > 0 &&
    tail.every((s) => s.startsWith("RemoveContainer ")) &&
    ours.join(", ") === upstream.slice(0, stop + 1).join(", ");
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
    detail: onlyUpstreamRemovals,
    why:
      "upstream removes a deleted pod's exited containers as soon as PLEG reports them dead (pod_container_deletor); kubelet.ts leaves them to container GC",
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
