/**
 * Gate metrics fed from what the gate already produces, so the commit path needs no metric calls:
 * decisions and findings come from its audit records, base loads from wrapping its table loader.
 */
import type { AuditRecord, AuditSink } from '../audit/audit-log.js'
import type { BaseLoad } from '../gate/commit-gate.js'
import { metrics as processMetrics, type BaseLoadOutcome, type IceguardMetrics } from './iceguard-metrics.js'

/** An audit sink that counts each decision by verdict and each rule that fired, by severity. */
export function metricsAuditSink (m: IceguardMetrics = processMetrics): AuditSink {
  return {
    record (entry: AuditRecord): void {
      m.decisions.inc({ verdict: entry.verdict, source: 'commit' })
      const warned = new Set(entry.warnings)
      for (const rule of entry.rules) m.findings.inc({ rule, severity: warned.has(rule) ? 'warn' : 'error', source: 'commit' })
    }
  }
}

function outcomeOf (load: BaseLoad): BaseLoadOutcome {
  if (load.status === 200) return load.metadata !== undefined ? 'loaded' : 'failed'
  if (load.status === 404) return 'not-found'
  if (load.status === 401 || load.status === 403 || load.status === 419) return 'refused'
  return 'failed'
}

/** Wraps a base-metadata loader so every load is counted by outcome (`failed` when it throws). */
export function countBaseLoads<A extends unknown[]> (
  load: (...args: A) => Promise<BaseLoad>,
  m: IceguardMetrics = processMetrics
): (...args: A) => Promise<BaseLoad> {
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
