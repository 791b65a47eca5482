/**
 * The HTTP pod source (`staticPodURL`, `--manifest-url`): fetches the URL every
 * `httpCheckFrequency` with the configured extra headers (`staticPodURLHeader`). The body may be
 * one pod or a `PodList` (one YAML document, as upstream `http.go` decodes it). A failed fetch
 * keeps the previous pods (no snapshot is reported); an empty body reports no pods.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { Pod } from "../types.ts";
import {
  filterDuplicatePodNames,
  readStaticPods,
} from "../static/static_pod.ts";
import type { PodSource } from "./file_source.ts";

/** Dependencies of {@linkcode createHttpSource}. */
export interface HttpSourceDeps {
  clock: Clock;
  logger: Logger;
  /** Injected for tests; defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

/** Options of {@linkcode createHttpSource}. */
export interface HttpSourceOptions {
  url: string;
  /** Extra request headers; each value list is sent as repeated headers. */
  headers?: Record<string, string[]>;
  nodeName: string;
  /** Poll period in ms (`httpCheckFrequency`, default 20 s). */
  checkFrequencyMs: number;
  onSnapshot: (pods: Pod[]) => void;
  /** Per-request timeout in ms (default 10 s). */
  timeoutMs?: number;
}

/** Creates the HTTP source. */
export function createHttpSource(
  deps: HttpSourceDeps,
  options: HttpSourceOptions,
): PodSource {
  const doFetch = deps.fetch ?? fetch;
  const log = deps.logger.with({ source: "http", url: options.url });
  let lastProblem = "";

  const report = (problem: string) => {
    if (problem && problem !== lastProblem) log.error(problem);
    lastProblem = problem;
  };

  async function refresh(signal?: AbortSignal): Promise<Pod[] | undefined> {
    const headers = new Headers();
    for (const [name, values] of Object.entries(options.headers ?? {})) {
      for (const v of values) headers.append(name, v);
    }
    const timeout = new AbortController();
    const done = new AbortController();
    deps.clock.sleep(options.timeoutMs ?? 10_000, done.signal).then(
      () => timeout.abort(new Error("request timed out")),
      () => {},
    );
    let text: string;
    try {
      const response = await doFetch(options.url, {
        headers,
        signal: signal
          ? AbortSignal.any([signal, timeout.signal])
          : timeout.signal,
      });
      text = await response.text();
      if (response.status !== 200) {
        report(
          `Cannot fetch static pods from "${options.url}": HTTP ${response.status}`,
        );
        return undefined;
      }
    } catch (cause) {
      if (signal?.aborted) return undefined;
      report(`Cannot fetch static pods from "${options.url}": ${cause}`);
      return undefined;
    } finally {
      done.abort();
    }
    const parsed = await readStaticPods(text, {
      nodeName: options.nodeName,
      source: "http",
      origin: options.url,
    });
    const unique = filterDuplicatePodNames(parsed.pods, "http");
    report(
      [...parsed.errors.map((e) => e.message), ...parsed.warnings]
        .concat(unique.problems).join("\n"),
    );
    options.onSnapshot(unique.pods);
    return unique.pods;
  }

  async function run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await refresh(signal);
      await deps.clock.sleep(options.checkFrequencyMs, signal).catch(() => {});
    }
  }

  return { name: "http", refresh: () => refresh(), run };
}
