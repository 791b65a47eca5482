/**
 * Enforces the import layout between areas:
 * - code in one `src/<area>` imports another area only through a `mod.ts`
 *   (or `testing.ts`, and that only from tests);
 * - no import cycles between areas, nor between files (type-only imports
 *   included: a circle of types is a circle of meaning too).
 * `src/util` is a folder of independent leaf helpers (Go-compatible parsers)
 * with no public face of its own, so its files are imported directly.
 * Usage: deno run --allow-read scripts/check_imports.ts
 */
const ROOT = new URL("..", import.meta.url).pathname;
const IMPORT_REGEXP =
  /(?:^|\n)\s*(?:import|export)\s(?:type\s)?[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

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
    const spec = m[1] ?? m[2] ?? "";
    if (!spec.startsWith(".")) continue;
    const target = normalize(file.slice(0, file.lastIndexOf("/")) + "/" + spec);
    if (!isTest(file) && !isTest(target)) {
      if (!fileEdges.has(file)) fileEdges.set(file, new Set());
      fileEdges.get(file)!.add(target);
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
