/**
 * The audit trail of the gate: one structured line per decision on a schema-changing write.
 *
 * A record holds facts only: who, which table, what was decided and why (rule ids, a one-line
 * diff summary), what the upstream answered and how long it took. It never holds a request or
 * response body, a token or a credential; the principal is already a non-secret identity
 * (see `principal.ts`).
 */

/** What the gate decided. `refused` covers every answer the gate gave without forwarding. */
export type AuditVerdict = 'allow' | 'warn' | 'deny' | 'conflict' | 'refused' | 'error'

export interface AuditRecord {
  readonly requestId: string
  /** Non-secret identity of the caller, when the request carries one. */
  readonly principal?: string
  /** `kind` as classified: update-table, transaction, create-table, register-table, update-view, create-view, register-view. */
  readonly kind: string
  /** Dotted identifiers (`ns1.ns2.table`); several for a transaction. */
  readonly tables: readonly string[]
  /** Commit flows as the engine saw them (update, revert, create, staged-create, replace, view). */
  readonly flows: readonly string[]
  readonly verdict: AuditVerdict
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
}

export interface AuditSink {
  record (entry: AuditRecord): void
}

/** The subset of a pino logger the sink needs. */
export interface AuditLogger {
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
      log.info({ audit: entry }, 'commit decided')
    }
  }
}

/** Keeps records in memory, for tests and the admin API. */
export interface MemoryAuditSink extends AuditSink {
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
