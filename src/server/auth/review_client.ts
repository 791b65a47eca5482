/**
 * The two API server calls the kubelet API's authentication and authorization make —
 * TokenReview and SubjectAccessReview — over `fetch` with the kubelet's own kubeconfig
 * credentials (client certificate and key through `Deno.createHttpClient`, or a bearer token).
 * Kept narrow and apart so it can move behind src/api's client later; nothing else here talks
 * to the API server.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import { dir, isAbs, join } from "../../util/posix_path.ts";
import { readYaml } from "../../util/yaml.ts";
import type {
  SubjectAccessReviewer,
  SubjectAccessReviewSpec,
  SubjectAccessReviewStatus,
} from "./authorize.ts";
import type { TokenReviewer, TokenReviewStatus } from "./token_webhook.ts";

/** Where and how to reach the API server. */
export interface ReviewConnection {
  /** Base URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** PEM of the cluster CA; omitted → the system roots. */
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
}

/** Both review calls, closed with `close()`. */
export interface ReviewClient extends TokenReviewer, SubjectAccessReviewer {
  close(): void;
}

/** Options of {@linkcode createReviewClient}. */
export interface ReviewClientOptions {
  /** Per-call timeout (default 10 s, upstream's webhook request timeout). */
  timeoutMs?: number;
  /** For tests. */
  fetch?: typeof fetch;
}

type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function named(config: Dict, list: string, name: unknown, field: string): Dict {
  const entries = Array.isArray(config[list]) ? config[list] : [];
  const entry = entries.find((e) =>
    isDict(e) && (name === undefined || e.name === name)
  );
  return isDict(entry) && isDict(entry[field]) ? entry[field] : {};
}

function base64Text(value: string): string {
  const bin = atob(value.replace(/\s+/g, ""));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/**
 * The current context's server and credentials from a kubeconfig file (`*-data` before file
 * fields, relative files against the kubeconfig's directory, as client-go).
 * @throws {SyntaxError} for unparsable text; {TypeError} when no server is named.
 */
export async function loadReviewConnection(
  path: string,
): Promise<ReviewConnection> {
  const value = (await readYaml(await Deno.readTextFile(path))).value;
  if (!isDict(value)) {
    throw new SyntaxError(`Kubeconfig "${path}" is not a map`);
  }
  const context = named(value, "contexts", value["current-context"], "context");
  const cluster = named(value, "clusters", context.cluster, "cluster");
  const user = named(value, "users", context.user, "user");
  const base = dir(path);
  const text = async (dataKey: string, fileKey: string, entry: Dict) => {
    const data = entry[dataKey];
    if (typeof data === "string" && data) return base64Text(data);
    const file = entry[fileKey];
    if (typeof file !== "string" || !file) return undefined;
    return await Deno.readTextFile(isAbs(file) ? file : join(base, file));
  };
  const server = cluster.server;
  if (typeof server !== "string" || !server) {
    throw new TypeError(`Kubeconfig "${path}" names no API server`);
  }
  const caPem = await text(
    "certificate-authority-data",
    "certificate-authority",
    cluster,
  );
  const certPem = await text(
    "client-certificate-data",
    "client-certificate",
    user,
  );
  const keyPem = await text("client-key-data", "client-key", user);
  const token = typeof user.token === "string" && user.token
    ? user.token
    : (await text("", "tokenFile", user))?.trim();
  return {
    server: server.replace(/\/+$/, ""),
    ...(caPem ? { caPem } : {}),
    ...(certPem ? { certPem } : {}),
    ...(keyPem ? { keyPem } : {}),
    ...(token ? { token } : {}),
  };
}

/** The review calls over one HTTP client for `connection`. */
export function createReviewClient(
  connection: ReviewConnection,
  options: ReviewClientOptions = {},
): ReviewClient {
  const client = Deno.createHttpClient({
    ...(connection.caPem ? { caCerts: [connection.caPem] } : {}),
    ...(connection.certPem && connection.keyPem
      ? { cert: connection.certPem, key: connection.keyPem }
      : {}),
  });
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  async function create(path: string, body: unknown): Promise<Dict> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (connection.token) headers.authorization = `Bearer ${connection.token}`;
    const response = await doFetch(`${connection.server}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      client,
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (response.status !== 201 && response.status !== 200) {
      throw new Error(
        `POST ${path} answered ${response.status}: ${text.slice(0, 200)}`,
      );
    }
    const parsed: unknown = JSON.parse(text);
    return isDict(parsed) && isDict(parsed.status) ? parsed.status : {};
  }
  return {
    async reviewToken(token: string): Promise<TokenReviewStatus> {
      return await create("/apis/authentication.k8s.io/v1/tokenreviews", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: { token },
      }) as TokenReviewStatus;
    },
    async reviewAccess(
      spec: SubjectAccessReviewSpec,
    ): Promise<SubjectAccessReviewStatus> {
      const status = await create(
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec,
        },
      );
      return {
        allowed: status.allowed === true,
        ...(status.denied === true ? { denied: true } : {}),
        ...(typeof status.reason === "string" ? { reason: status.reason } : {}),
        ...(typeof status.evaluationError === "string"
          ? { evaluationError: status.evaluationError }
          : {}),
      };
    },
    close() {
      client.close();
    },
  };
}

/** Options of {@linkcode createReloadingReviewClient}. */
export interface ReloadingReviewClientOptions extends ReviewClientOptions {
  clock: Clock;
  /** How often the credentials are read again (default 1 min). */
  refreshMs?: number;
}

/**
 * Review calls whose credentials are read again by `load` at most every `refreshMs`: the
 * kubelet's client certificate is rotated by replacing its file, and calls made with the old
 * one would fail once it expires. A failed reload keeps the last good credentials.
 * @param first the credentials already loaded (a bad kubeconfig fails at start, not later).
 */
export function createReloadingReviewClient(
  first: ReviewConnection,
  options: ReloadingReviewClientOptions & {
    load: () => Promise<ReviewConnection>;
  },
): ReviewClient {
  const refreshMs = options.refreshMs ?? 60_000;
  let current = {
    key: JSON.stringify(first),
    client: createReviewClient(first, options),
  };
  let loadedAt = options.clock.now();
  let reloading: Promise<void> | undefined;
  const refresh = async () => {
    if (options.clock.now() - loadedAt < refreshMs) return;
    reloading ??= (async () => {
      try {
        const connection = await options.load();
        const key = JSON.stringify(connection);
        if (key !== current.key) {
          const old = current.client;
          current = { key, client: createReviewClient(connection, options) };
          old.close();
        }
      } catch {
        // keep the last good credentials
      } finally {
        loadedAt = options.clock.now();
        reloading = undefined;
      }
    })();
    await reloading;
  };
  return {
    async reviewToken(token) {
      await refresh();
      return await current.client.reviewToken(token);
    },
    async reviewAccess(spec) {
      await refresh();
      return await current.client.reviewAccess(spec);
    },
    close() {
      current.client.close();
    },
  };
}
