/**
 * The metrics iceguard exposes at `/metrics`. One set per process (`metrics`), like a Prometheus
 * client's default registry; tests read counters before and after, never absolute values.
 */
import { Counter, Histogram, Registry } from './registry.js'

/** Where a decision was made: a real commit through the gate, or a dry run on the admin API. */
type DecisionSource = 'commit' | 'dry-run'

/** How a base-metadata load ended. */
export type BaseLoadOutcome = 'loaded' | 'not-found' | 'refused' | 'failed'

export interface IceguardMetrics {
  readonly registry: Registry
  readonly requests: Counter
  readonly decisions: Counter
  readonly findings: Counter
  readonly upstreamLatency: Histogram
  readonly baseLoads: Counter
  readonly decisionStore: Counter
  readonly webhookDeliveries: Counter
  readonly tableHistory: Counter
}

// Catalog round trips run from single-digit milliseconds (local fixture) to seconds (loaded cloud catalogs).
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export function createMetrics (): IceguardMetrics {
  const registry = new Registry()
  return {
    registry,
    requests: registry.register(new Counter('iceguard_http_requests_total',
      'HTTP requests answered, by route pattern, method and status code.')),
    decisions: registry.register(new Counter('iceguard_decisions_total',
      'Gate decisions, by verdict and source (commit or dry-run).')),
    findings: registry.register(new Counter('iceguard_findings_total',
      'Rule findings in gate decisions, by rule id, severity and source.')),
    upstreamLatency: registry.register(new Histogram('iceguard_upstream_request_duration_seconds',
      'Time from sending a request to the upstream catalog to its response headers, by method and status.', LATENCY_BUCKETS)),
    baseLoads: registry.register(new Counter('iceguard_base_loads_total',
      'Loads of a table\'s current metadata from the upstream to judge a commit, by outcome.')),
    decisionStore: registry.register(new Counter('iceguard_decision_store_total',
      'Decision log writes, by outcome: stored, failed (the store was down; retried from the buffer), not-stored (buffer full or shut down).')),
    webhookDeliveries: registry.register(new Counter('iceguard_webhook_deliveries_total',
      'Webhook delivery attempts, by outcome: delivered, retry, failed (gave up).')),
    tableHistory: registry.register(new Counter('iceguard_gate_history_total',
      'Reads of a table\'s schema-history summary by the gate\'s history rules, by outcome: reused, extended (only new schemas read), built (read whole), evicted (a table dropped for the memory budget), over-budget (kept summaries exceed --gate-history-memory because one table alone does).'))
  }
}

/** The process-wide metrics. */
export const metrics: IceguardMetrics = createMetrics()

/** The parts of a gate evaluation the metrics count. */
interface CountedEvaluation {
  readonly verdict: string
  readonly findings: readonly { readonly rule: string, readonly severity: string }[]
}

/** Counts one dry-run decision and its findings (real commits are counted from audit records). */
export function recordDecision (evaluation: CountedEvaluation, source: DecisionSource, m: IceguardMetrics = metrics): void {
  m.decisions.inc({ verdict: evaluation.verdict, source })
  for (const f of evaluation.findings) m.findings.inc({ rule: f.rule, severity: f.severity, source })
}
