/**
 * The audit trail of the gate: one structured line per decision on a schema-changing write.
 *
 * A record holds facts only: who, which table, what was decided and why (rule ids, a one-line
 * diff summary), what the upstream answered and how long it took. It never holds a request or
 * response body, a token or a credential; the principal is already a non-secret identity
 * (see `principal.ts`).
 */

import type { TableRef } from '../iceberg/rest-path.js'
import type { Finding, Verdict } from '../engine/rules/rule.js'

export interface AuditRecord {
  readonly requestId: string
  /** Non-secret identity of the caller, when the request carries one. */
  readonly principal?: string
  /** `kind` as classified: update-table, transaction, create-table, register-table, update-view, create-view, register-view. */
  readonly kind: string
  /** Dotted identifiers (`ns1.ns2.table`); several for a transaction. */
  readonly tables: readonly string[]
  /**
   * The same tables as identities (namespace levels, name, the route's prefix): a dotted name
   * cannot say whether a dot belongs to a namespace level, so readers use these, never the dotted form.
   */
  readonly tableRefs: readonly TableRef[]
  /** Commit flows as the engine saw them (update, revert, create, staged-create, replace, view). */
  readonly flows: readonly string[]
  readonly verdict: Verdict
  /** Ids of the rules that found something (errors and warnings). */
  readonly rules: readonly string[]
  /** Ids of the rules whose findings were let through as warnings. */
  readonly warnings: readonly string[]
  /** One line describing the schema change (or the reason for refusing). */
  readonly summary: string
  /** Requirements the gate added to the forwarded body. */
  readonly injected?: readonly string[]
  /** Status the client received; the upstream's when the request was forwarded. */
  readonly status: number
  /** The upstream's status, absent when nothing was forwarded. */
  readonly upstreamStatus?: number
  readonly forwarded: boolean
  readonly durationMs: number
  /** The break-glass override used: its id, the rules it waives, and the reason it was minted with. */
  readonly overrideId?: string
  readonly overrideRules?: readonly string[]
  readonly overrideReason?: string
  /** Each judged table with its findings and schema diff summary (for the decision log, not the line). */
  readonly decided?: readonly DecidedTable[]
  /** Ids under which the decision log keeps this write, once queued for storing. */
  readonly decisionIds?: readonly string[]
  /** Why the decision log could not keep this write; the line then carries what it would have stored. */
  readonly decisionNotStored?: string
}

/** A finding as the decision log keeps it: the engine's, without the types and the explanation. */
export type DecidedFinding = Pick<Finding, 'rule' | 'severity' | 'message' | 'fieldId' | 'path'>

/** One table of a judged write: what the decision log stores beside the audit facts. */
export interface DecidedTable extends Pick<TableRef, 'namespace' | 'name'> {
  readonly findings: readonly DecidedFinding[]
  /** The schema diff summary. */
  readonly summary: string
}

export interface AuditSink {
  record (entry: AuditRecord): void
}

/** The subset of a pino logger the sink needs. */
interface AuditLogger {
  readonly level?: string
  child (bindings: Record<string, unknown>, options?: { level: string }): { info (obj: object, msg: string): void }
}

/**
 * Writes each record as one pino line with `component: "audit"`, at `info`, whatever the log level:
 * quieting the server's logs to `warn` must not silently end the audit trail. `silent` is the
 * operator asking for no output at all, and gets none.
 */
export function pinoAuditSink (logger: AuditLogger): AuditSink {
  const log = logger.level === 'silent'
    ? logger.child({ component: 'audit' })
    : logger.child({ component: 'audit' }, { level: 'info' })
  return {
    record (entry) {
      // The per-table findings belong to the decision log; the line keeps them only when it could
      // not store them, so nothing decided is lost.
      if (entry.decided === undefined || entry.decisionNotStored !== undefined) {
        log.info({ audit: entry }, 'commit decided')
      } else {
        const { decided: _stored, ...line } = entry
        log.info({ audit: line }, 'commit decided')
      }
    }
  }
}

/** Keeps records in memory, for tests and the admin API. */
interface MemoryAuditSink extends AuditSink {
  readonly records: AuditRecord[]
  clear (): void
}

export function memoryAuditSink (): MemoryAuditSink {
  const records: AuditRecord[] = []
  return {
    records,
    record (entry) { records.push(entry) },
    clear () { records.length = 0 }
  }
}

/** Sends every record to each sink; one failing sink never stops the others or the request. */
export function fanOutAuditSink (...sinks: AuditSink[]): AuditSink {
  return {
    record (entry) {
      for (const sink of sinks) {
        try { sink.record(entry) } catch {}
      }
    }
  }
}
