/**
 * Service account tokens for pods (upstream `pkg/kubelet/token`): TokenRequests bound to the
 * pod, cached per (service account, audiences, lifetime, bound object) and requested again
 * once 80 % of the lifetime has passed or the token is 24 h old (each with up to 10 s of
 * jitter). A failed refresh keeps serving the cached token until it expires.
 * @module
 */
import type { ObjectApi, TokenRequest } from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { errorMessage } from "../util/error_message.ts";

/** What projected volumes need. */
export interface TokenSource {
  /** The token for `request` (served from the cache while fresh). */
  getServiceAccountToken(
    namespace: string,
    serviceAccount: string,
    request: TokenRequest,
    signal?: AbortSignal,
  ): Promise<TokenRequest>;
}

/** The token manager: a {@linkcode TokenSource} with per-pod cleanup. */
export interface TokenManager extends TokenSource {
  /** Forgets the tokens bound to the pod (it was removed). */
  deletePodTokens(podUid: string): void;
  /** Drops expired tokens (also done by requests, at most once a minute, as upstream's loop). */
  cleanup(): void;
}

const MAX_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_JITTER_MS = 10_000;
const GC_PERIOD_MS = 60_000;

function keyOf(ns: string, sa: string, req: TokenRequest): string {
  return JSON.stringify([
    ns,
    sa,
    req.spec.audiences ?? [],
    req.spec.expirationSeconds ?? null,
    req.spec.boundObjectRef ?? null,
  ]);
}

function expiresAt(tr: TokenRequest): number {
  return Date.parse(tr.status?.expirationTimestamp ?? "") || 0;
}

/**
 * Whether `tr` should be requested again at `now` (pure; `jitterMs` in [0, 10 s)): older than
 * 24 h, or within the last 20 % of its lifetime.
 */
export function requiresRefresh(
  tr: TokenRequest,
  now: number,
  jitterMs: number,
): boolean {
  const seconds = tr.spec.expirationSeconds;
  if (seconds === undefined) return false;
  const exp = expiresAt(tr);
  const issuedAt = exp - seconds * 1000;
  if (now > issuedAt + MAX_TTL_MS - jitterMs) return true;
  return now > exp - seconds * 200 - jitterMs;
}

/** Builds the token manager. */
export function createTokenManager(deps: {
  api: Pick<ObjectApi, "createToken">;
  clock: Clock;
  logger: Logger;
  /** In [0, 1); default Math.random. */
  random?: () => number;
}): TokenManager {
  const cache = new Map<string, TokenRequest>();
  const random = deps.random ?? Math.random;
  let cleanedAt = deps.clock.now();
  const cleanup = () => {
    const now = deps.clock.now();
    cleanedAt = now;
    for (const [key, tr] of cache) {
      if (now > expiresAt(tr)) cache.delete(key);
    }
  };
  return {
    async getServiceAccountToken(ns, sa, request, signal) {
      const now = deps.clock.now();
      if (now - cleanedAt >= GC_PERIOD_MS) cleanup();
      const key = keyOf(ns, sa, request);
      const cached = cache.get(key);
      if (
        cached && !requiresRefresh(cached, now, random() * MAX_JITTER_MS)
      ) {
        return cached;
      }
      let fresh: TokenRequest;
      try {
        fresh = await deps.api.createToken(
          ns,
          sa,
          request,
          signal ? { signal } : {},
        );
      } catch (e) {
        signal?.throwIfAborted();
        if (!cached) throw new Error(`failed to fetch token: ${errText(e)}`);
        if (deps.clock.now() > expiresAt(cached)) {
          throw new Error(
            `token ${key} expired and refresh failed: ${errText(e)}`,
          );
        }
        deps.logger.error("Couldn't update token", {
          cacheKey: key,
          err: errText(e),
        });
        return cached;
      }
      cache.set(key, fresh);
      return fresh;
    },
    deletePodTokens(podUid) {
      for (const [key, tr] of cache) {
        if (tr.spec.boundObjectRef?.uid === podUid) cache.delete(key);
      }
    },
    cleanup,
  };
}

function errText(e: unknown): string {
  return errorMessage(e);
}
