/**
 * A stored decision: one judged write to one table. A transaction that touches three tables gives
 * three decisions sharing a request id, so "what happened to finance.orders" is one filter.
 */
import { randomUUID } from 'node:crypto'
import type { AuditRecord, DecidedFinding } from '../audit/audit-log.js'
import type { Verdict } from '../engine/rules/rule.js'
import type { TableRef } from '../iceberg/rest-path.js'

/** Facts of the write kept beside the queried columns. */
export interface DecisionDetails {
  readonly flows: readonly string[]
  readonly status: number
  readonly forwarded: boolean
  readonly durationMs: number
  /** The write's one-line summary (or why it was refused). */
  readonly summary: string
  readonly injected?: readonly string[]
  /** All tables of the write, dotted, when it touched more than one. */
  readonly tables?: readonly string[]
}

export interface Decision {
  readonly id: string
  /** Epoch milliseconds. */
  readonly time: number
  readonly requestId: string
  readonly principal?: string
  /** Levels and name; the route's `{prefix}` is not kept. */
  readonly table: Pick<TableRef, 'namespace' | 'name'>
  readonly kind: string
  readonly verdict: Verdict
  readonly findings: readonly DecidedFinding[]
  /** The schema diff summary, one line per change (empty when nothing was judged). */
  readonly changes: string
  readonly override?: { readonly id: string, readonly rules: readonly string[] }
  readonly details: DecisionDetails
}

/**
 * The decisions of one audit record, one per table. Tables the gate judged come with their
 * findings; a write refused before judging comes with the identities of the tables it named (or
 * none, when it named none: one decision with an empty name records the refusal).
 */
export function decisionsFromAudit (entry: AuditRecord, time: number, newId: () => string = randomUUID): Decision[] {
  const judged = entry.decided ?? []
  const tables: Array<{ table: Decision['table'], findings: readonly DecidedFinding[], changes: string }> = judged.length > 0
    ? judged.map(d => ({ table: { namespace: [...d.namespace], name: d.name }, findings: d.findings.map(plainFinding), changes: d.summary }))
    : (entry.tableRefs.length > 0 ? entry.tableRefs : [{ namespace: [], name: '' }])
        .map(t => ({ table: { namespace: [...t.namespace], name: t.name }, findings: [], changes: '' }))
  const details: DecisionDetails = {
    flows: entry.flows,
    status: entry.status,
    forwarded: entry.forwarded,
    durationMs: entry.durationMs,
    summary: entry.summary,
    ...(entry.injected !== undefined ? { injected: entry.injected } : {}),
    ...(entry.tables.length > 1 ? { tables: entry.tables } : {})
  }
  return tables.map(t => ({
    id: newId(),
    time,
    requestId: entry.requestId,
    ...(entry.principal !== undefined ? { principal: entry.principal } : {}),
    table: t.table,
    kind: entry.kind,
    verdict: entry.verdict,
    findings: t.findings,
    changes: t.changes,
    ...(entry.overrideId !== undefined ? { override: { id: entry.overrideId, rules: entry.overrideRules ?? [] } } : {}),
    details
  }))
}

function plainFinding (f: DecidedFinding): DecidedFinding {
  return {
    rule: f.rule,
    severity: f.severity,
    message: f.message,
    ...(f.fieldId !== undefined ? { fieldId: f.fieldId } : {}),
    ...(f.path !== undefined ? { path: f.path } : {})
  }
}
