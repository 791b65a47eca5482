/**
 * Which host IDs the kubelet may hand to pod user namespaces (upstream `getKubeletMappings`):
 * the subordinate user and group IDs of the `kubelet` user as the `getsubids` tool reports
 * them, when that user exists and the tool is installed; otherwise upstream's default, every
 * ID from 65536 up. The user is looked up first because `getsubids` may ask a remote service,
 * and an empty answer for an existing user then means that service is down: the kubelet does
 * not start, as upstream's does not.
 * @module
 */
import { errorMessage } from "../util/error_message.ts";
import { DEFAULT_KUBELET_ID_RANGE, type KubeletIdRange } from "./id_slots.ts";

/** The user whose subordinate IDs are the kubelet's. */
export const KUBELET_USER = "kubelet";

/** The tool upstream asks, found on the search path. */
export const GETSUBIDS = "getsubids";

/** Where `getsubids` is looked for when the search path cannot be read (systemd's default). */
export const DEFAULT_SEARCH_PATH =
  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * One range from `getsubids` output (`0: kubelet 65536 2147483648`), upstream's
 * `parseGetSubIdsOutput`: exactly one line of four fields, the last two 32-bit numbers.
 * @throws {Error} with upstream's text naming the line.
 */
export function parseGetSubIdsOutput(text: string): KubeletIdRange {
  const trimmed = text.replace(/^\n+|\n+$/g, "");
  const lines = trimmed.split("\n");
  if (lines.length !== 1) {
    throw new Error(
      `error parsing line ${goQuote(text)}: it must contain only one line`,
    );
  }
  const fields = lines[0]!.split(/\s+/).filter((f) => f !== "");
  if (fields.length !== 4) throw new Error(`invalid line ${goQuote(text)}`);
  const number = (field: string) => {
    if (!/^\d+$/.test(field) || Number(field) > 0xffffffff) {
      throw new Error(
        `error parsing line ${goQuote(text)}: strconv.ParseUint: parsing ${
          goQuote(field)
        }: ${/^\d+$/.test(field) ? "value out of range" : "invalid syntax"}`,
      );
    }
    return Number(field);
  };
  return { first: number(fields[2]!), length: number(fields[3]!) };
}

/** Whether the passwd file names `user` (the first field of a line). */
export function passwdHasUser(passwd: string, user: string): boolean {
  return passwd.split("\n").some((line) => line.split(":")[0] === user);
}

/** What the decision needs from the host. */
export interface KubeletIdRangeHost {
  /** The passwd database's text; undefined when there is none. */
  readPasswd(): Promise<string | undefined>;
  /** The search path (`PATH`); undefined when it cannot be read. */
  searchPath(): string | undefined;
  /** Whether an executable file is at `path`; "denied" when this process may not look. */
  isExecutable(path: string): Promise<boolean | "denied">;
  /** Whether this process is allowed to start `path`. */
  mayRun(path: string): boolean;
  /** Runs `path args…`; its exit code and standard output. */
  run(
    path: string,
    args: string[],
  ): Promise<{ code: number; stdout: string }>;
}

/** The range to use, and a warning for the operator when the node's setting is not followed. */
export interface KubeletIdRangeResult {
  range: KubeletIdRange;
  warning?: string;
}

/**
 * The kubelet's ID range.
 * @throws {Error} with upstream's text when the tool fails, the user and group ranges differ
 * or its answer cannot be read.
 */
export async function kubeletIdRange(
  host: KubeletIdRangeHost,
  gateEnabled: boolean,
): Promise<KubeletIdRangeResult> {
  const fallback = { range: DEFAULT_KUBELET_ID_RANGE };
  if (!gateEnabled) return fallback;
  const passwd = await host.readPasswd();
  if (passwd === undefined || !passwdHasUser(passwd, KUBELET_USER)) {
    return fallback;
  }
  const found = await findTool(host);
  const ignored = (what: string, path: string) => ({
    ...fallback,
    warning:
      `the "${KUBELET_USER}" user exists, but this kubelet may not ${what}, so pods get user namespace IDs from 65536 up instead of that user's subordinate IDs; build the binary with --getsubids=${path} to follow them`,
  });
  if (found.denied !== undefined && found.tool === undefined) {
    return ignored(
      `look for ${GETSUBIDS} (${found.denied} is not granted)`,
      `/usr/bin/${GETSUBIDS}`,
    );
  }
  const tool = found.tool;
  if (tool === undefined) return fallback;
  if (!host.mayRun(tool)) return ignored(`run ${tool}`, tool);
  const uids = await runTool(host, tool, [KUBELET_USER]).catch((e) => {
    throw new Error(
      `error retrieving additional uids for user "${KUBELET_USER}": ${
        errorMessage(e)
      }`,
    );
  });
  const gids = await runTool(host, tool, ["-g", KUBELET_USER]).catch(() => {
    throw new Error(
      `error retrieving additional gids for user "${KUBELET_USER}"`,
    );
  });
  if (uids !== gids) {
    throw new Error(
      `mismatched subuids and subgids for user "${KUBELET_USER}"`,
    );
  }
  return { range: parseGetSubIdsOutput(uids) };
}

/** The first `getsubids` on the search path, and the first place this process may not look. */
async function findTool(
  host: KubeletIdRangeHost,
): Promise<{ tool?: string; denied?: string }> {
  const path = host.searchPath() ?? DEFAULT_SEARCH_PATH;
  let denied: string | undefined;
  for (const dir of path.split(":")) {
    // an empty or relative entry names the working directory, which a daemon never means
    if (!dir.startsWith("/")) continue;
    const candidate = `${dir.replace(/\/+$/, "")}/${GETSUBIDS}`;
    const found = await host.isExecutable(candidate);
    if (found === true) return { tool: candidate };
    if (found === "denied") denied ??= candidate;
  }
  return denied === undefined ? {} : { denied };
}

async function runTool(
  host: KubeletIdRangeHost,
  tool: string,
  args: string[],
): Promise<string> {
  const { code, stdout } = await host.run(tool, args);
  if (code !== 0) throw new Error(`exit status ${code}`);
  return stdout;
}

/** A Go `%q` rendering of ASCII text, enough for the tool's output in messages. */
function goQuote(text: string): string {
  return JSON.stringify(text);
}

/** The host as the kubelet sees it: `/etc/passwd`, `PATH`, the file system, subprocesses. */
export const SYSTEM_ID_RANGE_HOST: KubeletIdRangeHost = {
  async readPasswd() {
    try {
      return await Deno.readTextFile("/etc/passwd");
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
  },
  searchPath() {
    try {
      return Deno.env.get("PATH");
    } catch {
      return undefined; // no env grant: the default path stands in
    }
  },
  async isExecutable(path) {
    try {
      const info = await Deno.stat(path);
      return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
    } catch (error) {
      return error instanceof Deno.errors.NotCapable ? "denied" : false;
    }
  },
  mayRun(path) {
    return Deno.permissions.querySync({ name: "run", command: path }).state ===
      "granted";
  },
  async run(path, args) {
    const out = await new Deno.Command(path, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
  },
};
