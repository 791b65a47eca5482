/**
 * The file pod source (`staticPodPath`, `--pod-manifest-path`): a single manifest file or a
 * directory of them (not recursive; dotfiles ignored), one pod per file. It lists the path at
 * start, again every `fileCheckFrequency`, and whenever `Deno.watchFs` reports a change. Each
 * listing is reported as a full snapshot; invalid manifests are logged (file and field) and
 * skipped, and a pod whose name an earlier file already used is dropped (upstream
 * `filterInvalidPods`). A watched removal of a manifest is reported at once, before the next
 * listing, as upstream's per-event handling does: a file removed and written again at once
 * (the same pod UID) still stops the pod and starts it again.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { Pod } from "../types.ts";
import {
  filterDuplicatePodNames,
  type ParsedManifest,
  readStaticPods,
} from "../static/static_pod.ts";

/** Dependencies of {@linkcode createFileSource}. */
export interface FileSourceDeps {
  clock: Clock;
  logger: Logger;
}

/** Options of {@linkcode createFileSource}. */
export interface FileSourceOptions {
  /** Manifest file or directory. Relative paths are kept as given. */
  path: string;
  /** Lower-cased node name. */
  nodeName: string;
  /** Re-list period in ms (`fileCheckFrequency`, default 20 s). */
  checkFrequencyMs: number;
  /** Receives every snapshot (every listing, changed or not). */
  onSnapshot: (pods: Pod[]) => void;
  /** Use `Deno.watchFs` in addition to polling (default true). */
  watch?: boolean;
}

/** A running or runnable pod source. */
export interface PodSource {
  /** Source name as used in `kubernetes.io/config.source`. */
  readonly name: string;
  /** Lists once and reports the snapshot; resolves to the pods reported (undefined if skipped). */
  refresh(): Promise<Pod[] | undefined>;
  /** Lists now, then keeps listing until `signal` aborts. Never rejects. */
  run(signal: AbortSignal): Promise<void>;
}

