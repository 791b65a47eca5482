/**
 * LIST and WATCH of one collection narrowed by a field selector, the two calls an informer
 * makes: the list's items and resourceVersion, then the changes after that version with
 * bookmarks, ERROR events thrown as `ApiStatusError` (410: relist).
 * @module
 */
import { throwIfWatchError } from "./errors.ts";
import type { RestClient } from "./rest_client.ts";
import { type ApiCallOptions, signalOf, type WatchEvent } from "./types.ts";

export type { WatchEvent };

/** A LIST's items and the version to watch from. */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/** Which objects: a collection's path (`/api/v1/pods`) and a field selector. */
export interface CollectionQuery {
  path: string;
  fieldSelector: string;
}

/** The LIST of `query`. */
export async function listCollection<T>(
  rest: RestClient,
  query: CollectionQuery,
  options?: ApiCallOptions,
): Promise<ListResult<T>> {
  const q = new URLSearchParams({ fieldSelector: query.fieldSelector });
  const list = await rest.request<
    { metadata?: { resourceVersion?: string }; items?: T[] }
  >({ method: "GET", path: `${query.path}?${q}`, ...signalOf(options) });
  return {
    items: list.items ?? [],
    resourceVersion: list.metadata?.resourceVersion ?? "",
  };
}

/**
 * The WATCH of `query` after `resourceVersion`; ends when the server closes the stream, `what`
 * names the collection in errors.
 */
export async function* watchCollection<T>(
  rest: RestClient,
  query: CollectionQuery & { what: string },
  resourceVersion: string,
  options: ApiCallOptions & { timeoutSeconds: number },
): AsyncIterable<WatchEvent<T>> {
  const q = new URLSearchParams({
    fieldSelector: query.fieldSelector,
    watch: "true",
    allowWatchBookmarks: "true",
    resourceVersion,
    timeoutSeconds: String(options.timeoutSeconds),
  });
  for await (
    const raw of rest.stream({
      path: `${query.path}?${q}`,
      ...signalOf(options),
    })
  ) {
    // The server reports e.g. "too old resource version" as a Status inside the stream.
    throwIfWatchError(raw, query.what);
    yield raw as WatchEvent<T>;
  }
}
