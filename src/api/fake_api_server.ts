/**
 * An in-memory API server for unit tests: Nodes, Leases and CSRs with resourceVersions,
 * 409s on stale or duplicate writes, a call log, queued errors per method, and a small
 * strategic-merge-patch applier for node status patches.
 * @module
 */
import {
  ApiAlreadyExistsError,
  ApiConflictError,
  ApiNotFoundError,
  type ApiStatusError,
} from "./errors.ts";
import type {
  CertificateSigningRequest,
  CsrApi,
  Lease,
  LeaseApi,
  Node,
  NodeApi,
} from "./types.ts";

type Method = keyof NodeApi | keyof LeaseApi | keyof CsrApi;

function clone<T>(value: T): T {
  return structuredClone(value);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Applies the subset of strategic merge patch the kubelet sends: objects merge, `null`
 * deletes a key, and a list ending in `{"$patch": "replace"}` replaces the list.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (Array.isArray(patch)) {
    return patch.filter((e) => !(isObject(e) && e.$patch === "replace"));
  }
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/** The in-memory API server; implements every consumer interface. */
export class FakeApiServer implements NodeApi, LeaseApi, CsrApi {
  /** Every call in order, with its first argument's name where it has one. */
  readonly calls: { method: Method; name: string; body?: unknown }[] = [];
  readonly nodes = new Map<string, Node>();
  readonly leases = new Map<string, Lease>();
  readonly csrs = new Map<string, CertificateSigningRequest>();
  #errors = new Map<Method, ApiStatusError[]>();
  #rv = 0;
  #uid = 0;

  /** Queues `error` for the next call of `method`. */
  injectError(method: Method, error: ApiStatusError): void {
    this.#errors.set(method, [...(this.#errors.get(method) ?? []), error]);
  }

  #enter(method: Method, name: string, body?: unknown): Promise<void> {
    this.calls.push({ method, name, ...(body === undefined ? {} : { body }) });
    const error = this.#errors.get(method)?.shift();
    return error ? Promise.reject(error) : Promise.resolve();
  }

  #stamp<T extends { metadata: { resourceVersion?: string; uid?: string } }>(
    obj: T,
    isNew: boolean,
  ): T {
    obj.metadata.resourceVersion = String(++this.#rv);
    if (isNew) obj.metadata.uid = `uid-${++this.#uid}`;
    return obj;
  }

  async getNode(name: string): Promise<Node | undefined> {
    await this.#enter("getNode", name);
    const n = this.nodes.get(name);
    return n ? clone(n) : undefined;
  }

  async createNode(node: Node): Promise<Node> {
    const name = node.metadata.name ?? "";
    await this.#enter("createNode", name, clone(node));
    if (this.nodes.has(name)) {
      throw new ApiAlreadyExistsError(`nodes "${name}" already exists`, {
        code: 409,
        reason: "AlreadyExists",
      });
    }
    const stored = this.#stamp(clone(node), true);
    this.nodes.set(name, stored);
    return clone(stored);
  }

  async patchNodeStatus(name: string, patch: unknown): Promise<Node> {
    await this.#enter("patchNodeStatus", name, clone(patch));
    const node = this.nodes.get(name);
    if (!node) {
      throw new ApiNotFoundError(`nodes "${name}" not found`, {
        code: 404,
        reason: "NotFound",
      });
    }
    const { spec: _ignored, ...rest } = (patch ?? {}) as Record<
      string,
      unknown
    >;
    const next = applyMergePatch(node, rest) as Node;
    next.spec = node.spec ?? {};
    this.nodes.set(name, this.#stamp(next, false));
    return clone(next);
  }

  async getLease(namespace: string, name: string): Promise<Lease | undefined> {
    await this.#enter("getLease", name);
    const l = this.leases.get(`${namespace}/${name}`);
    return l ? clone(l) : undefined;
  }

  async createLease(lease: Lease): Promise<Lease> {
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    await this.#enter("createLease", lease.metadata.name ?? "", clone(lease));
    if (this.leases.has(key)) {
      throw new ApiAlreadyExistsError(`leases "${key}" already exists`, {
        code: 409,
        reason: "AlreadyExists",
      });
    }
    const stored = this.#stamp(clone(lease), true);
    this.leases.set(key, stored);
    return clone(stored);
  }

  async updateLease(lease: Lease): Promise<Lease> {
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    await this.#enter("updateLease", lease.metadata.name ?? "", clone(lease));
    const old = this.leases.get(key);
    if (
      !old || old.metadata.resourceVersion !== lease.metadata.resourceVersion
    ) {
      throw new ApiConflictError(
        `leases "${key}": the object has been modified`,
        {
          code: 409,
          reason: "Conflict",
        },
      );
    }
    const stored = this.#stamp(clone(lease), false);
    stored.metadata.uid = old.metadata.uid ?? "";
    this.leases.set(key, stored);
    return clone(stored);
  }

  async createCsr(
    csr: CertificateSigningRequest,
  ): Promise<CertificateSigningRequest> {
    const name = csr.metadata.name ?? `csr-${this.#uid + 1}`;
    await this.#enter("createCsr", name, clone(csr));
    if (this.csrs.has(name)) {
      throw new ApiAlreadyExistsError(`csr "${name}" already exists`, {
        code: 409,
        reason: "AlreadyExists",
      });
    }
    const stored = this.#stamp(clone(csr), true);
    stored.metadata.name = name;
    this.csrs.set(name, stored);
    return clone(stored);
  }

  async getCsr(name: string): Promise<CertificateSigningRequest | undefined> {
    await this.#enter("getCsr", name);
    const c = this.csrs.get(name);
    return c ? clone(c) : undefined;
  }
}
