import assert from "node:assert/strict";
import { ApiStatusError } from "../api/mod.ts";
import type {
  ListResult,
  Service,
  ServiceApi,
  WatchEvent,
} from "../api/mod.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createServiceCache } from "./service_cache.ts";

function svc(name: string, rv: string): Service {
  return {
    metadata: { namespace: "ns", name, resourceVersion: rv },
    spec: { clusterIP: "10.0.0.1", ports: [{ port: 80 }] },
  };
}

/** Lists answer from `lists` in turn; each watch yields the next batch, then ends. */
class ScriptedServiceApi implements ServiceApi {
  readonly calls: string[] = [];
  constructor(
    readonly lists: (ListResult<Service> | Error)[],
    readonly watches: (WatchEvent<Service>[] | Error)[],
  ) {}
  listServices(): Promise<ListResult<Service>> {
    this.calls.push("list");
    const next = this.lists.shift();
    if (!next) return new Promise(() => {});
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  }
  async *watchServices(
    version: string,
    options: { signal?: AbortSignal },
  ): AsyncIterable<WatchEvent<Service>> {
    this.calls.push(`watch@${version}`);
    const next = this.watches.shift();
    if (next instanceof Error) throw next;
    if (!next) {
      await new Promise((r) =>
        options.signal?.addEventListener("abort", r, { once: true })
      );
      return;
    }
    yield* next;
  }
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) {
    await new Promise((r) => setTimeout(r, 1));
  }
  assert.ok(ok(), `timed out waiting for ${what}`);
}

Deno.test("service cache: synced after the first list, follows the watch, relists on 410", async () => {
  const api = new ScriptedServiceApi(
    [
      new Error("connection refused"),
      { items: [svc("a", "5")], resourceVersion: "5" },
      { items: [svc("c", "20")], resourceVersion: "20" },
    ],
    [
      [
        { type: "ADDED", object: svc("b", "6") },
        { type: "DELETED", object: svc("a", "7") },
      ],
      new ApiStatusError("too old resource version", { code: 410 }),
    ],
  );
  const clock = new FakeClock();
  const cache = createServiceCache({
    api,
    clock,
    logger: new CaptureLogger(),
    random: () => 0,
  });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await until("the failed list", () => api.calls.length === 1);
  assert.equal(cache.hasSynced(), false);
  await clock.advance(1_000);
  await until("the relist", () => cache.hasSynced());
  await until("watch events", () => api.calls.includes("watch@7"));
  await until(
    "the relist after 410",
    () => cache.list().map((s) => s.metadata.name).join() === "c",
  );
  assert.deepEqual(api.calls.slice(0, 5), [
    "list",
    "list",
    "watch@5",
    "watch@7",
    "list",
  ]);
  stop.abort();
  await running;
});
