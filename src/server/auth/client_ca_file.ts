/**
 * `authentication.x509.clientCAFile`, kept current while serving, after k8s.io/apiserver's
 * `DynamicFileCAContent` (dynamiccertificates): the file is watched (fsnotify there,
 * `Deno.watchFs` here) and read again every minute in any case (its `wait.Until` period), a
 * new bundle replaces the old only when its content changed and parses, and a file that
 * became unreadable or empty keeps the bundle in use, with an error logged.
 *
 * @module
 */

import type { X509Certificate } from "node:crypto";
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { parseCertificateBundle } from "./x509.ts";

/** Upstream's recheck period of a watched CA file. */
export const CA_RECHECK_MS = 60_000;

/** The CA bundle as it is now; `close` stops following the file. */
export interface ClientCaSource {
  current(): readonly X509Certificate[];
  close(): void;
}

/**
 * Reads `path` (throwing as the first read fails, naming the file) and follows its changes
 * until `close`.
 * @throws {SyntaxError|Deno.errors.NotFound} when the file cannot be used at start.
 */
export async function followClientCaFile(
  deps: { clock: Clock; logger: Logger },
  path: string,
): Promise<ClientCaSource> {
  const { clock, logger } = deps;
  let text = await Deno.readTextFile(path);
  let bundle = parse(path, text);
  const stop = new AbortController();
  const reload = async () => {
    let next: string;
    try {
      next = await Deno.readTextFile(path);
      if (next === text) return;
      if (!next.trim()) throw new SyntaxError("the file is empty");
      bundle = parse(path, next);
      text = next;
      logger.info("Loaded a new client CA bundle", { file: path });
    } catch (error) {
      if (stop.signal.aborted) return;
      logger.error(
        "Cannot reload the client CA file; keeping the bundle in use",
        {
          file: path,
          err: error instanceof Error ? error.message : String(error),
        },
      );
    }
  };
  void (async () => {
    while (!stop.signal.aborted) {
      try {
        await clock.sleep(CA_RECHECK_MS, stop.signal);
      } catch {
        return;
      }
      await reload();
    }
  })();
  void watch(path, stop.signal, reload);
  return {
    current: () => bundle,
    close: () => stop.abort(),
  };
}

function parse(path: string, text: string): X509Certificate[] {
  try {
    return parseCertificateBundle(text);
  } catch (cause) {
    throw new SyntaxError(
      `Invalid client CA file "${path}" (authentication.x509.clientCAFile, --client-ca-file): ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
  }
}

/** Calls `onChange` on every event of the file until `signal` aborts or the watch fails. */
async function watch(
  path: string,
  signal: AbortSignal,
  onChange: () => Promise<void>,
): Promise<void> {
  let watcher: Deno.FsWatcher;
  try {
    watcher = Deno.watchFs(path, { recursive: false });
  } catch {
    return; // The minute recheck still follows the file.
  }
  signal.addEventListener("abort", () => watcher.close(), { once: true });
  try {
    for await (const _event of watcher) await onChange();
  } catch {
    // A replaced or removed file ends the watch; the minute recheck goes on.
  }
}
