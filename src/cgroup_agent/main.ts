/**
 * `deno run -A src/cgroup_agent/main.ts [--socket=<path>] [--cgroup-root=<name>]
 * [--cgroup-driver=cgroupfs|systemd] [--reserved-cgroup=<name>]…`
 *
 * The cgroup agent: the one process of kubelet.ts that holds every Deno permission, because
 * Deno opens /sys and /proc only then. It serves the kubelet (which runs with its planned
 * lists) exactly the cgroup operations `validate.ts` allows, below `<cgroup-root>/kubepods`
 * and on the reserved cgroups (with the systemd driver also their slice units), on a unix socket in the kubelet's root dir
 * (docs/permissions.md, "The cgroup agent"). Runs until SIGTERM or SIGINT.
 *
 * @module
 */

import { serveCgroupAgent } from "./agent.ts";
import { cgroupAgentSocket } from "./validate.ts";
import { errorMessage } from "../util/error_message.ts";

const USAGE =
  "usage: cgroup-agent [--socket=/var/lib/kubelet/cgroup-agent.sock] [--cgroup-root=/] [--cgroup-driver=cgroupfs|systemd] [--reserved-cgroup=<name>]...";

/** The agent's flags; an unknown flag is an error naming the usage. */
export function parseAgentArgs(
  args: readonly string[],
): {
  socket: string;
  cgroupRoot: string;
  cgroupDriver: "cgroupfs" | "systemd";
  reservedCgroups: string[];
} {
  let socket = cgroupAgentSocket("/var/lib/kubelet");
  let cgroupRoot = "/";
  let cgroupDriver: "cgroupfs" | "systemd" = "cgroupfs";
  const reservedCgroups: string[] = [];
  for (const arg of args) {
    const m = /^--([a-z-]+)=(.*)$/.exec(arg);
    if (m?.[1] === "socket" && m[2]!.startsWith("/")) socket = m[2]!;
    else if (m?.[1] === "cgroup-root") cgroupRoot = m[2]!;
    else if (
      m?.[1] === "cgroup-driver" && (m[2] === "cgroupfs" || m[2] === "systemd")
    ) cgroupDriver = m[2];
    else if (m?.[1] === "reserved-cgroup" && m[2]!.startsWith("/")) {
      reservedCgroups.push(m[2]!);
    } else {
      throw new Error(
        `unknown or invalid argument "${arg}" (paths must be absolute); ${USAGE}`,
      );
    }
  }
  return { socket, cgroupRoot, cgroupDriver, reservedCgroups };
}

function log(text: string): void {
  // deno-lint-ignore no-console
  console.error(`${new Date().toISOString()} cgroup-agent: ${text}`);
}

if (import.meta.main) {
  let config;
  try {
    config = parseAgentArgs(Deno.args);
  } catch (error) {
    log(errorMessage(error));
    Deno.exit(2);
  }
  const agent = await serveCgroupAgent({ ...config, onError: log });
  log(
    `serving ${config.socket}: cgroup ${agent.scope.version}, driver ${agent.scope.driver}, /${
      agent.scope.kubepods.join("/")
    }` +
      (config.reservedCgroups.length
        ? `, reserved ${config.reservedCgroups.join(" ")}`
        : ""),
  );
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => agent.close());
  }
  await agent.finished;
  await Deno.remove(config.socket).catch(() => {});
}
