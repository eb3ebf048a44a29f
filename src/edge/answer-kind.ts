/**
 * The kind of call an answer is counted and timed under (`iceguard_answer_duration_seconds`): a
 * few fixed values derived from the triage (src/edge/classify.ts), so label sets stay bounded
 * whatever the URLs.
 *
 *   load          a read forwarded as it came (loadTable, listTables, loadView, …)
 *   write         a write forwarded unjudged (drop, rename, metrics reports, …)
 *   commit        a table or transaction commit with no schema-changing update (forwarded from its bytes)
 *   gated-commit  a write handed to the gate: judged, then forwarded or refused
 *   config        `GET /v1/config`, read whole and rewritten
 *   refused       refused by the triage, nothing forwarded
 *   admin         iceguard's own routes (admin API, console, health, metrics, docs)
 */
import type { RouteKind } from './classify.js'
import type { IceguardMetrics } from '../metrics/iceguard-metrics.js'
import type { BoundHistogram } from '../metrics/hot-series.js'

export type AnswerKind = 'load' | 'write' | 'commit' | 'gated-commit' | 'config' | 'refused' | 'admin'

export function answerKind (kind: RouteKind, method: string, judged: boolean): AnswerKind {
  switch (kind) {
    case 'passthrough': return method === 'GET' || method === 'HEAD' ? 'load' : 'write'
    case 'local': return 'admin'
    case 'config': return 'config'
    case 'refused': return 'refused'
    default: return judged ? 'gated-commit' : 'commit'
  }
}

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const

/**
 * Observes answer times into one bound series per kind and status class (at most 7 × 5), so an
 * observation builds no label key.
 */
export function answerTimer (m: IceguardMetrics): (kind: AnswerKind, status: number, seconds: number) => void {
  const series = new Map<string, BoundHistogram>()
  return (kind, status, seconds) => {
    const cls = CLASSES[Math.floor(status / 100) - 1] ?? '5xx'
    const key = kind + cls
    let bound = series.get(key)
    if (bound === undefined) {
      bound = m.answers.labels({ kind, status_class: cls })
      series.set(key, bound)
    }
    bound.observe(seconds)
  }
}
