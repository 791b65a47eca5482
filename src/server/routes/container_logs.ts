/**
 * `GET /containerLogs/{namespace}/{pod}/{container}`: a container's log as `kubectl logs`
 * shows it (upstream `getContainerLogs` in pkg/kubelet/server/server.go). The query is a
 * v1 `PodLogOptions` (`follow`, `previous`, `timestamps`, `tailLines`, `limitBytes`,
 * `sinceSeconds`, `sinceTime`, and the legacy `tail=N|all`); bad values are a 400, invalid
 * combinations a 422, as upstream. The file is opened without following symlinks
 * (`logs/safe_open.ts`); with `follow` it is polled, reopened when rotated, and the stream
 * ends once the container stops or the client goes away.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import { HttpError } from "../http_error.ts";
import { formatLines, type LogFilter, tailStart } from "../logs/cri_log.ts";
import { type OpenedLog, openLogFile } from "../logs/safe_open.ts";
import type { Route } from "./healthz.ts";

/** A container instance's log file. */
export interface LogTarget {
  /** The CRI `logPath`. */
  path: string;
  /** The runtime's container id (without the `<runtime>://` prefix). */
  containerId: string;
}

/** Which container's log. */
export interface ContainerRef {
  namespace: string;
  pod: string;
  container: string;
}

/** What the route reads from the kubelet. */
export interface ContainerLogsHost {
  clock: Clock;
  /** `podLogsDir`: no log is served from outside it. */
  podLogsDir: string;
  /**
   * The log of the container's current instance, or of the previous one. Throws an
   * {@linkcode HttpError} as upstream answers: 404 for an unknown pod or container, 400 when
   * the container has not started or has no previous instance.
   */
  containerLog(
    ref: ContainerRef,
    options: { previous: boolean },
  ): Promise<LogTarget>;
  /** Whether the container still runs (a followed log ends when it stops). */
  containerRunning(containerId: string): Promise<boolean>;
}

/** The `PodLogOptions` the route understands. */
export interface PodLogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  sinceSeconds?: number;
  sinceTime?: string;
}

/** How often a followed log is polled. */
export const FOLLOW_POLL_MS = 250;
/** How often a followed log without new lines checks that the container still runs. */
export const FOLLOW_STATE_CHECK_MS = 1_000;

const BOOL_VALUES: Readonly<Record<string, boolean>> = {
  "1": true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  "0": false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
};

function badQuery(): HttpError {
  return new HttpError(400, "Unable to decode query.");
}

function boolParam(params: URLSearchParams, name: string): boolean {
  const value = params.get(name);
  if (value === null || value === "") return false;
  const parsed = BOOL_VALUES[value];
  if (parsed === undefined) throw badQuery();
  return parsed;
}

function intParam(params: URLSearchParams, name: string): number | undefined {
  const value = params.get(name);
  if (value === null || value === "") return undefined;
  if (!/^[+-]?\d+$/.test(value)) throw badQuery();
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) throw badQuery();
  return parsed;
}

/**
 * Decodes and validates the query (upstream's parameter codec, then
 * `ValidatePodLogOptions`). @throws {HttpError} 400 or 422.
 */
export function parseLogOptions(params: URLSearchParams): PodLogOptions {
  const tail = params.get("tail");
  const tailLines = tail !== null && tail !== ""
    ? (tail === "all"
      ? undefined
      : intParam(new URLSearchParams({ t: tail }), "t"))
    : intParam(params, "tailLines");
  const options: PodLogOptions = {
    follow: boolParam(params, "follow"),
    previous: boolParam(params, "previous"),
    timestamps: boolParam(params, "timestamps"),
  };
  const limitBytes = intParam(params, "limitBytes");
  const sinceSeconds = intParam(params, "sinceSeconds");
  const sinceTime = params.get("sinceTime") || undefined;
  if (tailLines !== undefined) options.tailLines = tailLines;
  if (limitBytes !== undefined) options.limitBytes = limitBytes;
  if (sinceSeconds !== undefined) options.sinceSeconds = sinceSeconds;
  if (sinceTime !== undefined) {
    if (Number.isNaN(Date.parse(sinceTime))) throw badQuery();
    options.sinceTime = sinceTime;
  }
  const problems: string[] = [];
  if (tailLines !== undefined && tailLines < 0) {
    problems.push(
      "tailLines: Invalid value: must be greater than or equal to 0",
    );
  }
  if (limitBytes !== undefined && limitBytes < 1) {
    problems.push("limitBytes: Invalid value: must be greater than 0");
  }
  if (sinceSeconds !== undefined && sinceTime !== undefined) {
    problems.push(
      "at most one of `sinceTime` or `sinceSeconds` may be specified",
    );
  } else if (sinceSeconds !== undefined && sinceSeconds < 1) {
    problems.push("sinceSeconds: Invalid value: must be greater than 0");
  }
  if (problems.length) throw new HttpError(422, problems.join(", "));
  return options;
}

