/**
 * Pieces the side-by-side benches against the upstream kubelet share: finding the peer
 * binaries, percentiles and a process's CPU time and RSS from /proc.
 */

const CLK_TCK = 100;

/** The peers' bin directory (`scripts/peers.sh dir`), undefined when they are not built. */
export async function peersBin(): Promise<string | undefined> {
  const out = await new Deno.Command("bash", {
    args: [new URL("../scripts/peers.sh", import.meta.url).pathname, "dir"],
    stderr: "null",
  }).output();
  return out.code === 0
    ? new TextDecoder().decode(out.stdout).trim()
    : undefined;
}

/**
 * The peers' bin directory for a bench that runs both kubelets; without root or the peers
 * the bench says why and ends (exit 0, so a bench task on a bare machine skips it).
 */
export async function peersBinOrSkip(): Promise<string> {
  const found = Deno.uid() === 0 ? await peersBin() : undefined;
  if (found !== undefined) return found;
  // deno-lint-ignore no-console
  console.log(
    "skipped: needs root and the peer binaries (bash scripts/peers.sh build)",
  );
  Deno.exit(0);
}

/** The `p`th percentile (nearest rank) of `values`. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** utime + stime of a process in seconds, and its RSS in MiB. */
export async function usage(
  pid: number,
): Promise<{ cpu: number; rssMiB: number }> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const cpu = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  return { cpu, rssMiB: rss };
}

/** CPU seconds all cores have spent outside idle and iowait since boot (`/proc/stat`). */
export async function machineCpu(): Promise<number> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0]!;
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = line
    .trim().split(/\s+/).slice(1).map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / CLK_TCK;
}
