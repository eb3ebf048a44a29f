/**
 * A small Prometheus registry: counters and histograms with labels, rendered in the text exposition
 * format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/). Small enough to read
 * in one sitting, so the process carries no client library it does not need.
 */

type Labels = Readonly<Record<string, string>>

interface Metric {
  readonly name: string
  render (): string
}

// Exposition format: label values escape backslash, double quote and line feed.
function escapeLabel (value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function labelText (labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))
  if (extra) pairs.push(extra)
  if (pairs.length === 0) return ''
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
}

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

function formatNumber (n: number): string {
  if (n === Infinity) return '+Inf'
  return String(n)
}

/** A counter series bound to one label set. */
export interface BoundCounter {
  inc (by?: number): void
}

/** A histogram series bound to one label set. */
export interface BoundHistogram {
  observe (value: number): void
}

export class Counter implements Metric {
  readonly #values = new Map<string, { labels: Labels, value: number }>()
  constructor (readonly name: string, readonly help: string) {}

  inc (labels: Labels = {}, by = 1): void {
    const key = keyOf(labels)
    const entry = this.#values.get(key)
    if (entry) entry.value += by
    else this.#values.set(key, { labels, value: by })
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
            entry = { labels, value: 0 }
            values.set(key, entry)
          }
        }
        entry.value += by
      }
    }
  }

  /** Current value for these labels (0 when never incremented). */
  get (labels: Labels = {}): number {
    return this.#values.get(keyOf(labels))?.value ?? 0
  }

  render (): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`]
    for (const { labels, value } of this.#values.values()) lines.push(`${this.name}${labelText(labels)} ${formatNumber(value)}`)
    return lines.join('\n')
  }
}

interface HistogramSeries { readonly labels: Labels, readonly counts: number[], sum: number, count: number }

export class Histogram implements Metric {
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
      series = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 }
      this.#series.set(key, series)
    }
    return series
  }

  #add (series: HistogramSeries, value: number): void {
    for (let i = 0; i < this.buckets.length; i++) {
      if (value <= this.buckets[i]!) series.counts[i]!++
    }
    series.sum += value
    series.count++
  }

  /** Number of observations for these labels. */
  count (labels: Labels = {}): number {
    return this.#series.get(keyOf(labels))?.count ?? 0
  }

  render (): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`]
    for (const { labels, counts, sum, count } of this.#series.values()) {
      // Buckets are cumulative: each counts the observations at or below its bound.
      this.buckets.forEach((bound, i) => lines.push(`${this.name}_bucket${labelText(labels, ['le', formatNumber(bound)])} ${counts[i]}`))
      lines.push(`${this.name}_bucket${labelText(labels, ['le', '+Inf'])} ${count}`)
      lines.push(`${this.name}_sum${labelText(labels)} ${sum}`)
      lines.push(`${this.name}_count${labelText(labels)} ${count}`)
    }
    return lines.join('\n')
  }
}

export class Registry {
  readonly #metrics: Metric[] = []

  register<M extends Metric> (metric: M): M {
    if (this.#metrics.some(m => m.name === metric.name)) throw new Error(`Cannot register metric: ${metric.name} is already registered`)
    this.#metrics.push(metric)
    return metric
  }

  /** The whole registry in the Prometheus text format. */
  render (): string {
    return this.#metrics.map(m => m.render()).join('\n') + '\n'
  }
}

/** Content type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
