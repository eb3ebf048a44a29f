/**
 * The shared store: PostgreSQL through `pg`'s pool, so several iceguard replicas read and write
 * the same decisions, overrides and webhook outbox.
 */
import pg from 'pg'
import { numberPlaceholders, type Row, type SqlDriver, type SqlExecutor } from './sql-driver.js'

interface PgOptions {
  /** Most connections this process opens (the commit path never waits on them). */
  readonly max?: number
  /** ms to wait for a connection before a call fails (and is retried later). */
  readonly connectTimeout?: number
}

export function openPostgres (url: string, opts: PgOptions = {}): SqlDriver {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 4,
    connectionTimeoutMillis: opts.connectTimeout ?? 5000,
    // A database that restarts drops idle connections: a pool error must not end the process.
    idleTimeoutMillis: 30_000
  })
  pool.on('error', () => {})
  const over = (client: pg.Pool | pg.PoolClient): SqlExecutor => ({
    async query (sql, params = []) { return (await client.query(numberPlaceholders(sql), [...params])).rows as Row[] },
    async run (sql, params = []) { return (await client.query(numberPlaceholders(sql), [...params])).rowCount ?? 0 }
  })
  const direct = over(pool)
  return {
    dialect: 'postgres',
    location: redactUrl(url),
    query: direct.query,
    run: direct.run,
    async transaction (fn) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const out = await fn(over(client))
        await client.query('COMMIT')
        return out
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        client.release()
      }
    },
    async close () { await pool.end() }
  }
}

/** The URL without its password, for logs. */
function redactUrl (url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.href
  } catch {
    return 'postgres://(unreadable url)'
  }
}
