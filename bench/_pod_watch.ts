/**
 * One watch of a namespace's pods for the cluster bench: when the bench first saw each pod
 * Ready and when it saw it deleted, as epoch ms on this machine's clock (the clock the
 * runtime stamps container starts with). A watch sees a status the moment the API server
 * stores it, where polling would add up to its interval.
 */
import type { RestClient } from "../src/api/mod.ts";

interface WatchedPod {
  metadata?: { name?: string; resourceVersion?: string };
  status?: { conditions?: { type: string; status: string }[] };
}

export interface PodTimes {
  readyAt?: number;
  deletedAt?: number;
}

export class PodWatch {
  readonly times = new Map<string, PodTimes>();
  #abort = new AbortController();
  #done: Promise<void> = Promise.resolve();
  #error: unknown;
  #waiters = new Set<() => void>();

  constructor(private readonly api: RestClient, readonly namespace: string) {}

  /** Lists the namespace's pods, then watches from that list's version. */
  async start(): Promise<void> {
    const list = await this.api.request<
      { metadata: { resourceVersion: string } }
    >({ method: "GET", path: `/api/v1/namespaces/${this.namespace}/pods` });
    const path = `/api/v1/namespaces/${this.namespace}/pods?watch=1` +
      `&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=7200` +
      "&allowWatchBookmarks=false";
    const stream = this.api.stream({ path, signal: this.#abort.signal });
    this.#done = (async () => {
      try {
        for await (const raw of stream) {
          const event = raw as { type: string; object: WatchedPod };
          this.#see(event.type, event.object, Date.now());
        }
        if (!this.#abort.signal.aborted) {
          this.#error = new Error("the API server ended the pod watch");
        }
      } catch (e) {
        if (!this.#abort.signal.aborted) this.#error = e;
      }
      this.#wake();
    })();
  }

  #see(type: string, pod: WatchedPod, at: number): void {
    const name = pod.metadata?.name;
    if (!name) return;
    const t = this.times.get(name) ?? {};
    this.times.set(name, t);
    if (type === "DELETED") t.deletedAt ??= at;
    else if (
      t.readyAt === undefined &&
      pod.status?.conditions?.some((c) =>
        c.type === "Ready" && c.status === "True"
      )
    ) t.readyAt = at;
    this.#wake();
  }

  #wake(): void {
    for (const w of this.#waiters) w();
    this.#waiters.clear();
  }

  /** Resolves with `probe`'s value once it is defined; rejects after `timeoutMs`. */
  async until<T>(
    what: string,
    probe: () => T | undefined,
    timeoutMs: number,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.#error) throw this.#error;
      const v = probe();
      if (v !== undefined) return v;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out: ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1000));
        this.#waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  readyAt(name: string, timeoutMs = 120_000): Promise<number> {
    return this.until(
      `pod ${name} Ready`,
      () => this.times.get(name)?.readyAt,
      timeoutMs,
    );
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }
}