/** Creates the file source. */
export function createFileSource(
  deps: FileSourceDeps,
  options: FileSourceOptions,
): PodSource {
  const { clock, logger } = deps;
  const log = logger.with({ source: "file", path: options.path });
  let lastErrors = "";
  let missingLogged = false;
  /**
   * The last listing's pods by manifest file name (the removal events' base): every manifest
   * is in one directory, and a name matches however the watcher spells the directory.
   */
  let byFile = new Map<string, Pod[]>();
  /**
   * The last listing's decoded manifests by path with the text they came from. Every listing
   * reads each file again, but decodes it (YAML, defaults, validation: most of the source's
   * CPU time) only when its text changed; an unchanged file hands out the same pod objects.
   */
  let decoded = new Map<string, { text: string; parsed: ParsedManifest }>();

  async function listPods(): Promise<Pod[] | undefined> {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(options.path);
    } catch (cause) {
      if (cause instanceof Deno.errors.NotFound) {
        if (!missingLogged) {
          log.warn("Static pod path does not exist, no static pods to run");
          missingLogged = true;
        }
        byFile = new Map();
        decoded = new Map();
        return [];
      }
      log.error("Cannot read static pod path", { err: String(cause) });
      return undefined;
    }
    missingLogged = false;
    const files: string[] = [];
    if (info.isDirectory) {
      for await (const entry of Deno.readDir(options.path)) {
        if (entry.name.startsWith(".")) continue;
        if (entry.isDirectory) continue;
        files.push(joinPath(options.path, entry.name));
      }
      files.sort();
    } else {
      files.push(options.path);
    }
    const pods: Pod[] = [];
    const problems: string[] = [];
    const listed = new Map<string, Pod[]>();
    const kept = new Map<string, { text: string; parsed: ParsedManifest }>();
    for (const file of files) {
      let text: string;
      try {
        text = await Deno.readTextFile(file);
      } catch (cause) {
        if (cause instanceof Deno.errors.NotFound) continue; // removed meanwhile
        problems.push(`Cannot read manifest "${file}": ${cause}`);
        continue;
      }
      const cached = decoded.get(file);
      const parsed = cached?.text === text
        ? cached.parsed
        : await readStaticPods(
          text,
          { nodeName: options.nodeName, source: "file", origin: file },
        );
      kept.set(file, { text, parsed });
      pods.push(...parsed.pods);
      listed.set(baseName(file), parsed.pods);
      for (const e of parsed.errors) problems.push(e.message);
      problems.push(...parsed.warnings);
    }
    byFile = listed;
    decoded = kept;
    const unique = filterDuplicatePodNames(pods, "file");
    problems.push(...unique.problems);
    const key = problems.join("\n");
    if (key !== lastErrors) {
      for (const p of problems) log.error(p);
      lastErrors = key;
    }
    return unique.pods;
  }

  async function refresh(): Promise<Pod[] | undefined> {
    const pods = await listPods();
    if (pods) options.onSnapshot(pods);
    return pods;
  }

  /** Reports the last listing without the pods of `removed` files (none known: nothing). */
  function dropRemoved(removed: string[]): void {
    const gone = removed.map(baseName).filter((name) => byFile.has(name));
    if (!gone.length) return;
    for (const name of gone) byFile.delete(name);
    options.onSnapshot(
      filterDuplicatePodNames([...byFile.values()].flat(), "file").pods,
    );
  }

  async function run(signal: AbortSignal): Promise<void> {
    let wake: (() => void) | undefined;
    let dirty = false;
    const poke = () => {
      dirty = true;
      wake?.();
    };
    const watcher = options.watch === false ? undefined : openWatcher(
      options.path,
      log,
    );
    const pump = watcher
      ? pumpWatcher(watcher, (removed) => {
        dropRemoved(removed);
        poke();
      })
      : Promise.resolve();
    const onAbort = () => {
      watcher?.close();
      wake?.();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      while (!signal.aborted) {
        dirty = false;
        await refresh().catch((cause) =>
          log.error("Listing static pods failed", { err: String(cause) })
        );
        if (signal.aborted || dirty) continue;
        const tick = new AbortController();
        const sleep = clock.sleep(
          options.checkFrequencyMs,
          AbortSignal.any([signal, tick.signal]),
        ).catch(() => {});
        wake = () => tick.abort();
        await sleep;
        wake = undefined;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      try {
        watcher?.close();
      } catch { /* already closed */ }
      await pump;
    }
  }

  return { name: "file", refresh, run };
}

function openWatcher(path: string, log: Logger): Deno.FsWatcher | undefined {
  try {
    // A single file is watched through its directory: editors replace files by renaming.
    const target = Deno.statSync(path).isDirectory ? path : parentDir(path);
    return Deno.watchFs(target, { recursive: false });
  } catch (cause) {
    log.v(2).info("Cannot watch static pod path, polling only", {
      err: String(cause),
    });
    return undefined;
  }
}

/** Calls `changed` per event with the paths it removed (a removal or a rename away). */
async function pumpWatcher(
  watcher: Deno.FsWatcher,
  changed: (removed: string[]) => void,
): Promise<void> {
  try {
    for await (const event of watcher) {
      if (event.kind === "access") continue;
      changed(await removedPaths(event));
    }
  } catch { /* closed */ }
}

/**
 * The paths an event took away: every path of a removal (even if written again meanwhile, as
 * upstream's store deletes on the event), the renamed paths that no longer exist.
 */
export async function removedPaths(event: Deno.FsEvent): Promise<string[]> {
  if (event.kind === "remove") return [...event.paths];
  if (event.kind !== "rename") return [];
  const gone: string[] = [];
  for (const path of event.paths) {
    try {
      await Deno.lstat(path);
    } catch (cause) {
      if (cause instanceof Deno.errors.NotFound) gone.push(path);
    }
  }
  return gone;
}

function parentDir(path: string): string {
  const i = path.lastIndexOf("/");
  if (i < 0) return ".";
  return i === 0 ? "/" : path.slice(0, i);
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function joinPath(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}
