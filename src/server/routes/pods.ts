/**
 * `/pods` (the kubelet's pods with their latest status, a v1 `PodList`), `/runningpods/` (the
 * pods the runtime runs, as upstream's `GetRunningPods`) and `/configz` (the effective
 * configuration as `{"kubeletconfig": {...}}`, which the node e2e suite reads).
 *
 * @module
 */

import type { Route } from "./healthz.ts";
import { fixedResponse } from "../fixed_body.ts";

/** A pod the runtime runs. */
export interface RuntimePod {
  uid: string;
  name: string;
  namespace: string;
  containers?: Array<{ name: string; image?: string }>;
}

/** What these routes read from the kubelet. */
export interface PodsHost {
  /**
   * The kubelet's pods (spec and latest status), as JSON-ready v1 Pod objects. Handing out the
   * same array again means nothing changed: `/pods` then reuses its last serialisation, so a
   * changed list must be a new array.
   */
  pods(): readonly unknown[];
  /** The pods the runtime runs. */
  runningPods(): Promise<readonly RuntimePod[]>;
  /** The effective KubeletConfiguration. */
  config(): Readonly<Record<string, unknown>>;
}

/** A JSON response (`application/json`). */
export function jsonResponse(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function podList(items: readonly unknown[]): unknown {
  return { kind: "PodList", apiVersion: "v1", metadata: {}, items };
}

/** A list's items carry no kind/apiVersion of their own in upstream's encoding. */
function withoutTypeFields(pod: unknown): unknown {
  if (pod === null || typeof pod !== "object") return pod;
  const { kind: _k, apiVersion: _v, ...rest } = pod as Record<string, unknown>;
  return rest;
}

/**
 * `GET /pods`. Serialising 110 pods takes milliseconds, more than the rest of the request, and
 * polling clients ask far more often than pods change: the body is kept per list.
 */
export function podsRoute(host: PodsHost): Route {
  let items: readonly unknown[] | undefined;
  let body = new Uint8Array();
  return () => {
    const current = host.pods();
    if (current !== items) {
      body = new TextEncoder().encode(
        JSON.stringify(podList(current.map(withoutTypeFields))),
      );
      items = current;
    }
    return Promise.resolve(
      fixedResponse(200, body, { "content-type": "application/json" }),
    );
  };
}

/** `GET /runningpods/`: metadata and containers only, as upstream's `ToAPIPod`. */
export function runningPodsRoute(host: PodsHost): Route {
  return async () => {
    const pods = await host.runningPods();
    return jsonResponse(
      200,
      podList(pods.map((pod) => ({
        metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid },
        spec: {
          // upstream's Container always serialises its resources, empty here
          containers: (pod.containers ?? []).map((c) => ({
            name: c.name,
            ...(c.image ? { image: c.image } : {}),
            resources: {},
          })),
        },
        status: {},
      }))),
    );
  };
}

/** Fields upstream's v1beta1 type leaves out when they are zero (`omitempty` on a plain int). */
const OMITTED_WHEN_ZERO = ["readOnlyPort"];

/** `GET /configz`: the versioned configuration without its type fields, as upstream. */
export function configzRoute(host: PodsHost): Route {
  return () => {
    const { apiVersion: _v, kind: _k, ...config }: Record<string, unknown> =
      host.config();
    for (const key of OMITTED_WHEN_ZERO) {
      if (config[key] === 0) delete config[key];
    }
    return Promise.resolve(jsonResponse(200, { kubeletconfig: config }));
  };
}
