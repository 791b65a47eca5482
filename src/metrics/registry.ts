/**
 * A small Prometheus registry: counters and histograms with fixed label names, written in the
 * text exposition format (0.0.4). Recording is cheap on purpose: a caller binds a child for its
 * label values once (`labels(...)`, cached) and then only adds numbers to it; `observe` walks
 * the bucket bounds without allocating.
 *
 * @module
 */

/** A label value as the text format writes it. */
export function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll(
    '"',
    '\\"',
  );
}

/** A number as the text format writes it (`+Inf`, `NaN`). */
function formatValue(value: number): string {
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return Number.isNaN(value) ? "NaN" : String(value);
}

/** Prometheus' default histogram buckets (seconds). */
export const DEFAULT_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

/** `count` bounds from `start`, each `factor` times the previous one. */
export function exponentialBuckets(
  start: number,
  factor: number,
  count: number,
): number[] {
  const out: number[] = [];
  for (let i = 0, b = start; i < count; i++, b *= factor) out.push(b);
  return out;
}

/** One counter series. */
export class CounterChild {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

/** One histogram series: per-bucket counts (not cumulative until written), sum and count. */
export class HistogramChild {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(value: number): void {
    this.sum += value;
    this.count++;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

interface FamilyOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
}

abstract class Family<C> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly children = new Map<string, { labels: string; child: C }>();

  constructor(options: FamilyOptions) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
  }

  protected abstract make(): C;

  /** The series of these label values (in `labelNames` order), created on first use. */
  labels(...values: string[]): C {
    const key = values.join("\u0000");
    let entry = this.children.get(key);
    if (!entry) {
      if (values.length !== this.labelNames.length) {
        throw new RangeError(
          `Metric ${this.name} takes labels ${this.labelNames.join(", ")}`,
        );
      }
      const labels = this.labelNames.map((n, i) =>
        `${n}="${escapeLabel(values[i]!)}"`
      ).join(",");
      entry = { labels, child: this.make() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  /** Forgets a series (a pod that is gone). */
  remove(...values: string[]): void {
    this.children.delete(values.join("\u0000"));
  }

  abstract write(out: string[]): void;
}

/** A counter family. */
export class Counter extends Family<CounterChild> {
  protected make(): CounterChild {
    return new CounterChild();
  }
  write(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`);
    for (const { labels, child } of this.children.values()) {
      out.push(
        `${this.name}${labels ? `{${labels}}` : ""} ${
          formatValue(child.value)
        }`,
      );
    }
  }
}

/** A histogram family with fixed bucket bounds. */
export class Histogram extends Family<HistogramChild> {
  readonly bounds: readonly number[];
  constructor(options: FamilyOptions & { buckets?: readonly number[] }) {
    super(options);
    this.bounds = options.buckets ?? DEFAULT_BUCKETS;
  }
  protected make(): HistogramChild {
    return new HistogramChild(this.bounds);
  }
  write(out: string[]): void {
    out.push(
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} histogram`,
    );
    for (const { labels, child } of this.children.values()) {
      const sep = labels ? `${labels},` : "";
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += child.counts[i]!;
        out.push(
          `${this.name}_bucket{${sep}le="${
            formatValue(this.bounds[i]!)
          }"} ${cumulative}`,
        );
      }
      out.push(`${this.name}_bucket{${sep}le="+Inf"} ${child.count}`);
      const plain = labels ? `{${labels}}` : "";
      out.push(`${this.name}_sum${plain} ${formatValue(child.sum)}`);
      out.push(`${this.name}_count${plain} ${child.count}`);
    }
  }
}

/** A set of families written together. */
export class Registry {
  readonly #families: Array<Counter | Histogram> = [];

  counter(options: FamilyOptions): Counter {
    const family = new Counter(options);
    this.#families.push(family);
    return family;
  }

  histogram(
    options: FamilyOptions & { buckets?: readonly number[] },
  ): Histogram {
    const family = new Histogram(options);
    this.#families.push(family);
    return family;
  }

  /** The exposition text of every family (in registration order). */
  text(): string {
    const out: string[] = [];
    for (const family of this.#families) family.write(out);
    return out.length ? `${out.join("\n")}\n` : "";
  }
}
