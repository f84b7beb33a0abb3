// Prometheus' text exposition format, version 0.0.4, written by hand: the format is a
// few rules (prometheus.io, "Exposition formats", Text format details), and this package
// takes no dependency beyond better-sqlite3.
//
// - One group of lines per metric: `# HELP`, `# TYPE`, then its samples, uninterrupted.
// - A sample is `name{label="value",…} value`; a label value escapes `\`, `"` and the line
//   feed as `\\`, `\"` and `\n`; a HELP text escapes `\` and the line feed.
// - A histogram `x` is written as `x_bucket{le="…"}` per upper bound in increasing order,
//   cumulative, ending with `le="+Inf"` equal to `x_count`, then `x_sum` and `x_count`.
// - Values are Go floats: `+Inf`, `-Inf` and `NaN` spelled so.
// - Every line ends with a line feed, the last one too.
//
// Names follow Prometheus' conventions, and misuse is thrown at once (a TypeError naming
// the metric): a counter's name ends in `_total`, no other name does, and the suffixes a
// histogram writes are left to histograms.

/** The Content-Type of the format. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

// The data model's names (prometheus.io, "Data model"): labels starting with `__` are
// reserved for Prometheus' own use, and `le` for a histogram's buckets.
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const HISTOGRAM_SUFFIXES = /_(?:bucket|count|sum)$/;

/** Label name → value; the order given is the order written. */
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels?: Labels;
  readonly value: number;
}

export interface HistogramSeries {
  readonly labels?: Labels;
  /** Observations per bucket, not cumulative: `counts[i]` fell in (bounds[i-1], bounds[i]], the last one above every bound. */
  readonly counts: ArrayLike<number>;
  readonly sum: number;
}

export type Family =
  | {
      readonly type: 'counter' | 'gauge';
      readonly name: string;
      readonly help: string;
      readonly samples: readonly Sample[];
    }
  | {
      readonly type: 'histogram';
      readonly name: string;
      readonly help: string;
      /** Upper bounds, increasing, without `+Inf`. */
      readonly bounds: readonly number[];
      readonly series: readonly HistogramSeries[];
    };

/** The families in the text format, in the order given. Throws a TypeError on a name or series the format forbids. */
export function writeExposition(families: readonly Family[]): string {
  const seen = new Set<string>();
  let text = '';
  for (const family of families) {
    checkFamily(family, seen);
    text += `# HELP ${family.name} ${escapeHelp(family.help)}\n# TYPE ${family.name} ${family.type}\n`;
    if (family.type === 'histogram') {
      const { bounds } = family;
      for (const series of family.series) {
        if (series.counts.length !== bounds.length + 1) {
          throw new TypeError(
            `histogram ${family.name} needs ${bounds.length + 1} counts, one per bound and one above them`,
          );
        }
        let cumulative = 0;
        for (let i = 0; i <= bounds.length; i += 1) {
          cumulative += series.counts[i] as number;
          const le = i < bounds.length ? formatValue(bounds[i] as number) : '+Inf';
          text += `${family.name}_bucket${labelSet(series.labels, le)} ${formatValue(cumulative)}\n`;
        }
        text += `${family.name}_sum${labelSet(series.labels)} ${formatValue(series.sum)}\n`;
        text += `${family.name}_count${labelSet(series.labels)} ${formatValue(cumulative)}\n`;
      }
    } else {
      for (const sample of family.samples)
        text += `${family.name}${labelSet(sample.labels)} ${formatValue(sample.value)}\n`;
    }
  }
  return text;
}

function checkFamily(family: Family, seen: Set<string>): void {
  const { name, type } = family;
  if (!METRIC_NAME.test(name)) throw new TypeError(`metric name ${JSON.stringify(name)} is not a Prometheus name`);
  if (seen.has(name)) throw new TypeError(`metric ${name} is written twice`);
  seen.add(name);
  // prometheus.io, "Metric and label naming": an accumulating count has `_total`, nothing else does.
  if ((type === 'counter') !== name.endsWith('_total')) {
    throw new TypeError(`metric ${name}: a counter's name ends in _total, and only a counter's`);
  }
  if (HISTOGRAM_SUFFIXES.test(name))
    throw new TypeError(`metric ${name}: _bucket, _count and _sum belong to histograms`);
  const identities = new Set<string>();
  const labelled = family.type === 'histogram' ? family.series : family.samples;
  if (family.type === 'histogram') checkBounds(name, family.bounds);
  for (const { labels } of labelled) {
    for (const label of Object.keys(labels ?? {})) {
      if (!LABEL_NAME.test(label) || label.startsWith('__')) {
        throw new TypeError(`metric ${name}: label name ${JSON.stringify(label)} is not a Prometheus label name`);
      }
      if (family.type === 'histogram' && label === 'le')
        throw new TypeError(`histogram ${name}: the label le is its own`);
    }
    // Each line must have a unique combination of metric name and labels.
    const identity = labelSet(labels);
    if (identities.has(identity)) throw new TypeError(`metric ${name} has the labels ${identity || '{}'} twice`);
    identities.add(identity);
  }
}

function checkBounds(name: string, bounds: readonly number[]): void {
  for (let i = 0; i < bounds.length; i += 1) {
    const bound = bounds[i] as number;
    if (!Number.isFinite(bound) || (i > 0 && bound <= (bounds[i - 1] as number))) {
      throw new TypeError(`histogram ${name}: bounds must be finite and increasing`);
    }
  }
}

/** `{a="x",b="y"}` (with `le` last when given), or `` for no labels. */
function labelSet(labels: Labels | undefined, le?: string): string {
  let text = '';
  for (const name in labels) text += `${text === '' ? '' : ','}${name}="${escapeLabelValue(labels[name] as string)}"`;
  if (le !== undefined) text += `${text === '' ? '' : ','}le="${le}"`;
  return text === '' ? '' : `{${text}}`;
}

export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** A sample value as Go's ParseFloat reads it. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  // JavaScript's shortest round-trip spelling (`0.005`, `1e-7`, `1.5e+21`) is a Go float too.
  return String(value);
}
