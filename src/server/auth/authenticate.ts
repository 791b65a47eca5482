/**
 * Who is asking: k8s.io/apiserver's delegating authenticator as the kubelet builds it
 * (`BuildAuthn` in cmd/kubelet/app/auth.go). Client certificate first, then a bearer token
 * through the TokenReview webhook; the first that names a user wins and gets the
 * `system:authenticated` group. Presented but rejected credentials are a 401 even when
 * anonymous access is on (upstream's `NewFailOnError` around the anonymous fallback); no
 * credentials at all become `system:anonymous` only when `authentication.anonymous.enabled`.
 *
 * @module
 */

import type { X509Certificate } from "node:crypto";
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { CertificateError, verifyClientCertificate } from "./x509.ts";

/** An authenticated identity (`user.Info`). */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What a request presents. */
export interface Credentials {
  /** The client's certificate chain as the TLS layer handed it over (leaf first, DER). */
  peerCertificates: readonly Uint8Array[];
  /** The `Authorization` header, if any. */
  authorization: string | null;
}

/** Reviews a bearer token (TokenReview); undefined when the token names nobody. */
export interface TokenAuthenticator {
  authenticateToken(token: string): Promise<UserInfo | undefined>;
}

/** The outcome: a user, or why the request is a 401. */
export type AuthenticationResult =
  | { user: UserInfo }
  | { user?: undefined; reason: string };

/** Authenticates one request's credentials. Rejects only when a webhook call failed. */
export type Authenticator = (
  credentials: Credentials,
) => Promise<AuthenticationResult>;

/** Dependencies of {@linkcode createAuthenticator}. */
export interface AuthenticatorDeps {
  clock: Clock;
  /** Warns once per certificate refused where upstream would accept it. */
  logger?: Logger;
  /** The TokenReview webhook (`authentication.webhook.enabled`); omitted → tokens are ignored. */
  tokens?: TokenAuthenticator;
}

/** Options of {@linkcode createAuthenticator}. */
export interface AuthenticatorOptions {
  /**
   * `authentication.x509.clientCAFile`, parsed, as it is now (the file is reloaded when it
   * changes); omitted or empty → certificates are ignored.
   */
  clientCAs?: () => readonly X509Certificate[];
  /** `authentication.anonymous.enabled`. */
  anonymous: boolean;
}

/** The anonymous identity (`anonymous.NewAuthenticator`). */
export const ANONYMOUS_USER: UserInfo = {
  name: "system:anonymous",
  groups: ["system:unauthenticated"],
};

const AUTHENTICATED_GROUP = "system:authenticated";

/**
 * The token of an `Authorization: Bearer <token>` header (the second space-separated word,
 * as upstream's `bearertoken` authenticator reads it), else undefined.
 */
export function bearerToken(header: string | null): string | undefined {
  if (!header) return undefined;
  const [scheme, token] = header.split(" ", 3);
  if (scheme?.toLowerCase() !== "bearer") return undefined;
  return token || undefined;
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

/** Builds the authenticator of the kubelet API. */
export function createAuthenticator(
  deps: AuthenticatorDeps,
  options: AuthenticatorOptions,
): Authenticator {
  const roots = () => options.clientCAs?.() ?? [];
  const warned = new Set<string>();
  const warnOnce = (error: CertificateError) => {
    if (!error.stricter || !deps.logger || warned.has(error.message)) return;
    if (warned.size >= 1000) warned.clear();
    warned.add(error.message);
    deps.logger.warn("Refusing a client certificate", { err: error.message });
  };
  return async (credentials) => {
    const problems: string[] = [];
    let presented = false;
    const cas = roots();
    if (cas.length && credentials.peerCertificates.length) {
      presented = true;
      try {
        const user = verifyClientCertificate(credentials.peerCertificates, {
          roots: cas,
          nowMs: deps.clock.now(),
        });
        return { user: withAuthenticatedGroup(user) };
      } catch (error) {
        if (!(error instanceof CertificateError)) throw error;
        warnOnce(error);
        problems.push(`x509: ${error.message}`);
      }
    }
    const token = deps.tokens ? bearerToken(credentials.authorization) : "";
    if (deps.tokens && token) {
      presented = true;
      const user = await deps.tokens.authenticateToken(token);
      if (user) return { user: withAuthenticatedGroup(user) };
      problems.push("invalid bearer token");
    }
    if (presented) return { reason: problems.join("; ") };
    if (options.anonymous) return { user: ANONYMOUS_USER };
    return { reason: "no credentials" };
  };
}
