/**
 * The decision log: every audit record of the gate becomes stored decisions, without the commit
 * path ever waiting on (or failing because of) the database. Records go to a bounded in-memory
 * buffer and a flusher writes them in batches. A batch whose write failed, or whose outcome is
 * unknown (the connection died during COMMIT), stays at the head of the buffer and is written
 * again until stored; storing is idempotent by decision id, so no decision is stored twice. A
 * store that is down is counted, logged once per outage and retried with backoff. When the buffer
 * is full the new record is not stored, and its audit line says so and carries what would have
 * been stored. On close the buffer is written until it is empty or the deadline passes.
 */
import { during } from '../activity.js'
import type { AuditRecord, AuditSink } from '../audit/audit-log.js'
import type { IceguardMetrics } from '../metrics/iceguard-metrics.js'
import { decisionsFromAudit, type Decision } from './decision.js'
import type { DecisionStore, NewOutboxMessage, OverrideRecord } from './decision-store.js'

export interface DecisionLogger {
  info (obj: object, msg: string): void
  warn (obj: object, msg: string): void
  error (obj: object, msg: string): void
}

interface DecisionLogOptions {
  readonly store: DecisionStore
  readonly log: DecisionLogger
  /** Most writes waiting to be stored (default 10 000). */
  readonly capacity?: number
  /** Decisions older than this many days are deleted (default 90; 0 keeps them forever). */
  readonly retentionDays?: number
  /** ms between retention runs (default one hour). */
  readonly pruneEveryMs?: number
  readonly metrics?: IceguardMetrics
  /** The webhook messages a decision queues (stored in the same transaction). */
  readonly notify?: (decision: Decision) => NewOutboxMessage[]
  /** Called after webhook messages were stored (to send them without waiting for the next poll). */
  readonly onQueued?: () => void
  readonly now?: () => number
}

interface Pending {
  readonly decisions: readonly Decision[]
  /** Webhook messages, built by the flusher (not on the commit path) once per record. */
  outbox?: readonly NewOutboxMessage[]
  readonly overrides: readonly OverrideRecord[]
  /** The audit record, to name what was lost if it never reaches the store. */
  readonly entry?: AuditRecord
  /** When it was queued (epoch ms). */
  readonly at: number
}

/** The buffer as metrics read it. */
export interface DecisionLogStats {
  /** Writes waiting to be stored. */
  readonly pending: number
  /** ms the oldest waiting write has waited (0 when none waits). */
  readonly oldestAgeMs: number
  /** Failed store attempts in a row (0 when the last one succeeded). */
  readonly failures: number
  /** Failed store attempts since the start (a counter for /metrics). */
  readonly flushFailures: number
}

const BATCH = 200
const FIRST_RETRY_MS = 250
/** Bounds how long decisions wait after the store is back (and so the window a SIGKILL can lose). */
const LONGEST_RETRY_MS = 5_000
/** Between attempts while closing, when every moment before the deadline counts. */
const CLOSING_RETRY_MS = 200
const PRUNE_EVERY_MS = 3600_000
const DAY_MS = 86_400_000

export class DecisionLog {
  readonly #opts: DecisionLogOptions
  readonly #capacity: number
  readonly #buffer: Pending[] = []
  readonly #now: () => number
  #flushing: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined
  #pruner: NodeJS.Timeout | undefined
  #failures = 0
  #flushFailures = 0
  #lastError: string | undefined
  #closed = false

  constructor (opts: DecisionLogOptions) {
    this.#opts = opts
    this.#capacity = opts.capacity ?? 10_000
    this.#now = opts.now ?? Date.now
  }

