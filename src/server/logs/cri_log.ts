/**
 * Container log files in the CRI format (`<RFC3339Nano time> <stdout|stderr> <P|F> <text>`)
 * turned into what `kubectl logs` shows, after upstream's `ReadLogs`
 * (pkg/kubelet/kuberuntime/logs/logs.go): a full (`F`) line ends with a newline, a partial
 * (`P`) one does not; `timestamps` prefixes each file line's text with its time; `tailLines`
 * counts file lines from the end; `since` drops older lines; `limitBytes` caps what is
 * written, prefixes included. Unparsable lines are skipped, as upstream.
 *
 * @module
 */

/** One parsed file line. */
export interface CriLogLine {
  /** The time as written (RFC 3339 with nanoseconds). */
  time: string;
  /** Milliseconds since the epoch. */
  timeMs: number;
  stream: "stdout" | "stderr";
  /** The text, with a trailing newline for a full line. */
  text: string;
}

/** What to keep and how to print it. */
export interface LogFilter {
  timestamps: boolean;
  /** Drop lines older than this (ms since the epoch). */
  sinceMs?: number;
  /** Stop after this many output bytes. */
  limitBytes?: number;
}

const LINE_REGEXP = /^(\S+) (stdout|stderr) ([PF]) (.*)$/s;

/** Parses one file line (without its newline); undefined when it is not CRI format. */
export function parseCriLine(line: string): CriLogLine | undefined {
  // A line may lack the text part entirely ("<time> stdout F").
  const m = LINE_REGEXP.exec(line) ?? LINE_REGEXP.exec(`${line} `);
  if (!m) return undefined;
  const [, time = "", stream, tag, text = ""] = m;
  const timeMs = Date.parse(time);
  if (Number.isNaN(timeMs)) return undefined;
  return {
    time,
    timeMs,
    stream: stream as "stdout" | "stderr",
    text: tag === "F" ? `${text}\n` : text,
  };
}

/** The index of the first of the last `n` lines of `lines`. */
export function tailStart(lineCount: number, n: number | undefined): number {
  if (n === undefined) return 0;
  return Math.max(0, lineCount - n);
}

/**
 * Formats lines until `budget` bytes (undefined: no limit) are written; returns the text and
 * how many bytes are left (undefined when unlimited; 0 means stop).
 */
export function formatLines(
  lines: Iterable<string>,
  options: LogFilter & { budget?: number | undefined },
): { text: string; budget: number | undefined } {
  const filter = options;
  let out = "";
  let left = options.budget;
  const encoder = new TextEncoder();
  for (const raw of lines) {
    if (left !== undefined && left <= 0) break;
    const line = parseCriLine(raw);
    if (!line) continue;
    if (filter.sinceMs !== undefined && line.timeMs < filter.sinceMs) continue;
    let piece = filter.timestamps ? `${line.time} ${line.text}` : line.text;
    if (left !== undefined) {
      const bytes = encoder.encode(piece);
      if (bytes.length > left) {
        piece = new TextDecoder().decode(bytes.subarray(0, left));
        left = 0;
      } else {
        left -= bytes.length;
      }
    }
    out += piece;
  }
  return { text: out, budget: left };
}
