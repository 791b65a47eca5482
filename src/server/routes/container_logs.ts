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

/**
 * One container log file being read: what has been read, the incomplete last line, the
 * bytes `limitBytes` still allows, and reopening after rotation.
 */
class LogReader {
  #log: OpenedLog;
  #offset = 0;
  #rest = "";
  #decoder = new TextDecoder();
  readonly #root: string;
  readonly #target: LogTarget;
  readonly #filter: LogFilter;
  budget: number | undefined;

  constructor(
    log: OpenedLog,
    options: {
      root: string;
      target: LogTarget;
      filter: LogFilter;
      budget: number | undefined;
    },
  ) {
    this.#log = log;
    this.#root = options.root;
    this.#target = options.target;
    this.#filter = options.filter;
    this.budget = options.budget;
  }

  /** The complete lines appended since the last read, formatted (the last `tail` only). */
  async readNew(tail?: number): Promise<string> {
    const { size } = await this.#log.file.stat();
    if (size <= this.#offset) return "";
    const bytes = await readRange(this.#log.file, this.#offset, size);
    this.#offset += bytes.length;
    const split = completeLines(
      this.#rest + this.#decoder.decode(bytes, { stream: true }),
    );
    this.#rest = split.rest;
    const lines = split.lines.slice(tailStart(split.lines.length, tail));
    const formatted = formatLines(lines, {
      ...this.#filter,
      budget: this.budget,
    });
    this.budget = formatted.budget;
    return formatted.text;
  }

  /** True when the path now names another file than the open one (rotation). */
  async rotated(): Promise<boolean> {
    try {
      const info = await Deno.lstat(this.#target.path);
      return info.ino !== this.#log.ino || info.dev !== this.#log.dev ||
        info.size < this.#offset;
    } catch {
      return false; // between rename and create: keep the old file for now
    }
  }

  /** Reads the rest of the old file, then switches to the new one and reads it. */
  async reopen(): Promise<string> {
    let text = await this.readNew();
    this.close();
    this.#log = await openLogFile(this.#root, this.#target.path);
    this.#offset = 0;
    this.#rest = "";
    text += await this.readNew();
    return text;
  }

  close(): void {
    try {
      this.#log.file.close();
    } catch {
      // already closed
    }
  }
}

/**
 * The followed part of a log: polls for appended lines, follows rotation, ends when the
 * container has stopped (checked while idle) or the byte limit is reached; cancelling stops it.
 */
function followStream(
  host: ContainerLogsHost,
  reader: LogReader,
  containerId: string,
): UnderlyingDefaultSource<Uint8Array> {
  const encoder = new TextEncoder();
  const stopper = new AbortController();
  return {
    async pull(controller) {
      let idleMs = 0;
      try {
        for (;;) {
          await host.clock.sleep(FOLLOW_POLL_MS, stopper.signal);
          let text = await reader.readNew();
          if (!text && await reader.rotated()) text = await reader.reopen();
          if (text) {
            controller.enqueue(encoder.encode(text));
            if (reader.budget === 0) break;
            return;
          }
          idleMs += FOLLOW_POLL_MS;
          if (idleMs < FOLLOW_STATE_CHECK_MS) continue;
          idleMs = 0;
          if (!(await host.containerRunning(containerId))) {
            const last = await reader.readNew();
            if (last) controller.enqueue(encoder.encode(last));
            break;
          }
        }
      } catch (error) {
        if (!stopper.signal.aborted) {
          reader.close();
          controller.error(error);
        }
        return;
      }
      reader.close();
      controller.close();
    },
    cancel() {
      stopper.abort();
      reader.close();
    },
  };
}

/** The `since` cut-off of the options, in ms since the epoch. */
function sinceMs(options: PodLogOptions, nowMs: number): number | undefined {
  if (options.sinceSeconds !== undefined) {
    return nowMs - options.sinceSeconds * 1000;
  }
  return options.sinceTime !== undefined
    ? Date.parse(options.sinceTime)
    : undefined;
}

/** `GET /containerLogs/{ns}/{pod}/{container}`. */
export function containerLogsRoute(host: ContainerLogsHost): Route {
  return async (_request, url) => {
    const ref = containerRefOf(decodeURIComponent(url.pathname));
    const options = parseLogOptions(url.searchParams);
    const target = await host.containerLog(ref, { previous: options.previous });
    const log = await openLogFile(host.podLogsDir, target.path);
    const since = sinceMs(options, host.clock.now());
    const reader = new LogReader(log, {
      root: host.podLogsDir,
      target,
      filter: {
        timestamps: options.timestamps,
        ...(since !== undefined ? { sinceMs: since } : {}),
      },
      budget: options.limitBytes,
    });
    let first: string;
    try {
      first = await reader.readNew(options.tailLines);
    } catch (error) {
      reader.close();
      throw error;
    }
    const follow = options.follow && reader.budget !== 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (first) controller.enqueue(new TextEncoder().encode(first));
        if (!follow) {
          reader.close();
          controller.close();
        }
      },
      ...(follow ? followStream(host, reader, target.containerId) : {}),
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
