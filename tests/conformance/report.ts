/**
 * Reading the suite's JUnit report and scoring it: per test passed, failed, skipped or
 * an environment failure (a test that needed an image this machine cannot build), the
 * totals, and the comparison of two kubelets' runs. Pure: scripts/conformance.ts does the I/O.
 */

export type Outcome = "passed" | "failed" | "skipped" | "environment";

export interface TestResult {
  name: string;
  outcome: Outcome;
  seconds: number;
  /** The first line of the failure or skip message, for the summary. */
  message: string;
}

/**
 * Explains a failure by the environment: `text` found in the failure, in the failed test's
 * output (its log lines, where a command's stderr shows that the machine refused it), or in
 * the test name.
 */
export interface EnvironmentRule {
  in: "failure" | "output" | "name";
  text: string;
  why: string;
}

export interface Score {
  passed: number;
  failed: number;
  skipped: number;
  environment: number;
}

const ENTITIES: Record<string, string> = {
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&apos;": "'",
  "&amp;": "&",
};

function unescapeXml(s: string): string {
  return s.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (e) => {
    if (e.startsWith("&#x")) {
      return String.fromCodePoint(parseInt(e.slice(3, -1), 16));
    }
    if (e.startsWith("&#")) return String.fromCodePoint(Number(e.slice(2, -1)));
    return ENTITIES[e] ?? e;
  });
}

function attribute(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? unescapeXml(m[1]!) : undefined;
}

/**
 * The test cases of a Ginkgo JUnit report whose names `select` accepts (the report also
 * lists every spec the filter left out, as skipped). Suite setup and teardown nodes, named
 * `[SynchronizedBeforeSuite]` and the like, are kept: a failed setup fails the run.
 * A failure that `environment` explains (the failure text or the test name contains the
 * rule's text: an image this machine cannot build, a known gap of a stand-in image) is an
 * environment failure, never the kubelet's and never a pass.
 */
export function parseJUnit(
  xml: string,
  select: (name: string) => boolean,
  environment: readonly EnvironmentRule[] = [],
): TestResult[] {
  const results: TestResult[] = [];
  const cases = xml.matchAll(
    /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g,
  );
  for (const c of cases) {
    const head = c[1] ?? "";
    const body = c[3] ?? "";
    const name = testName(attribute(head, "name") ?? "");
    const setup = /^\[[A-Za-z]+Suite\]/.test(name);
    if (!setup && !select(name)) continue;
    const seconds = Number(attribute(head, "time") ?? "0");
    const failure = /<(failure|error)\b([^>]*?)(\/>|>([\s\S]*?)<\/\1>)/.exec(
      body,
    );
    const skipped = /<skipped\b([^>]*?)\/?>/.exec(body);
    if (failure) {
      const text = unescapeXml(
        `${attribute(failure[2] ?? "", "message") ?? ""}\n${failure[4] ?? ""}`,
      );
      const where = { failure: text, name, output: unescapeXml(body) };
      const env = environment.find((e) => where[e.in].includes(e.text));
      results.push({
        name,
        outcome: env ? "environment" : "failed",
        seconds,
        message: env ? env.why : firstLine(text),
      });
    } else if (skipped || attribute(head, "status") === "skipped") {
      const why = attribute(skipped?.[1] ?? "", "message") ?? "";
      // Specs the filter left out are listed as skipped without a reason: not selected.
      if (setup || why === "skipped" || why === "") continue;
      results.push({
        name,
        outcome: "skipped",
        seconds,
        message: firstLine(why.replace(/^skipped - /, "")),
      });
    } else {
      if (setup) continue;
      results.push({ name, outcome: "passed", seconds, message: "" });
    }
  }
  return results;
}

/**
 * "[It] <text> [label, label...]" as Ginkgo reports it → "<text>", the name the tests go by
 * (a [NodeConformance] test has at least two labels, its SIG and NodeConformance).
 */
export function testName(reported: string): string {
  return reported.replace(/^\[It\] /, "").replace(/ \[[^\]]*, [^\]]*\]$/, "");
}

function firstLine(text: string): string {
  const line = text.split("\n").map((l) => l.trim()).find((l) => l !== "") ??
    "";
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

export function score(results: readonly TestResult[]): Score {
  const s: Score = { passed: 0, failed: 0, skipped: 0, environment: 0 };
  for (const r of results) s[r.outcome]++;
  return s;
}

/** Tests that pass with the upstream kubelet and do not pass with ours. */
export function regressions(
  upstream: readonly TestResult[],
  ours: readonly TestResult[],
): TestResult[] {
  const byName = new Map(ours.map((r) => [r.name, r]));
  return upstream.filter((u) => u.outcome === "passed").map((u) =>
    byName.get(u.name) ??
      {
        name: u.name,
        outcome: "failed" as const,
        seconds: 0,
        message: "not run",
      }
  ).filter((o) => o.outcome !== "passed");
}

function scoreLine(label: string, s: Score, seconds: number): string {
  const total = s.passed + s.failed + s.skipped + s.environment;
  return `${label}: ${total} tests, ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped, ` +
    `${s.environment} environment failures (${Math.round(seconds / 60)} min)`;
}

export interface Run {
  kubelet: string;
  results: TestResult[];
  seconds: number;
}

/** The Markdown summary of one or two runs. */
export function renderSummary(runs: readonly Run[]): string {
  const lines = ["# NodeConformance results", ""];
  for (const r of runs) {
    lines.push(`- ${scoreLine(r.kubelet, score(r.results), r.seconds)}`);
  }
  const upstream = runs.find((r) => r.kubelet === "upstream");
  const ours = runs.find((r) => r.kubelet === "ours");
  if (upstream && ours) {
    const lost = regressions(upstream.results, ours.results);
    lines.push("", `## Pass with upstream, not with ours (${lost.length})`, "");
    for (const l of lost) {
      lines.push(`- ${l.name}: ${l.outcome} — ${l.message}`);
    }
  }
  // One table, a column per kubelet: "outcome (seconds)", the reason for anything but a pass.
  const names = [...new Set(runs.flatMap((r) => r.results.map((t) => t.name)))]
    .sort();
  const byRun = runs.map((r) => new Map(r.results.map((t) => [t.name, t])));
  lines.push("", "## Per test", "");
  lines.push(`| test | ${runs.map((r) => r.kubelet).join(" | ")} |`);
  lines.push(`| --- |${runs.map(() => " --- |").join("")}`);
  for (const name of names) {
    const cells = byRun.map((m) => {
      const t = m.get(name);
      if (!t) return "not run";
      const why = t.message ? `: ${t.message}` : "";
      return `${t.outcome} (${t.seconds.toFixed(0)} s)${why}`;
    });
    lines.push(`| ${name} | ${cells.join(" | ")} |`.replaceAll("\n", " "));
  }
  return lines.join("\n") + "\n";
}
