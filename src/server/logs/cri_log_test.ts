import assert from "node:assert/strict";
import { formatLines, parseCriLine, tailStart } from "./cri_log.ts";

const LINES = [
  "2026-01-01T00:00:01.5Z stdout F one",
  "2026-01-01T00:00:02.123456789Z stderr P tw",
  "2026-01-01T00:00:02.2Z stderr F o",
  "not a cri line",
  "2026-01-01T00:00:03Z stdout F",
  "2026-01-01T00:00:04Z stdout F héllo",
];

Deno.test("parseCriLine() reads time, stream, tag and text", () => {
  assert.deepEqual(parseCriLine(LINES[0]!), {
    time: "2026-01-01T00:00:01.5Z",
    timeMs: Date.UTC(2026, 0, 1, 0, 0, 1, 500),
    stream: "stdout",
    text: "one\n",
  });
  assert.equal(parseCriLine(LINES[1]!)?.text, "tw");
  assert.equal(parseCriLine(LINES[4]!)?.text, "\n");
  assert.equal(
    parseCriLine("2026-01-01T00:00:01Z stdout F  two spaces")?.text,
    " two spaces\n",
  );
  assert.equal(parseCriLine(LINES[3]!), undefined);
  assert.equal(parseCriLine("yesterday stdout F x"), undefined);
  assert.equal(parseCriLine("2026-01-01T00:00:01Z stdin F x"), undefined);
});

Deno.test("formatLines() joins partial lines, adds timestamps, filters by time and caps bytes", () => {
  assert.deepEqual(formatLines(LINES, { timestamps: false }), {
    text: "one\ntwo\n\nhéllo\n",
    budget: undefined,
  });
  assert.equal(
    formatLines(LINES.slice(0, 3), { timestamps: true }).text,
    "2026-01-01T00:00:01.5Z one\n2026-01-01T00:00:02.123456789Z tw2026-01-01T00:00:02.2Z o\n",
  );
  assert.equal(
    formatLines(LINES, {
      timestamps: false,
      sinceMs: Date.UTC(2026, 0, 1, 0, 0, 3),
    }).text,
    "\nhéllo\n",
  );
  assert.deepEqual(formatLines(LINES, { timestamps: false, budget: 6 }), {
    text: "one\ntw",
    budget: 0,
  });
  // The cap counts bytes: "é" is two.
  assert.equal(
    formatLines(LINES.slice(5), { timestamps: false, budget: 3 }).text,
    "h\u00e9",
  );
  assert.equal(tailStart(10, 3), 7);
  assert.equal(tailStart(2, 3), 0);
  assert.equal(tailStart(2, 0), 2);
  assert.equal(tailStart(2, undefined), 0);
});
