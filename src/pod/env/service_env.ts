/**
 * Service environment variables (upstream `getServiceEnvVarMap` and `envvars.FromServices`):
 * for each Service with a cluster IP, `<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT` (first
 * port), `<NAME>_SERVICE_PORT_<PORTNAME>` (named ports), and the Docker-link style
 * `<NAME>_PORT` (first port) and `<NAME>_PORT_<port>_<PROTO>{,_PROTO,_PORT,_ADDR}`, names
 * upper-cased with `-` as `_`. A pod sees the Services of its namespace when
 * `enableServiceLinks` is on (default) and always the `kubernetes` Service of `default`.
 * @module
 */
import type { Service } from "../../api/mod.ts";

/** The Services the kubelet has read (its service informer); absent in standalone mode. */
export interface ServiceLister {
  /** Whether the first LIST has completed. */
  hasSynced(): boolean;
  /** Every Service known (all namespaces). */
  list(): Service[];
}

/** The error upstream gives an API pod's container while services were never listed. */
export const SERVICES_NOT_SYNCED =
  "services have not yet been read at least once, cannot construct envvars";

/** The Services always exposed to every pod, from the `default` namespace. */
const MASTER_SERVICES = new Set(["kubernetes"]);

function hasClusterIP(service: Service): boolean {
  const ip = service.spec?.clusterIP ?? "";
  return ip !== "" && ip !== "None";
}

function envName(name: string): string {
  return name.replaceAll("-", "_").toUpperCase();
}

function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** One Service's variables, in upstream's order. */
export function serviceVariables(service: Service): [string, string][] {
  const ports = service.spec?.ports ?? [];
  const ip = service.spec?.clusterIP ?? "";
  const prefix = envName(service.metadata.name ?? "");
  const out: [string, string][] = [[`${prefix}_SERVICE_HOST`, ip]];
  // validation requires at least one port; without one there is nothing more to say
  if (ports.length === 0) return out;
  out.push([`${prefix}_SERVICE_PORT`, String(ports[0]!.port)]);
  for (const p of ports) {
    if (p.name) {
      out.push([`${prefix}_SERVICE_PORT_${envName(p.name)}`, String(p.port)]);
    }
  }
  ports.forEach((p, i) => {
    const proto = (p.protocol || "TCP").toLowerCase();
    const url = `${proto}://${joinHostPort(ip, p.port)}`;
    if (i === 0) out.push([`${prefix}_PORT`, url]);
    const portPrefix = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
    out.push(
      [portPrefix, url],
      [`${portPrefix}_PROTO`, proto],
      [`${portPrefix}_PORT`, String(p.port)],
      [`${portPrefix}_ADDR`, ip],
    );
  });
  return out;
}

/**
 * The service variables of a pod in `namespace`: its namespace's Services (with
 * `enableServiceLinks`) and the master Services of `default`; a Service of the pod's namespace
 * replaces a master Service of the same name, as upstream.
 */
export function serviceEnvVars(
  services: Iterable<Service>,
  namespace: string,
  enableServiceLinks: boolean,
): Map<string, string> {
  const chosen = new Map<string, Service>();
  for (const service of services) {
    if (!hasClusterIP(service)) continue;
    const name = service.metadata.name ?? "";
    const ns = service.metadata.namespace ?? "default";
    if (ns === "default" && MASTER_SERVICES.has(name)) {
      if (!chosen.has(name)) chosen.set(name, service);
    } else if (ns === namespace && enableServiceLinks) {
      chosen.set(name, service);
    }
  }
  const vars = new Map<string, string>();
  for (const service of chosen.values()) {
    for (const [k, v] of serviceVariables(service)) vars.set(k, v);
  }
  return vars;
}
