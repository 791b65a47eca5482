/**
 * May this user do this: `AlwaysAllow`, or `Webhook` — a SubjectAccessReview per distinct
 * (user, attributes), cached for `cacheAuthorizedTTL` when allowed and `cacheUnauthorizedTTL`
 * when not, as k8s.io/apiserver's delegating authorizer with the kubelet's settings
 * (`BuildAuthz` in cmd/kubelet/app/auth.go). A failed review is not cached and is not an
 * answer: the caller denies (500), never allows.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { UserInfo } from "./authenticate.ts";
import type { RequestAttributes } from "./request_attributes.ts";

/** An authorizer's answer. */
export interface AuthorizationDecision {
  allowed: boolean;
  /** The reviewer's reason, for logs. */
  reason: string;
}

/** Decides one request; rejects when no decision could be made. */
export interface Authorizer {
  authorize(
    user: UserInfo,
    attributes: RequestAttributes,
  ): Promise<AuthorizationDecision>;
}

/** `authorization.mode: AlwaysAllow`. */
export const alwaysAllow: Authorizer = {
  authorize: () => Promise.resolve({ allowed: true, reason: "AlwaysAllow" }),
};

/** A SubjectAccessReview's spec as the kubelet sends it (authorization.k8s.io/v1). */
export interface SubjectAccessReviewSpec {
  resourceAttributes: {
    namespace: string;
    verb: string;
    group: string;
    version: string;
    resource: string;
    subresource: string;
    name: string;
  };
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

/** A SubjectAccessReview's status. */
export interface SubjectAccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

/** Creates SubjectAccessReviews (the API server call). */
export interface SubjectAccessReviewer {
  reviewAccess(
    spec: SubjectAccessReviewSpec,
  ): Promise<SubjectAccessReviewStatus>;
}

/** Options of {@linkcode createWebhookAuthorizer}. */
export interface WebhookAuthorizerOptions {
  /** `authorization.webhook.cacheAuthorizedTTL` in ms (default 5 min). */
  allowedTtlMs?: number;
  /** `authorization.webhook.cacheUnauthorizedTTL` in ms (default 30 s). */
  deniedTtlMs?: number;
  /** Most cached answers kept (default 10 000, upstream's cache size). */
  maxEntries?: number;
}

/** The review spec for a request (`resourceAttributesFrom` in the webhook authorizer). */
export function reviewSpec(
  user: UserInfo,
  attributes: RequestAttributes,
): SubjectAccessReviewSpec {
  return {
    resourceAttributes: {
      namespace: "",
      verb: attributes.verb,
      group: "",
      version: "v1",
      resource: attributes.resource,
      subresource: attributes.subresource,
      name: attributes.name,
    },
    user: user.name,
    groups: [...user.groups],
    ...(user.uid ? { uid: user.uid } : {}),
    ...(user.extra ? { extra: user.extra } : {}),
  };
}

/** `authorization.mode: Webhook` over `reviewer`, with the answer cache. */
export function createWebhookAuthorizer(
  deps: { reviewer: SubjectAccessReviewer; clock: Clock },
  options: WebhookAuthorizerOptions = {},
): Authorizer {
  const allowedTtl = options.allowedTtlMs ?? 5 * 60_000;
  const deniedTtl = options.deniedTtlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const cache = new Map<
    string,
    { decision: AuthorizationDecision; expires: number }
  >();
  return {
    async authorize(user, attributes) {
      if (attributes.verb === "") {
        return { allowed: false, reason: "no verb for this method" };
      }
      const spec = reviewSpec(user, attributes);
      const key = JSON.stringify(spec);
      const now = deps.clock.now();
      const hit = cache.get(key);
      if (hit && hit.expires > now) return hit.decision;
      cache.delete(key);
      const status = await deps.reviewer.reviewAccess(spec);
      const decision = {
        allowed: status.allowed === true && status.denied !== true,
        reason: status.reason ?? status.evaluationError ?? "",
      };
      const ttl = decision.allowed ? allowedTtl : deniedTtl;
      if (ttl > 0) {
        if (cache.size >= maxEntries) {
          cache.delete(cache.keys().next().value!);
        }
        cache.set(key, { decision, expires: now + ttl });
      }
      return decision;
    },
  };
}
