/**
 * The decision store: decisions, override tokens and the webhook outbox, over SQLite or
 * PostgreSQL (the same statements; see sql-driver.ts). Every method is one short statement or
 * transaction; nothing here runs on the commit path (the decision log calls it from its flusher).
 */
import type { DecidedFinding } from '../audit/audit-log.js'
import { namespaceSegment } from '../iceberg/rest-path.js'
import type { Decision, DecisionDetails } from './decision.js'
import { migrate } from './migrations.js'
import type { BatchStatement, Row, SqlDriver, SqlExecutor } from './sql-driver.js'

interface DecisionFilter {
  readonly namespace?: readonly string[]
  readonly table?: string
  readonly verdict?: string
  readonly rule?: string
  readonly principal?: string
  /** Epoch ms, inclusive. */
  readonly since?: number
  /** Epoch ms, exclusive. */
  readonly until?: number
}

/** Where a page ends: the last decision's time and id (decisions are listed newest first). */
export interface Cursor {
  readonly time: number
  readonly id: string
}

interface DecisionPage {
  readonly decisions: Decision[]
  readonly next?: Cursor
}

export interface OverrideRecord {
  readonly id: string
  /** Dotted table name, as the token names it. */
  readonly table: string
  readonly rules: readonly string[]
  readonly reason?: string
  /** Non-secret identity of whoever minted it. */
  readonly mintedBy?: string
  readonly issuedAt?: number
  readonly expiresAt: number
  /** `minted`: through the admin API; `seen`: first known when the gate accepted it; `revoked`: revoked before it was seen. */
  readonly source: 'minted' | 'seen' | 'revoked'
  readonly revokedAt?: number
  readonly revokedBy?: string
}

interface OutboxMessage {
  readonly id: string
  readonly decisionId: string
  readonly url: string
  /** Names the secret the signature uses (never the secret itself). */
  readonly secretRef?: string
  readonly body: string
  readonly attempts: number
}

export interface NewOutboxMessage {
  readonly id: string
  readonly decisionId: string
  readonly url: string
  readonly secretRef?: string
  readonly body: string
}

