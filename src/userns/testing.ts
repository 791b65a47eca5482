/**
 * Fakes for the user namespace manager's seams: pod directories in memory and a fixed list
 * of runtime handlers.
 * @module
 */
import type { HandlerFeatures } from "./pod_user_namespace.ts";
import type { HandlerFeatureSource, PodDirFiles } from "./userns_manager.ts";

/** Pod directories in memory: `dirs` maps a pod UID to its mappings file (or none). */
export class MemoryPodDirs implements PodDirFiles {
  readonly dirs = new Map<string, string | undefined>();
  /** Set to make the next write fail with this error. */
  failWrite: Error | undefined;

  read(uid: string): Promise<string | undefined> {
    return Promise.resolve(this.dirs.get(uid));
  }
  write(uid: string, text: string): Promise<void> {
    if (this.failWrite) return Promise.reject(this.failWrite);
    this.dirs.set(uid, text);
    return Promise.resolve();
  }
  remove(uid: string): Promise<void> {
    if (this.dirs.has(uid)) this.dirs.set(uid, undefined);
    return Promise.resolve();
  }
  listPods(): Promise<string[]> {
    return Promise.resolve([...this.dirs.keys()]);
  }
}

/** Handlers that never change. */
export function fixedHandlers(
  handlers: readonly HandlerFeatures[],
): HandlerFeatureSource {
  return { handlers: () => Promise.resolve(handlers) };
}
