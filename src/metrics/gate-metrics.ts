/**
 * Gate metrics fed from what the gate already produces, so the commit path needs no metric calls:
 * decisions and findings come from its audit records, base loads from wrapping its table loader.
 */
import type { AuditRecord, AuditSink } from '../audit/audit-log.js'
import { metrics as processMetrics, type BaseLoadOutcome, type IceguardMetrics } from './iceguard-metrics.js'

/**
 * An audit sink that counts each decision by verdict and each rule that fired, by severity. It is
 * called once per gated commit, whose judgement costs hundreds of microseconds: prom-client's
 * per-call label lookup is nothing next to it. Verdicts, rule ids and severities come from the
 * engine, not from the caller, so the label sets are few.
 */
export function metricsAuditSink (m: IceguardMetrics = processMetrics): AuditSink {
  return {
    record (entry: AuditRecord): void {
      m.decisions.inc({ source: 'commit', verdict: entry.verdict })
      // Label names in order, as every series prints (prom-client prints them as given).
      for (const rule of entry.rules) {
        m.findings.inc({ rule, severity: entry.warnings.includes(rule) ? 'warn' : 'error', source: 'commit' })
      }
    }
  }
}

/** What a base load answered, as far as counting goes (the gate's `BaseLoad`, src/gate/gate-types.ts). */
interface CountedLoad {
  readonly status: number
  readonly metadata?: unknown
}

function outcomeOf (load: CountedLoad): BaseLoadOutcome {
  if (load.status === 200) return load.metadata !== undefined ? 'loaded' : 'failed'
  if (load.status === 404) return 'not-found'
  if (load.status === 401 || load.status === 403 || load.status === 419) return 'refused'
  return 'failed'
}

/** Wraps a base-metadata loader so every load is counted by outcome (`failed` when it throws). */
export function countBaseLoads<A extends unknown[], L extends CountedLoad> (
  load: (...args: A) => Promise<L>,
  m: IceguardMetrics = processMetrics
): (...args: A) => Promise<L> {
  return async (...args: A) => {
    try {
      const result = await load(...args)
      m.baseLoads.inc({ outcome: outcomeOf(result) })
      return result
    } catch (err) {
      m.baseLoads.inc({ outcome: 'failed' })
      throw err
    }
  }
}