const DECISION_COLUMNS = 'id, decided_at, request_id, principal, namespace, namespace_key, table_name, kind, verdict, findings, changes, override_id, details'
const INSERT_DECISION = `INSERT INTO decisions (${DECISION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
const INSERT_DECISION_RULE = 'INSERT INTO decision_rules (decision_id, rule) VALUES (?, ?) ON CONFLICT (decision_id, rule) DO NOTHING'
const INSERT_OUTBOX = 'INSERT INTO webhook_outbox (id, decision_id, url, secret_ref, body, created_at, attempts, next_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT (id) DO NOTHING'

export class DecisionStore {
  #ready: Promise<number[]> | undefined

  constructor (readonly driver: SqlDriver) {}

  /**
   * Applies pending migrations, once; every other method waits for it. A failure (the database
   * is down at start) is not remembered: the next call tries again.
   */
  async migrate (): Promise<number[]> {
    this.#ready ??= migrate(this.driver).catch((err: unknown) => {
      this.#ready = undefined
      throw err
    })
    return await this.#ready
  }

  async #db (): Promise<SqlDriver> {
    await this.migrate()
    return this.driver
  }

  /**
   * Stores decisions with their webhook messages and the override tokens they used, in one
   * transaction: a message is never queued for a decision that was not kept. Storing is
   * idempotent by id (each row's primary key; `ON CONFLICT DO NOTHING`, which SQLite and
   * PostgreSQL both read the same way): a batch retried after a COMMIT whose answer was lost is
   * stored once, and a message already delivered is not queued again.
   */
  async insert (decisions: readonly Decision[], outbox: readonly NewOutboxMessage[] = [], now = Date.now()): Promise<void> {
    // Nothing here reads an answer, so the whole write is one batch (one message to SQLite's thread).
    const statements: BatchStatement[] = []
    for (const d of decisions) {
      statements.push({
        sql: INSERT_DECISION,
        params: [
          d.id, d.time, d.requestId, d.principal ?? null, JSON.stringify(d.table.namespace), namespaceSegment(d.table.namespace),
          d.table.name, d.kind, d.verdict, JSON.stringify(d.findings), d.changes, d.override?.id ?? null,
          JSON.stringify({ ...d.details, ...(d.override !== undefined ? { overrideRules: d.override.rules } : {}) })
        ]
      })
      for (const rule of new Set(d.findings.map(f => f.rule))) statements.push({ sql: INSERT_DECISION_RULE, params: [d.id, rule] })
    }
    for (const m of outbox) statements.push({ sql: INSERT_OUTBOX, params: [m.id, m.decisionId, m.url, m.secretRef ?? null, m.body, now, now] })
    await (await this.#db()).batch(statements)
  }

  async list (filter: DecisionFilter, pageSize: number, after?: Cursor): Promise<DecisionPage> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.namespace !== undefined) { where.push('namespace_key = ?'); params.push(namespaceSegment(filter.namespace)) }
    if (filter.table !== undefined) { where.push('table_name = ?'); params.push(filter.table) }
    if (filter.verdict !== undefined) { where.push('verdict = ?'); params.push(filter.verdict) }
    if (filter.principal !== undefined) { where.push('principal = ?'); params.push(filter.principal) }
    if (filter.since !== undefined) { where.push('decided_at >= ?'); params.push(filter.since) }
    if (filter.until !== undefined) { where.push('decided_at < ?'); params.push(filter.until) }
    if (filter.rule !== undefined) {
      where.push('EXISTS (SELECT 1 FROM decision_rules r WHERE r.decision_id = decisions.id AND r.rule = ?)')
      params.push(filter.rule)
    }
    if (after !== undefined) {
      where.push('(decided_at < ? OR (decided_at = ? AND id < ?))')
      params.push(after.time, after.time, after.id)
    }
    const rows = await (await this.#db()).query(
      `SELECT ${DECISION_COLUMNS} FROM decisions${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY decided_at DESC, id DESC LIMIT ?`,
      [...params, pageSize + 1])
    const decisions = rows.slice(0, pageSize).map(toDecision)
    const last = decisions[decisions.length - 1]
    return rows.length > pageSize && last !== undefined ? { decisions, next: { time: last.time, id: last.id } } : { decisions }
  }

  async get (id: string): Promise<Decision | undefined> {
    const rows = await (await this.#db()).query(`SELECT ${DECISION_COLUMNS} FROM decisions WHERE id = ?`, [id])
    return rows[0] === undefined ? undefined : toDecision(rows[0])
  }

  /** Deletes decisions older than `before` (epoch ms), and webhook messages done before it. */
  async prune (before: number): Promise<number> {
    return await (await this.#db()).transaction(async (tx) => {
      await tx.run('DELETE FROM decision_rules WHERE decision_id IN (SELECT id FROM decisions WHERE decided_at < ?)', [before])
      const removed = await tx.run('DELETE FROM decisions WHERE decided_at < ?', [before])
      await tx.run('DELETE FROM webhook_outbox WHERE (delivered_at IS NOT NULL AND delivered_at < ?) OR (failed_at IS NOT NULL AND failed_at < ?)', [before, before])
      await tx.run('DELETE FROM override_tokens WHERE expires_at < ?', [before])
      return removed
    })
  }

  /** Records a token; a token already known keeps its record (the first writer wins). */
  async recordOverride (o: OverrideRecord): Promise<void> {
    await recordOverride(await this.#db(), o)
  }

  async listOverrides (opts: { readonly activeAt?: number } = {}): Promise<OverrideRecord[]> {
    const rows = opts.activeAt === undefined
      ? await (await this.#db()).query('SELECT * FROM override_tokens ORDER BY expires_at DESC, id')
      : await (await this.#db()).query('SELECT * FROM override_tokens WHERE expires_at > ? AND revoked_at IS NULL ORDER BY expires_at DESC, id', [opts.activeAt])
    return rows.map(toOverride)
  }

  async getOverride (id: string): Promise<OverrideRecord | undefined> {
    const rows = await (await this.#db()).query('SELECT * FROM override_tokens WHERE id = ?', [id])
    return rows[0] === undefined ? undefined : toOverride(rows[0])
  }

  /**
   * Marks a token revoked; revoking twice keeps the first time. A token iceguard has not seen
   * (minted offline and not used yet) is recorded as `revoked` until `unknownExpiresAt`, the
   * latest it could expire, so it is refused when it arrives.
   */
  async revokeOverride (id: string, by: string | undefined, at: number, unknownExpiresAt: number): Promise<OverrideRecord> {
    await (await this.#db()).transaction(async (tx) => {
      await recordOverride(tx, { id, table: '', rules: [], expiresAt: unknownExpiresAt, source: 'revoked' })
      await tx.run('UPDATE override_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL', [at, by ?? null, id])
    })
    return await this.getOverride(id) as OverrideRecord
  }

  /** Ids of every revoked token that has not expired yet (expired ones are refused anyway). */
  async revokedIds (now: number): Promise<string[]> {
    const rows = await (await this.#db()).query('SELECT id FROM override_tokens WHERE revoked_at IS NOT NULL AND expires_at > ?', [now])
    return rows.map(r => String(r.id))
  }

  /**
   * Takes up to `limit` due messages for delivery: each is leased for `leaseMs`, so another
   * replica does not send it meanwhile; a lease that runs out (a replica died) frees it again.
   */
  async claimOutbox (now: number, limit: number, leaseMs: number): Promise<OutboxMessage[]> {
    const due = await (await this.#db()).query(
      'SELECT id, decision_id, url, secret_ref, body, attempts FROM webhook_outbox WHERE delivered_at IS NULL AND failed_at IS NULL AND next_at <= ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY next_at, id LIMIT ?',
      [now, now, limit])
    const claimed: OutboxMessage[] = []
    for (const r of due) {
      const won = await (await this.#db()).run('UPDATE webhook_outbox SET lease_until = ? WHERE id = ? AND delivered_at IS NULL AND (lease_until IS NULL OR lease_until < ?)',
        [now + leaseMs, r.id, now])
      if (won === 1) {
        claimed.push({
          id: String(r.id),
          decisionId: String(r.decision_id),
          url: String(r.url),
          ...(r.secret_ref !== null && r.secret_ref !== undefined ? { secretRef: String(r.secret_ref) } : {}),
          body: String(r.body),
          attempts: Number(r.attempts)
        })
      }
    }
    return claimed
  }

  async markDelivered (id: string, at: number): Promise<void> {
    await (await this.#db()).run('UPDATE webhook_outbox SET delivered_at = ?, attempts = attempts + 1, lease_until = NULL, last_error = NULL WHERE id = ?', [at, id])
  }

  /** A failed attempt: tried again at `nextAt`, or given up (`nextAt` undefined). */
  async markAttemptFailed (id: string, error: string, at: number, nextAt: number | undefined): Promise<void> {
    if (nextAt === undefined) {
      await (await this.#db()).run('UPDATE webhook_outbox SET failed_at = ?, attempts = attempts + 1, lease_until = NULL, last_error = ? WHERE id = ?', [at, error, id])
    } else {
      await (await this.#db()).run('UPDATE webhook_outbox SET next_at = ?, attempts = attempts + 1, lease_until = NULL, last_error = ? WHERE id = ?', [nextAt, error, id])
    }
  }

  /** Outbox rows for one decision (operators and tests look at delivery state). */
  async outboxFor (decisionId: string): Promise<Row[]> {
    return await (await this.#db()).query('SELECT id, url, attempts, delivered_at, failed_at, last_error FROM webhook_outbox WHERE decision_id = ? ORDER BY id', [decisionId])
  }

  async close (): Promise<void> {
    await this.driver.close()
  }
}

async function recordOverride (ex: SqlExecutor, o: OverrideRecord): Promise<void> {
  await ex.run(`INSERT INTO override_tokens (id, table_name, rules, reason, minted_by, issued_at, expires_at, source, revoked_at, revoked_by)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, [
    o.id, o.table, JSON.stringify(o.rules), o.reason ?? null, o.mintedBy ?? null, o.issuedAt ?? null, o.expiresAt, o.source,
    o.revokedAt ?? null, o.revokedBy ?? null
  ])
}