/** The container reference of a `/containerLogs/…` path, or 404. */
export function containerRefOf(path: string): ContainerRef {
  const parts = path.split("/");
  // ["", "containerLogs", ns, pod, container]
  const [, , namespace, pod, container, ...rest] = parts;
  if (!namespace || !pod || !container || rest.length) {
    throw new HttpError(404, "404 page not found");
  }
  return { namespace, pod, container };
}

async function readRange(
  file: Deno.FsFile,
  from: number,
  to: number,
): Promise<Uint8Array> {
  const out = new Uint8Array(Math.max(0, to - from));
  await file.seek(from, Deno.SeekMode.Start);
  let at = 0;
  while (at < out.length) {
    const n = await file.read(out.subarray(at));
    if (n === null) break;
    at += n;
  }
  return out.subarray(0, at);
}

/** Splits off complete lines; the incomplete rest stays for the next read. */
function completeLines(text: string): { lines: string[]; rest: string } {
  const end = text.lastIndexOf("\n");
  if (end === -1) return { lines: [], rest: text };
  return { lines: text.slice(0, end).split("\n"), rest: text.slice(end + 1) };
}

/** `GET /containerLogs/{ns}/{pod}/{container}`. */
export function containerLogsRoute(host: ContainerLogsHost): Route {
  return async (_request, url) => {
    const ref = containerRefOf(decodeURIComponent(url.pathname));
    const options = parseLogOptions(url.searchParams);
    const target = await host.containerLog(ref, { previous: options.previous });
    let log: OpenedLog = await openLogFile(host.podLogsDir, target.path);
    const filter: LogFilter = { timestamps: options.timestamps };
    const now = host.clock.now();
    if (options.sinceSeconds !== undefined) {
      filter.sinceMs = now - options.sinceSeconds * 1000;
    } else if (options.sinceTime !== undefined) {
      filter.sinceMs = Date.parse(options.sinceTime);
    }
    let budget = options.limitBytes;
    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    const stopper = new AbortController();
    let offset = 0;
    let rest = "";

    /** Reads what was appended since `offset`; returns the formatted complete lines. */
    const readNew = async (tail?: number): Promise<string> => {
      const { size } = await log.file.stat();
      if (size <= offset) return "";
      const bytes = await readRange(log.file, offset, size);
      offset += bytes.length;
      const split = completeLines(
        rest + decoder.decode(bytes, { stream: true }),
      );
      rest = split.rest;
      const lines = split.lines.slice(tailStart(split.lines.length, tail));
      const formatted = formatLines(lines, filter, budget);
      budget = formatted.budget;
      return formatted.text;
    };

    /** True when the file at the path is no longer the one open (rotation). */
    const rotated = async (): Promise<boolean> => {
      try {
        const info = await Deno.lstat(target.path);
        return info.ino !== log.ino || info.dev !== log.dev ||
          info.size < offset;
      } catch {
        return false; // between rename and create: keep the old file for now
      }
    };

    const first = await readNew(options.tailLines);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (first) controller.enqueue(encoder.encode(first));
        if (!options.follow || budget === 0) {
          log.file.close();
          controller.close();
        }
      },
      async pull(controller) {
        let idleMs = 0;
        try {
          for (;;) {
            await host.clock.sleep(FOLLOW_POLL_MS, stopper.signal);
            let text = await readNew();
            if (!text && await rotated()) {
              text += await readNew(); // the rest of the old file
              log.file.close();
              log = await openLogFile(host.podLogsDir, target.path);
              offset = 0;
              rest = "";
              text += await readNew();
            }
            if (text) {
              controller.enqueue(encoder.encode(text));
              if (budget === 0) break;
              return;
            }
            idleMs += FOLLOW_POLL_MS;
            if (idleMs >= FOLLOW_STATE_CHECK_MS) {
              idleMs = 0;
              if (!(await host.containerRunning(target.containerId))) {
                const last = await readNew();
                if (last) controller.enqueue(encoder.encode(last));
                break;
              }
            }
          }
        } catch (error) {
          if (!stopper.signal.aborted) {
            log.file.close();
            controller.error(error);
          }
          return;
        }
        log.file.close();
        controller.close();
      },
      cancel() {
        stopper.abort();
        try {
          log.file.close();
        } catch {
          // already closed
        }
      },
    }, { highWaterMark: 0 });
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        "x-content-type-options": "nosniff",
      },
    });
  };
}
