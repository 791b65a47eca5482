/**
 * Bearer tokens through the TokenReview webhook (`authentication.webhook.enabled`), with the
 * answers (both kinds) cached for `authentication.webhook.cacheTTL` as the kubelet's
 * delegating authenticator does. The cache is keyed by the token's SHA-256, never the token.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { TokenAuthenticator, UserInfo } from "./authenticate.ts";

/** A TokenReview's status (authentication.k8s.io/v1). */
export interface TokenReviewStatus {
  authenticated?: boolean;
  user?: {
    username?: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  };
  error?: string;
}

/** Creates TokenReviews (the API server call). */
export interface TokenReviewer {
  reviewToken(token: string): Promise<TokenReviewStatus>;
}

/** Options of {@linkcode createWebhookTokenAuthenticator}. */
export interface WebhookTokenOptions {
  /** `authentication.webhook.cacheTTL` in ms (default 2 min); 0 → no cache. */
  ttlMs?: number;
  /** Most cached answers kept (default 10 000). */
  maxEntries?: number;
}

async function tokenKey(token: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(token),
  );
  return Array.from(
    new Uint8Array(digest),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/** The user a TokenReview status names, or undefined. */
export function tokenReviewUser(
  status: TokenReviewStatus,
): UserInfo | undefined {
  const name = status.user?.username;
  if (status.authenticated !== true || !name) return undefined;
  return {
    name,
    groups: [...(status.user?.groups ?? [])],
    ...(status.user?.uid ? { uid: status.user.uid } : {}),
    ...(status.user?.extra ? { extra: status.user.extra } : {}),
  };
}

/** TokenReview-backed bearer token authentication with the answer cache. */
export function createWebhookTokenAuthenticator(
  deps: { reviewer: TokenReviewer; clock: Clock },
  options: WebhookTokenOptions = {},
): TokenAuthenticator {
  const ttl = options.ttlMs ?? 2 * 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const cache = new Map<
    string,
    { user: UserInfo | undefined; expires: number }
  >();
  return {
    async authenticateToken(token) {
      const key = await tokenKey(token);
      const now = deps.clock.now();
      const hit = cache.get(key);
      if (hit && hit.expires > now) return hit.user;
      cache.delete(key);
      const user = tokenReviewUser(await deps.reviewer.reviewToken(token));
      if (ttl > 0) {
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        cache.set(key, { user, expires: now + ttl });
      }
      return user;
    },
  };
}