function optionalString (v: unknown): string | undefined {
  return v === null || v === undefined ? undefined : String(v)
}

function optionalNumber (v: unknown): number | undefined {
  return v === null || v === undefined ? undefined : Number(v)
}

function toDecision (r: Row): Decision {
  const details = JSON.parse(String(r.details)) as DecisionDetails & { overrideRules?: string[] }
  const { overrideRules, ...rest } = details
  const principal = optionalString(r.principal)
  const overrideId = optionalString(r.override_id)
  return {
    id: String(r.id),
    // PostgreSQL returns BIGINT as text: epoch milliseconds fit a double exactly.
    time: Number(r.decided_at),
    requestId: String(r.request_id),
    ...(principal !== undefined ? { principal } : {}),
    table: { namespace: JSON.parse(String(r.namespace)) as string[], name: String(r.table_name) },
    kind: String(r.kind),
    verdict: String(r.verdict) as Decision['verdict'],
    findings: JSON.parse(String(r.findings)) as DecidedFinding[],
    changes: String(r.changes),
    ...(overrideId !== undefined ? { override: { id: overrideId, rules: overrideRules ?? [] } } : {}),
    details: rest
  }
}

function toOverride (r: Row): OverrideRecord {
  const reason = optionalString(r.reason)
  const mintedBy = optionalString(r.minted_by)
  const issuedAt = optionalNumber(r.issued_at)
  const revokedAt = optionalNumber(r.revoked_at)
  const revokedBy = optionalString(r.revoked_by)
  return {
    id: String(r.id),
    table: String(r.table_name),
    rules: JSON.parse(String(r.rules)) as string[],
    ...(reason !== undefined ? { reason } : {}),
    ...(mintedBy !== undefined ? { mintedBy } : {}),
    ...(issuedAt !== undefined ? { issuedAt } : {}),
    expiresAt: Number(r.expires_at),
    source: r.source === 'minted' || r.source === 'revoked' ? r.source : 'seen',
    ...(revokedAt !== undefined ? { revokedAt } : {}),
    ...(revokedBy !== undefined ? { revokedBy } : {})
  }
}
