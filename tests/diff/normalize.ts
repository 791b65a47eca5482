/**
 * Turns a CRI trace recorded by peers/criproxy (one JSON object per call) into what two
 * kubelets can be compared on: per pod, the lifecycle calls in order (sandbox and container
 * attempts by name, never by runtime ID) and the configs they sent, with the values that
 * differ between any two runs (IDs, UIDs, root directories, times) masked.
 */

/** One line of a criproxy trace. */
export interface TraceEntry {
  start: string;
  durationMs: number;
  method: string;
  request?: Record<string, unknown>;
  response?: Record<string, unknown>;
  error?: string;
}

/** One lifecycle call against a pod, e.g. `CreateContainer app#1`. */
export interface PodEvent {
  call: string;
  /** Container name, for container calls. */
  container?: string;
  /** Attempt number from the config, for RunPodSandbox and CreateContainer. */
  attempt?: number;
  /** StopContainer's timeout in seconds. */
  timeout?: number;
  /** The runtime's error, when the call failed. */
  error?: boolean;
}

export interface PodTrace {
  events: PodEvent[];
  /** The first sandbox config sent for the pod, masked. */
  sandboxConfig?: unknown;
  /** The first container config sent per container name, masked. */
  containerConfigs: Record<string, unknown>;
}

/** The calls that change a pod's state in the runtime. */
const LIFECYCLE = new Set([
  "RunPodSandbox",
  "StopPodSandbox",
  "RemovePodSandbox",
  "CreateContainer",
  "StartContainer",
  "StopContainer",
  "RemoveContainer",
]);

/**
 * The entries of a trace file, one JSON object per line. A trace read while its proxy still
 * writes may end in half a line: that last, unterminated line is left for the next read.
 */
export function parseTrace(text: string): TraceEntry[] {
  const lines = text.split("\n");
  // the text after the last newline is a line still being written
  lines.pop();
  return lines.filter((l) => l.trim() !== "").map((l) =>
    JSON.parse(l) as TraceEntry
  );
}

/** `/runtime.v1.RuntimeService/CreateContainer` → `CreateContainer`. */
export function shortMethod(method: string): string {
  return method.slice(method.lastIndexOf("/") + 1);
}

export interface MaskOptions {
  /** Directories that belong to one run (root dirs, log dirs): replaced by `<name>`. */
  paths: Record<string, string>;
  /** Pod UIDs seen in the trace: replaced by `<uid>`. */
  uids?: string[];
}

const ID_RE = /\b[0-9a-f]{64}\b/g;
const UUID_RE =
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;
const HEX32_RE = /\b[0-9a-f]{32}\b/g;
const TIME_RE = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
// Both kubelets name a container's termination-log file with 8 random hex digits.
const TERMINATION_FILE_RE = /(\/containers\/[^/]+\/)[0-9a-f]{8}$/;
// The API server names a pod's service account token volume with 5 random characters.
const TOKEN_VOLUME_RE = /\bkube-api-access-[a-z0-9]{5}\b/g;

function maskString(s: string, options: MaskOptions): string {
  let out = s;
  // Longest first, so a directory inside another is replaced by its own name.
  const dirs = Object.entries(options.paths).sort((a, b) =>
    b[1].length - a[1].length
  );
  for (const [name, dir] of dirs) {
    if (dir) out = out.split(dir).join(`<${name}>`);
  }
  for (const uid of options.uids ?? []) {
    if (uid) out = out.split(uid).join("<uid>");
  }
  return out.replace(ID_RE, "<id>").replace(UUID_RE, "<uid>")
    .replace(HEX32_RE, "<uid>").replace(TIME_RE, "<time>")
    .replace(TERMINATION_FILE_RE, "$1<random>")
    .replace(TOKEN_VOLUME_RE, "kube-api-access-<random>");
}

/** A deep copy with every string masked and object keys sorted. */
export function mask(value: unknown, options: MaskOptions): unknown {
  if (typeof value === "string") return maskString(value, options);
  if (Array.isArray(value)) return value.map((v) => mask(v, options));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[maskString(key, options)] = mask(
        (value as Record<string, unknown>)[key],
        options,
      );
    }
    return out;
  }
  return value;
}

interface Metadata {
  name?: string;
  namespace?: string;
  uid?: string;
  attempt?: number;
}

function podKey(meta: Metadata | undefined): string | undefined {
  return meta?.name ? `${meta.namespace ?? ""}/${meta.name}` : undefined;
}

/**
 * Per pod (`namespace/name`), its lifecycle calls and first configs. Calls naming an ID the
 * trace never created (another client's objects) are left out.
 */
export function podTraces(
  entries: TraceEntry[],
  options: MaskOptions,
): Map<string, PodTrace> {
  const pods = new Map<string, PodTrace>();
  const sandboxPod = new Map<string, string>();
  const containerOf = new Map<string, { pod: string; name: string }>();
  const uids = new Set(options.uids ?? []);
  for (const e of entries) {
    const cfg = e.request?.config as { metadata?: Metadata } | undefined;
    if (shortMethod(e.method) === "RunPodSandbox" && cfg?.metadata?.uid) {
      uids.add(cfg.metadata.uid);
    }
  }
  const masking = { ...options, uids: [...uids] };
  const podOf = (key: string): PodTrace => {
    let p = pods.get(key);
    if (!p) {
      p = { events: [], containerConfigs: {} };
      pods.set(key, p);
    }
    return p;
  };
  for (const e of entries) {
    const call = shortMethod(e.method);
    if (!LIFECYCLE.has(call)) continue;
    const req = e.request ?? {};
    const res = e.response ?? {};
    const error = e.error !== undefined ? { error: true } : {};
    switch (call) {
      case "RunPodSandbox": {
        const config = req.config as { metadata?: Metadata } | undefined;
        const key = podKey(config?.metadata);
        if (!key) break;
        const pod = podOf(key);
        pod.events.push({
          call,
          attempt: config?.metadata?.attempt ?? 0,
          ...error,
        });
        pod.sandboxConfig ??= mask(config, masking);
        if (typeof res.podSandboxId === "string") {
          sandboxPod.set(res.podSandboxId, key);
        }
        break;
      }
      case "CreateContainer": {
        const key = sandboxPod.get(req.podSandboxId as string);
        const config = req.config as { metadata?: Metadata } | undefined;
        const name = config?.metadata?.name;
        if (!key || !name) break;
        const pod = podOf(key);
        pod.events.push({
          call,
          container: name,
          attempt: config?.metadata?.attempt ?? 0,
          ...error,
        });
        pod.containerConfigs[name] ??= mask(config, masking);
        if (typeof res.containerId === "string") {
          containerOf.set(res.containerId, { pod: key, name });
        }
        break;
      }
      case "StartContainer":
      case "StopContainer":
      case "RemoveContainer": {
        const c = containerOf.get(req.containerId as string);
        if (!c) break;
        const event: PodEvent = { call, container: c.name, ...error };
        if (call === "StopContainer") event.timeout = Number(req.timeout ?? 0);
        podOf(c.pod).events.push(event);
        break;
      }
      case "StopPodSandbox":
      case "RemovePodSandbox": {
        const key = sandboxPod.get(req.podSandboxId as string);
        if (key) podOf(key).events.push({ call, ...error });
        break;
      }
    }
  }
  return pods;
}

/** `CreateContainer app#1`, `StopContainer app (30s)`, `RunPodSandbox #0`, `… !` on error. */
export function formatEvent(e: PodEvent): string {
  let s = e.call;
  if (e.container !== undefined) s += ` ${e.container}`;
  if (e.attempt !== undefined) s += `#${e.attempt}`;
  if (e.timeout !== undefined) s += ` (${e.timeout}s)`;
  if (e.error) s += " !";
  return s;
}

/** Calls a kubelet makes for several containers at once, in no fixed order. */
const UNORDERED = new Set(["StopContainer", "RemoveContainer"]);

/**
 * The lifecycle as a list of distinct steps: repeats of the same call in a row (retries,
 * idempotent stops that both kubelets may send any number of times) count once, and a run
 * of stops or removals in a row is sorted (both kubelets stop a pod's containers in
 * parallel).
 */
export function lifecycle(events: PodEvent[]): string[] {
  const out: string[] = [];
  let run: string[] = [];
  let runCall = "";
  const flush = () => {
    for (const s of [...new Set(run)].sort()) out.push(s);
    run = [];
    runCall = "";
  };
  for (const e of events) {
    const s = formatEvent(e);
    if (UNORDERED.has(e.call)) {
      if (runCall !== e.call) flush();
      runCall = e.call;
      run.push(s);
      continue;
    }
    flush();
    if (out[out.length - 1] !== s) out.push(s);
  }
  flush();
  return out;
}

/** Differences between two JSON values as `path: a ≠ b` lines. */
export function jsonDiff(a: unknown, b: unknown, path = ""): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const isObj = (v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(ao), ...Object.keys(bo)])].sort();
    return keys.flatMap((k) =>
      jsonDiff(ao[k], bo[k], path ? `${path}.${k}` : k)
    );
  }
  const show = (v: unknown) => v === undefined ? "(absent)" : JSON.stringify(v);
  return [`${path || "(value)"}: ${show(a)} ≠ ${show(b)}`];
}
