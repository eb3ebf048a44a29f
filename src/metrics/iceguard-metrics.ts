/**
 * The metrics iceguard exposes at `/metrics`, on prom-client's registry. One set per process
 * (`metrics`), with prom-client's default metrics (`process_*`, `nodejs_*`: CPU, memory, heap, GC,
 * event-loop delay, file descriptors); tests read counters before and after, never absolute values.
 *
 * Label values come from small fixed sets (route patterns and operation kinds, methods, status
 * codes, verdicts, rule ids, outcomes, cache names): never a table, namespace or caller.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Metric } from 'prom-client'
import { HotCounter, HotHistogram } from './hot-series.js'

/** Where a decision was made: a real commit through the gate, or a dry run on the admin API. */
type DecisionSource = 'commit' | 'dry-run'

/** How a base-metadata load ended. */
export type BaseLoadOutcome = 'loaded' | 'not-found' | 'refused' | 'failed'

/** The decision log's backlog, read at each scrape (`DecisionLog.stats()`). */
export interface DecisionLogReading {
  /** Writes waiting to be stored. */
  readonly pending: number
  /** ms the oldest waiting write has waited (0 when none waits). */
  readonly oldestAgeMs: number
  /** Flush attempts that failed since the start. */
  readonly flushFailures: number
}

/** One cache's size, read at each scrape. */
export interface CacheReading {
  readonly cache: 'base' | 'schema-texts' | 'schema-history'
  readonly entries: number
  /** Approximate bytes held (characters of text for schema texts). */
  readonly bytes: number
  /** Entries that left for the budget since the start. */
  readonly evictions: number
}

/** The policy in force, read at each scrape (`PolicyStore`). */
export interface PolicyReading {
  readonly loadedAt: Date
  /** Why the last reload failed, until one succeeds. */
  readonly lastError: string | undefined
}

/** What the gauges read at scrape time; set by the process wiring (src/main/app.ts). */
interface Sources {
  decisionLog?: () => DecisionLogReading
  caches?: () => readonly CacheReading[]
  policy?: () => PolicyReading
}

export interface IceguardMetrics {
  readonly registry: Registry
  /** Every answer, by route pattern or operation kind, method and status (hot path). */
  readonly requests: HotCounter
  /** Time to answer, by kind of call and status class (hot path; src/edge/answer-kind.ts). */
  readonly answers: HotHistogram
  /** Upstream round trips, by method and status (hot path). */
  readonly upstreamLatency: HotHistogram
  readonly decisions: Counter<'verdict' | 'source'>
  readonly findings: Counter<'rule' | 'severity' | 'source'>
  readonly baseLoads: Counter<'outcome'>
  /** The gate's judgement of one write: CPU time, no I/O (src/gate/commit-gate.ts). */
  readonly judgement: Histogram<never>
  readonly decisionStore: Counter<'outcome'>
  readonly webhookDeliveries: Counter<'outcome'>
  readonly tableHistory: Counter<'outcome'>
  /** Where the gauges read from; the last wiring to set a source wins (one app per process). */
  readonly sources: Sources
}

// Catalog round trips run from single-digit milliseconds (local fixture) to seconds (loaded cloud catalogs).
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
// iceguard's own answers include the fast lane's sub-millisecond relays.
const ANSWER_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
// A judgement is CPU only: tens of microseconds on a small table, milliseconds on wide histories.
const JUDGEMENT_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

interface MetricsOptions {
  /** Registers prom-client's default process and Node.js metrics (the process-wide set does). */
  readonly defaults?: boolean
}

