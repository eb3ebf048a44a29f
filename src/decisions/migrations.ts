/**
 * The store's schema, as numbered migrations applied at start in order, each once, recorded in
 * `schema_migrations`. One list serves both databases: the statements use only what SQLite and
 * PostgreSQL share (TEXT, BIGINT, INTEGER; times are epoch milliseconds, JSON is stored as text).
 * A migration once released is never edited; a change is a new migration.
 */
import type { SqlDriver } from './sql-driver.js'

interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: readonly string[]
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'decisions',
    statements: [
      `CREATE TABLE decisions (
        id TEXT PRIMARY KEY,
        decided_at BIGINT NOT NULL,
        request_id TEXT NOT NULL,
        principal TEXT,
        namespace TEXT NOT NULL,
        namespace_key TEXT NOT NULL,
        table_name TEXT NOT NULL,
        kind TEXT NOT NULL,
        verdict TEXT NOT NULL,
        findings TEXT NOT NULL,
        changes TEXT NOT NULL,
        override_id TEXT,
        details TEXT NOT NULL
      )`,
      'CREATE INDEX decisions_newest ON decisions (decided_at, id)',
      'CREATE INDEX decisions_table ON decisions (namespace_key, table_name, decided_at)',
      'CREATE INDEX decisions_request ON decisions (request_id)',
      `CREATE TABLE decision_rules (
        decision_id TEXT NOT NULL,
        rule TEXT NOT NULL,
        PRIMARY KEY (decision_id, rule)
      )`,
      'CREATE INDEX decision_rules_rule ON decision_rules (rule, decision_id)'
    ]
  },
  {
    version: 2,
    name: 'override tokens',
    statements: [
      `CREATE TABLE override_tokens (
        id TEXT PRIMARY KEY,
        table_name TEXT NOT NULL,
        rules TEXT NOT NULL,
        reason TEXT,
        minted_by TEXT,
        issued_at BIGINT,
        expires_at BIGINT NOT NULL,
        source TEXT NOT NULL,
        revoked_at BIGINT,
        revoked_by TEXT
      )`,
      'CREATE INDEX override_tokens_revoked ON override_tokens (revoked_at)'
    ]
  },
  {
    version: 3,
    name: 'webhook outbox',
    statements: [
      `CREATE TABLE webhook_outbox (
        id TEXT PRIMARY KEY,
        decision_id TEXT NOT NULL,
        url TEXT NOT NULL,
        secret_ref TEXT,
        body TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        attempts INTEGER NOT NULL,
        next_at BIGINT NOT NULL,
        lease_until BIGINT,
        delivered_at BIGINT,
        failed_at BIGINT,
        last_error TEXT
      )`,
      'CREATE INDEX webhook_outbox_due ON webhook_outbox (delivered_at, failed_at, next_at)'
    ]
  },
  {
    version: 4,
    name: 'view index',
    statements: [
      // What each view of the catalog reads (docs/view-index.md); never its SQL text.
      `CREATE TABLE view_index (
        view_key TEXT PRIMARY KEY,
        prefix TEXT NOT NULL,
        namespace TEXT NOT NULL,
        view_name TEXT NOT NULL,
        reads TEXT NOT NULL,
        indexed_at BIGINT NOT NULL
      )`,
      'CREATE INDEX view_index_changed ON view_index (indexed_at)',
      `CREATE TABLE view_index_status (
        id INTEGER PRIMARY KEY,
        indexed_at BIGINT NOT NULL,
        complete INTEGER NOT NULL,
        errors TEXT NOT NULL
      )`
    ]
  }
]

/** Any number works as long as every iceguard uses the same: it names the migration lock. */
const PG_MIGRATION_LOCK = 7_302_118_441

/**
 * Applies the migrations not yet recorded, in one transaction. On PostgreSQL an advisory lock
 * makes replicas starting together take turns: the second finds the work done.
 */
export async function migrate (driver: SqlDriver, migrations: readonly Migration[] = MIGRATIONS, now = Date.now): Promise<number[]> {
  return await driver.transaction(async (tx) => {
    if (driver.dialect === 'postgres') await tx.query(`SELECT pg_advisory_xact_lock(${PG_MIGRATION_LOCK})`)
    await tx.run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)')
    const done = new Set((await tx.query('SELECT version FROM schema_migrations')).map(r => Number(r.version)))
    const highest = Math.max(0, ...done)
    const known = Math.max(0, ...migrations.map(m => m.version))
    if (highest > known) {
      throw new Error(`Cannot use the decision store: its schema is at version ${highest}, newer than this iceguard knows (${known}); upgrade iceguard`)
    }
    const applied: number[] = []
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue
      for (const statement of m.statements) await tx.run(statement)
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, now()])
      applied.push(m.version)
    }
    return applied
  })
}