  get store (): DecisionStore { return this.#opts.store }

  /** Writes waiting to be stored. */
  get pending (): number { return this.#buffer.length }

  stats (): DecisionLogStats {
    const oldest = this.#buffer[0]
    return { pending: this.#buffer.length, oldestAgeMs: oldest === undefined ? 0 : Math.max(0, this.#now() - oldest.at), failures: this.#failures, flushFailures: this.#flushFailures }
  }

  /** An audit sink that queues each record, then hands it (annotated) to `inner`, the log line. */
  auditSink (inner: AuditSink): AuditSink {
    return {
      record: (entry) => {
        let annotated: AuditRecord = entry
        try {
          annotated = this.accept(entry)
        } catch {
          annotated = { ...entry, decisionNotStored: 'the decision log failed to read the record' }
        }
        inner.record(annotated)
      }
    }
  }

  /** Queues one audit record; returns it with the decision ids, or with why it was not queued. */
  accept (entry: AuditRecord): AuditRecord {
    const decisions = decisionsFromAudit(entry, this.#now())
    const refused = this.#refusal()
    if (refused !== undefined) {
      this.#opts.metrics?.decisionStore.inc({ outcome: 'not-stored' }, decisions.length)
      return { ...entry, decisionNotStored: refused }
    }
    this.#push({ decisions, overrides: [], entry, at: this.#now() })
    return { ...entry, decisionIds: decisions.map(d => d.id) }
  }

  /** Records an override token the gate accepted, so it can be listed and revoked. */
  noteOverride (record: OverrideRecord): void {
    if (this.#refusal() === undefined) this.#push({ decisions: [], overrides: [record], at: this.#now() })
  }

  /** Stores what is buffered now; resolves when the attempt ends (whether or not it succeeded). */
  async flush (): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing
    if (this.#buffer.length === 0) return
    this.#flushing = during('decision log: storing decisions', async () => await this.#write()).finally(() => { this.#flushing = undefined })
    await this.#flushing
  }

  /** Deletes decisions past the retention now, then every hour. */
  startPruning (): void {
    const days = this.#opts.retentionDays ?? 90
    if (days <= 0 || this.#pruner !== undefined) return
    const prune = (): void => {
      during('decision log: retention', async () => await this.#opts.store.prune(this.#now() - days * DAY_MS)).then((removed) => {
        if (removed > 0) this.#opts.log.info({ removed, retentionDays: days }, 'old decisions deleted')
      }, (err: unknown) => {
        this.#opts.log.warn({ err: describe(err) }, 'Cannot delete old decisions: the store failed; trying again at the next run (hourly)')
      })
    }
    prune()
    this.#pruner = setInterval(prune, this.#opts.pruneEveryMs ?? PRUNE_EVERY_MS).unref()
  }

  /**
   * Stops taking records and writes the buffer until it is empty or `deadline` (epoch ms) has
   * passed; default: one attempt. What could still not be stored is logged, record by record.
   */
  async close (deadline?: number): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    clearInterval(this.#pruner)
    const until = deadline ?? 0
    // A store call that hangs (a connection attempt into a dead host) must not outlast the deadline.
    const bounded = async (): Promise<void> => {
      let timer: NodeJS.Timeout | undefined
      const left = Math.max(0, until - this.#now())
      await Promise.race([this.flush(), new Promise<void>(resolve => { timer = setTimeout(resolve, left) })])
      clearTimeout(timer)
    }
    if (deadline === undefined) await this.flush()
    else await bounded()
    for (;;) {
      if (this.#buffer.length === 0 || this.#now() + CLOSING_RETRY_MS >= until) break
      await new Promise(resolve => setTimeout(resolve, CLOSING_RETRY_MS))
      await bounded()
    }
    for (const p of this.#buffer.splice(0)) {
      if (p.decisions.length === 0) continue
      this.#opts.metrics?.decisionStore.inc({ outcome: 'not-stored' }, p.decisions.length)
      this.#opts.log.error({ component: 'audit', audit: { ...p.entry, decisionNotStored: `shut down while the store was unavailable (${this.#lastError ?? 'unknown'})` } },
        'decision not stored')
    }
  }

  #refusal (): string | undefined {
    if (this.#closed) return 'the decision log is shut down'
    if (this.#buffer.length >= this.#capacity) {
      return `the decision buffer is full (${this.#capacity} writes waiting; store unavailable: ${this.#lastError ?? 'slow'})`
    }
    return undefined
  }

  #notify (d: Decision): NewOutboxMessage[] {
    try {
      return this.#opts.notify?.(d) ?? []
    } catch (err) {
      this.#opts.log.warn({ err: describe(err), decision: d.id }, 'Cannot queue webhook: building the message failed')
      return []
    }
  }

  #push (p: Pending): void {
    this.#buffer.push(p)
    if (this.#timer === undefined && this.#flushing === undefined && this.#failures === 0) {
      // After the current request's work: many decisions of a busy moment go in one transaction.
      this.#timer = setTimeout(() => { this.#timer = undefined; void this.flush() }, 0)
      this.#timer.unref()
    }
  }

  async #write (): Promise<void> {
    while (this.#buffer.length > 0) {
      const batch = this.#buffer.slice(0, BATCH)
      try {
        const decisions = batch.flatMap(p => p.decisions)
        const outbox = batch.flatMap(p => (p.outbox ??= p.decisions.flatMap(d => this.#notify(d))))
        await this.#opts.store.insert(decisions, outbox, this.#now())
        for (const o of batch.flatMap(p => p.overrides)) await this.#opts.store.recordOverride(o)
        this.#buffer.splice(0, batch.length)
        if (decisions.length > 0) this.#opts.metrics?.decisionStore.inc({ outcome: 'stored' }, decisions.length)
        if (this.#failures > 0) this.#opts.log.info({ after: this.#failures, waiting: this.#buffer.length }, 'decision store available again')
        this.#failures = 0
        this.#lastError = undefined
        if (outbox.length > 0) this.#opts.onQueued?.()
      } catch (err) {
        this.#failures++
        this.#flushFailures++
        this.#lastError = describe(err)
        this.#opts.metrics?.decisionStore.inc({ outcome: 'failed' }, batch.reduce((n, p) => n + p.decisions.length, 0))
        // Once per outage, then every 100th attempt: a down store must not flood the log.
        if (this.#failures === 1 || this.#failures % 100 === 0) {
          this.#opts.log.warn({ err: this.#lastError, attempt: this.#failures, waiting: this.#buffer.length, store: this.#opts.store.driver.location },
            'Cannot store decisions: the store failed; they stay buffered and are retried')
        }
        if (!this.#closed) {
          const delay = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(this.#failures - 1, 10))
          clearTimeout(this.#timer)
          this.#timer = setTimeout(() => { this.#timer = undefined; void this.flush() }, delay)
          this.#timer.unref()
        }
        return
      }
    }
  }
}

export function describe (err: unknown): string {
  const e = err as { code?: unknown, message?: unknown }
  const text = typeof e?.message === 'string' ? e.message : String(err)
  return typeof e?.code === 'string' ? `${e.code}: ${text}` : text
}
