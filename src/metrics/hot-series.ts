/**
 * Counters and histograms for the series touched on every request (answers counted and timed,
 * upstream round trips timed). prom-client's registry renders them with every other metric; only
 * their storage is kept here. Why: a prom-client `labels(...).inc()` or `.observe()` hashes its
 * label set on each call (about 0.3 µs for an increment and 0.55 µs for an observation on the
 * benchmark machine, against ~2 ns for a bound series here, docs/performance.md), and three such
 * calls per request would add about 2% to the fast lane's CPU on a small loadTable. A caller binds
 * a label set once (`labels()`) and each count is then an addition.
 */

type Labels = Readonly<Record<string, string>>

// The series key only has to be the same for the same label set, whatever the order its names
// were written in: names sorted by code unit, each name and value length-prefixed so no value can
// imitate a separator. Hot callers bind a label set once (`labels()`) and skip even this.
function keyOf (labels: Labels): string {
  const names = Object.keys(labels)
  if (names.length > 1) names.sort()
  let key = ''
  for (const name of names) {
    const value = labels[name] as string
    key += `${name.length}:${name}${value.length}:${value}`
  }
  return key
}

/** The label set with its names in order, so that a series prints the same way however it was written. */
function sorted (labels: Labels): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of Object.keys(labels).sort()) out[name] = labels[name] as string
  return out
}

/** A counter series bound to one label set. */
export interface BoundCounter {
  inc (by?: number): void
}

/** A histogram series bound to one label set. */
export interface BoundHistogram {
  observe (value: number): void
}

interface SeriesValue {
  readonly metricName?: string
  readonly labels: Readonly<Record<string, string | number>>
  readonly value: number
}

/** What prom-client's registry reads from a metric it renders (`registerMetric`, then `get()` at each scrape). */
interface Collected {
  readonly name: string
  readonly help: string
  readonly type: 'counter' | 'histogram'
  readonly aggregator: 'sum'
  readonly values: readonly SeriesValue[]
}

interface Collectable {
  readonly name: string
  readonly help: string
  readonly type: 'counter' | 'histogram'
  readonly aggregator: 'sum'
  get (): Collected
  reset (): void
}

export class HotCounter implements Collectable {
  readonly type = 'counter'
  readonly aggregator = 'sum'
  readonly #values = new Map<string, { labels: Labels, value: number }>()
  constructor (readonly name: string, readonly help: string) {}

  inc (labels: Labels = {}, by = 1): void {
    const key = keyOf(labels)
    const entry = this.#values.get(key)
    if (entry) entry.value += by
    else this.#values.set(key, { labels: sorted(labels), value: by })
  }

  /**
   * The series of one label set, for callers that count it often: the key is built once. The
   * series appears in the output on its first increment, as with `inc`.
   */
  labels (labels: Labels): BoundCounter {
    const key = keyOf(labels)
    const values = this.#values
    let entry: { labels: Labels, value: number } | undefined
    return {
      inc (by = 1): void {
        if (entry === undefined) {
          entry = values.get(key)
          if (entry === undefined) {
            entry = { labels: sorted(labels), value: 0 }
            values.set(key, entry)
          }
        }
        entry.value += by
      }
    }
  }

  /** Current value for these labels (0 when never incremented). */
  value (labels: Labels = {}): number {
    return this.#values.get(keyOf(labels))?.value ?? 0
  }

  get (): Collected {
    return {
      name: this.name,
      help: this.help,
      type: 'counter',
      aggregator: 'sum',
      values: [...this.#values.values()].map(({ labels, value }) => ({ labels, value }))
    }
  }

  /** Tests only (prom-client's `resetMetrics`): bound series keep counting into the entries they hold. */
  reset (): void {
    for (const entry of this.#values.values()) entry.value = 0
  }
}

interface HistogramSeries { readonly labels: Labels, readonly counts: number[], sum: number, count: number }

export class HotHistogram implements Collectable {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #series = new Map<string, HistogramSeries>()
  readonly buckets: readonly number[]
  constructor (readonly name: string, readonly help: string, buckets: readonly number[]) {
    this.buckets = [...buckets].sort((a, b) => a - b)
  }

  observe (labels: Labels, value: number): void {
    this.#add(this.#seriesOf(keyOf(labels), labels), value)
  }

  /** The series of one label set, for callers that observe it often: the key is built once. */
  labels (labels: Labels): BoundHistogram {
    const key = keyOf(labels)
    let series: HistogramSeries | undefined
    return {
      observe: (value: number): void => {
        series ??= this.#seriesOf(key, labels)
        this.#add(series, value)
      }
    }
  }

  #seriesOf (key: string, labels: Labels): HistogramSeries {
    let series = this.#series.get(key)
    if (!series) {
      series = { labels: sorted(labels), counts: this.buckets.map(() => 0), sum: 0, count: 0 }
      this.#series.set(key, series)
    }
    return series
  }

  #add (series: HistogramSeries, value: number): void {
    // Counts per bucket; made cumulative when read, so an observation touches one bucket.
    const buckets = this.buckets
    let i = 0
    while (i < buckets.length && value > (buckets[i] as number)) i++
    if (i < buckets.length) series.counts[i]!++
    series.sum += value
    series.count++
  }

  /** Number of observations for these labels. */
  count (labels: Labels = {}): number {
    return this.#series.get(keyOf(labels))?.count ?? 0
  }

  get (): Collected {
    const values: SeriesValue[] = []
    for (const { labels, counts, sum, count } of this.#series.values()) {
      // Buckets are cumulative in the exposition format: each counts the observations at or below its bound.
      let cumulative = 0
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i] as number
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: cumulative })
      })
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count })
      values.push({ metricName: `${this.name}_sum`, labels, value: sum })
      values.push({ metricName: `${this.name}_count`, labels, value: count })
    }
    return {
      name: this.name,
      help: this.help,
      type: 'histogram',
      aggregator: 'sum',
      values
    }
  }

  reset (): void {
    for (const series of this.#series.values()) {
      series.counts.fill(0)
      series.sum = 0
      series.count = 0
    }
  }
}
