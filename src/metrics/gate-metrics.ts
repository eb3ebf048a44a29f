/**
 * Gate metrics fed from what the gate already produces, so the commit path needs no metric calls:
 * decisions and findings come from its audit records, base loads from wrapping its table loader.
 */
import type { AuditRecord, AuditSink } from '../audit/audit-log.js'
import { metrics as processMetrics, type BaseLoadOutcome, type IceguardMetrics } from './iceguard-metrics.js'
import type { BoundCounter } from './registry.js'

/** Most label sets an audit sink keeps a bound series for; others are counted the plain way. */
const MAX_BOUND = 512

/**
 * An audit sink that counts each decision by verdict and each rule that fired, by severity. It is
 * called once per commit, so each label set's series is bound once and kept (the label key is
 * not rebuilt per commit). Verdicts, rule ids and severities come from the engine, not from the
 * caller, so the sets are few; the bound only guards against a future caller-shaped label.
 */
export function metricsAuditSink (m: IceguardMetrics = processMetrics): AuditSink {
  const decisions = new Map<string, BoundCounter>()
  const findings = new Map<string, BoundCounter>()
  const decision = (verdict: string): BoundCounter | undefined => {
    let bound = decisions.get(verdict)
    if (bound === undefined && decisions.size < MAX_BOUND) {
      bound = m.decisions.labels({ verdict, source: 'commit' })
      decisions.set(verdict, bound)
    }
    return bound
  }
  const finding = (rule: string, severity: 'warn' | 'error'): BoundCounter | undefined => {
    const key = `${severity}:${rule}`
    let bound = findings.get(key)
    if (bound === undefined && findings.size < MAX_BOUND) {
      bound = m.findings.labels({ rule, severity, source: 'commit' })
      findings.set(key, bound)
    }
    return bound
  }
  return {
    record (entry: AuditRecord): void {
      const d = decision(entry.verdict)
      if (d !== undefined) d.inc()
      else m.decisions.inc({ verdict: entry.verdict, source: 'commit' })
      if (entry.rules.length === 0) return
      for (const rule of entry.rules) {
        const severity = entry.warnings.includes(rule) ? 'warn' : 'error'
        const f = finding(rule, severity)
        if (f !== undefined) f.inc()
        else m.findings.inc({ rule, severity, source: 'commit' })
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