export function createMetrics (options: MetricsOptions = {}): IceguardMetrics {
  const registry = new Registry()
  if (options.defaults === true) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const hot = <M extends HotCounter | HotHistogram>(metric: M): M => {
    // prom-client renders any object with its metric shape; its types list only its own classes.
    registry.registerMetric(metric as unknown as Metric)
    return metric
  }
  const sources: Sources = {}

  const m: IceguardMetrics = {
    registry,
    sources,
    requests: hot(new HotCounter('iceguard_http_requests_total',
      'HTTP requests answered, by route pattern, method and status code.')),
    answers: hot(new HotHistogram('iceguard_answer_duration_seconds',
      'Time from a request\'s head to the end of iceguard\'s answer, by kind of call (load, write, commit, gated-commit, config, refused, admin) and status class.', ANSWER_BUCKETS)),
    upstreamLatency: hot(new HotHistogram('iceguard_upstream_request_duration_seconds',
      'Time from sending a request to the upstream catalog to its response headers, by method and status.', LATENCY_BUCKETS)),
    decisions: new Counter({ name: 'iceguard_decisions_total', help: 'Gate decisions, by verdict and source (commit or dry-run).', labelNames: ['verdict', 'source'], registers }),
    findings: new Counter({ name: 'iceguard_findings_total', help: 'Rule findings in gate decisions, by rule id, severity and source.', labelNames: ['rule', 'severity', 'source'], registers }),
    baseLoads: new Counter({ name: 'iceguard_base_loads_total', help: 'Loads of a table\'s current metadata from the upstream to judge a commit, by outcome.', labelNames: ['outcome'], registers }),
    judgement: new Histogram({ name: 'iceguard_gate_judgement_duration_seconds', help: 'Time the gate spent judging a schema-changing write against its bases and the policy (CPU; the base loads are not included).', buckets: JUDGEMENT_BUCKETS, registers }),
    decisionStore: new Counter({ name: 'iceguard_decision_store_total', help: 'Decision log writes, by outcome: stored, failed (the store was down; retried from the buffer), not-stored (buffer full or shut down).', labelNames: ['outcome'], registers }),
    webhookDeliveries: new Counter({ name: 'iceguard_webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome: delivered, retry, failed (gave up).', labelNames: ['outcome'], registers }),
    tableHistory: new Counter({ name: 'iceguard_gate_history_total', help: 'Reads of a table\'s schema-history summary by the gate\'s history rules, by outcome: reused, extended (only new schemas read), built (read whole), evicted (a table dropped for the memory budget), over-budget (kept summaries exceed --gate-history-memory because one table alone does).', labelNames: ['outcome'], registers })
  }

  // Gauges read their source at scrape time: nothing on the request path. Registering is all
  // they need; the list only keeps them named.
  const scraped: Array<Gauge | Counter> = []
  scraped.push(new Gauge({
    name: 'iceguard_decision_store_queue_length',
    help: 'Decision log writes waiting to be stored.',
    registers,
    collect () { this.set(sources.decisionLog?.().pending ?? 0) }
  }))
  scraped.push(new Gauge({
    name: 'iceguard_decision_store_oldest_unstored_age_seconds',
    help: 'Age of the oldest decision log write still waiting to be stored (0 when none waits).',
    registers,
    collect () { this.set((sources.decisionLog?.().oldestAgeMs ?? 0) / 1000) }
  }))
  scraped.push(new Counter({
    name: 'iceguard_decision_store_flush_failures_total',
    help: 'Attempts to store a batch of decisions that failed (the batch stays buffered and is retried).',
    registers,
    collect () { this.reset(); this.inc(sources.decisionLog?.().flushFailures ?? 0) }
  }))
  const cacheGauge = (name: string, help: string, read: (c: CacheReading) => number): void => {
    scraped.push(new Gauge({
      name,
      help,
      labelNames: ['cache'],
      registers,
      collect () {
        for (const c of sources.caches?.() ?? []) this.set({ cache: c.cache }, read(c))
      }
    }))
  }
  cacheGauge('iceguard_cache_entries', 'Entries kept in each of the gate\'s caches: base (parsed metadata by ETag), schema-texts, schema-history.', c => c.entries)
  cacheGauge('iceguard_cache_bytes', 'Approximate bytes kept in each of the gate\'s caches.', c => c.bytes)
  scraped.push(new Counter({
    name: 'iceguard_cache_evictions_total',
    help: 'Entries that left one of the gate\'s caches to stay within its budget.',
    labelNames: ['cache'],
    registers,
    collect () {
      this.reset()
      for (const c of sources.caches?.() ?? []) this.inc({ cache: c.cache }, c.evictions)
    }
  }))
  scraped.push(new Gauge({
    name: 'iceguard_policy_reload_failed',
    help: '1 while the last reload of the policy failed (the previous policy stays in force), else 0.',
    registers,
    collect () { this.set(sources.policy?.().lastError !== undefined ? 1 : 0) }
  }))
  scraped.push(new Gauge({
    name: 'iceguard_policy_loaded_timestamp_seconds',
    help: 'When the policy in force was loaded (Unix time).',
    registers,
    collect () {
      const policy = sources.policy?.()
      if (policy !== undefined) this.set(policy.loadedAt.getTime() / 1000)
    }
  }))
  return m
}

/** The process-wide metrics. */
export const metrics: IceguardMetrics = createMetrics({ defaults: true })

/** The parts of a gate evaluation the metrics count. */
interface CountedEvaluation {
  readonly verdict: string
  readonly findings: readonly { readonly rule: string, readonly severity: string }[]
}

/** Counts one dry-run decision and its findings (real commits are counted from audit records). */
export function recordDecision (evaluation: CountedEvaluation, source: DecisionSource, m: IceguardMetrics = metrics): void {
  m.decisions.inc({ source, verdict: evaluation.verdict })
  for (const f of evaluation.findings) m.findings.inc({ rule: f.rule, severity: f.severity, source })
}

/** Content type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE
