/**
 * Enforces the import layout between areas:
 * - code in one `src/<area>` imports another area only through a `mod.ts`
 *   (or `testing.ts`, and that only from tests);
 * - no import cycles between areas, nor between files (type-only imports
 *   included: a circle of types is a circle of meaning too);
 * - inside an area split into sub-areas (folders), a sub-area imports only
 *   the sub-areas declared before it in {@linkcode SUB_AREA_ORDER}, and the
 *   area's own top-level files (shared types) import no sub-area; its
 *   `mod.ts` and `testing.ts` may import any.
 * `src/util` is a folder of independent leaf helpers (Go-compatible parsers)
 * with no public face of its own, so its files are imported directly.
 * Usage: deno run --allow-read scripts/check_imports.ts
 */
const ROOT = new URL("..", import.meta.url).pathname;

/**
 * The direction between the sub-areas of an area: each may import the ones
 * listed before it, never one after it.
 */
const SUB_AREA_ORDER: Readonly<Record<string, readonly string[]>> = {
  pod: [
    "probes", // probe handlers, workers and results
    "cgroups", // resources, QoS and the pod cgroups
    "logs", // container log files: links, rotation, reading
    "static", // static pod manifests and their mirror pods
    "sources", // file, HTTP and API sources merged into PodUpdates
    "env", // container environment variables and their sources
    "containers", // what a container and its sandbox are made of
    "images", // image pulls and their credentials
    "resize", // in-place resize: allocations, their checkpoint, resize plans
    "status", // phase, conditions and the pod status
    "gc", // container garbage collection and local storage eviction
    "lifecycle", // decide and act: actions, syncer, workers, PLEG, sync loop
    "admission", // which pods may run on the node
  ],
};

/** `[area, sub-area]` of a file under `src/`; sub-area "" is the area's top. */
function subAreaOf(path: string): [string, string] | undefined {
  const m = /^src\/([^/]+)\/(?:([^/]+)\/)?[^/]+$/.exec(path.slice(ROOT.length));
  if (!m || !(m[1]! in SUB_AREA_ORDER)) return undefined;
  return [m[1]!, m[2] ?? ""];
}

/** The problem with `file` importing `target` inside one split area, if any. */
function subAreaProblem(file: string, target: string): string | undefined {
  const from = subAreaOf(file);
  const to = subAreaOf(target);
  if (!from || !to || from[0] !== to[0] || from[1] === to[1]) return undefined;
  if (to[1] === "") return undefined;
  const order = SUB_AREA_ORDER[from[0]]!;
  const base = file.slice(file.lastIndexOf("/") + 1);
  if (from[1] === "") {
    if (base === "mod.ts" || base === "testing.ts") return undefined;
    return `imports sub-area "${to[1]}" from the top of src/${from[0]}`;
  }
  if (!order.includes(to[1]) || !order.includes(from[1])) {
    return `sub-area "${
      order.includes(to[1]) ? from[1] : to[1]
    }" is not in SUB_AREA_ORDER`;
  }
  if (order.indexOf(to[1]) > order.indexOf(from[1])) {
    return `sub-area "${from[1]}" imports "${to[1]}", which comes after it`;
  }
  return undefined;
}
const IMPORT_REGEXP =
  /(?:^|\n)\s*(?:import|export)\s(?:type\s)?[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g;

function walk(dir: string, out: string[]): string[] {
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) {
      if (entry.name === "gen" || entry.name === "testdata") continue;
      walk(path, out);
    } else if (entry.name.endsWith(".ts")) {
      out.push(path);
    }
  }
  return out;
}

function areaOf(path: string): string | undefined {
  const rel = path.slice(ROOT.length);
  const m = /^src\/([^/]+)\//.exec(rel);
  return m?.[1];
}

function isTest(path: string): boolean {
  return path.endsWith("_test.ts") ||
    path.slice(ROOT.length).startsWith("tests/");
}

function normalize(path: string): string {
  const parts: string[] = [];
  for (const p of path.split("/")) {
    if (p === "..") parts.pop();
    else if (p !== "." && p !== "") parts.push(p);
  }
  return "/" + parts.join("/");
}

const problems: string[] = [];
const edges = new Map<string, Set<string>>();
/** File → the files it imports (product code only, tests left out). */
const fileEdges = new Map<string, Set<string>>();
const files = [...walk(`${ROOT}src`, []), `${ROOT}main.ts`];
for (const file of files) {
  const text = Deno.readTextFileSync(file);
  const from = areaOf(file);
  for (const m of text.matchAll(IMPORT_REGEXP)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? "";
    if (!spec.startsWith(".")) continue;
    const target = normalize(file.slice(0, file.lastIndexOf("/")) + "/" + spec);
    if (!isTest(file) && !isTest(target)) {
      if (!fileEdges.has(file)) fileEdges.set(file, new Set());
      fileEdges.get(file)!.add(target);
      const problem = subAreaProblem(file, target);
      if (problem) problems.push(`${file.slice(ROOT.length)}: ${problem}`);
    }
    const to = areaOf(target);
    if (!to || to === from) continue;
    if (to === "util") continue;
    const base = target.slice(target.lastIndexOf("/") + 1);
    const rel = file.slice(ROOT.length);
    if (base === "testing.ts" && !isTest(file)) {
      problems.push(`${rel}: imports test doubles "${spec}" outside a test`);
    } else if (
      base !== "mod.ts" && base !== "testing.ts" && from !== undefined
    ) {
      problems.push(`${rel}: imports "${spec}"; use that area's mod.ts`);
    }
    if (from && !isTest(file)) {
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
}

// Area-level cycle detection (depth-first, reporting each cycle once).
const state = new Map<string, "visiting" | "done">();
function visit(area: string, stack: string[]): void {
  state.set(area, "visiting");
  for (const next of edges.get(area) ?? []) {
    if (state.get(next) === "visiting") {
      const cycle = [...stack.slice(stack.indexOf(next)), next];
      problems.push(`import cycle between areas: ${cycle.join(" -> ")}`);
    } else if (!state.has(next)) {
      visit(next, [...stack, next]);
    }
  }
  state.set(area, "done");
}
for (const area of edges.keys()) if (!state.has(area)) visit(area, [area]);

/**
 * The strongly connected components of a graph with more than one node
 * (Tarjan's algorithm): each is one import circle, however many paths run
 * through it.
 */
function circles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  function connect(node: string): void {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  }
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return found;
}

for (const circle of circles(fileEdges)) {
  const names = circle.map((f) => f.slice(ROOT.length));
  problems.push(`import cycle between files: ${names.join(", ")}`);
}

if (problems.length > 0) {
  // deno-lint-ignore no-console
  console.error(problems.join("\n"));
  Deno.exit(1);
}
// deno-lint-ignore no-console
console.log(`imports ok: ${files.length} files, ${edges.size} areas`);
