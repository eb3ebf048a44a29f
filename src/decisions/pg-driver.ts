/**
 * The shared store: PostgreSQL through `pg`'s pool, so several iceguard replicas read and write
 * the same decisions, overrides and webhook outbox.
 *
 * A database that restarts or fails over ends every connection: idle ones, ones checked out for a
 * transaction, one in the middle of ROLLBACK. `pg` reports each as an `error` event on the client,
 * and a client the pool has handed out has no listener of the pool's (the pool listens only while
 * a client is idle): an event nobody listens to ends the process. So every client gets a listener
 * from its first connection to its end, a call that failed on a broken connection discards that
 * connection (`release(err)`) instead of returning it to the pool, and the caller retries the work
 * on a fresh one (the decision log retries until stored).
 */
import pg from 'pg'
import { batchInTransaction, numberPlaceholders, type Row, type SqlDriver, type SqlExecutor } from './sql-driver.js'

interface PgOptions {
  /** Most connections this process opens (the commit path never waits on them). */
  readonly max?: number
  /** ms to wait for a connection before a call fails (and is retried later). */
  readonly connectTimeout?: number
  /** ms one statement may take before its call fails and its connection is discarded. */
  readonly queryTimeout?: number
  /** Told of each connection the database or the network ended (the call it served fails as well). */
  readonly onConnectionLost?: (err: Error) => void
}

export function openPostgres (url: string, opts: PgOptions = {}): SqlDriver {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 4,
    connectionTimeoutMillis: opts.connectTimeout ?? 5000,
    idleTimeoutMillis: 30_000,
    // A statement that never answers (a half-open connection, a database that hangs) fails the
    // call instead of holding the connection and the flusher forever.
    query_timeout: opts.queryTimeout ?? 15_000,
    keepAlive: true
  })
  // Idle members: the pool discards the client itself; the listener below reports it.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', (err: Error) => { opts.onConnectionLost?.(err) })
  })
  const over = (client: pg.Pool | pg.PoolClient): SqlExecutor => ({
    async query (sql, params = []) { return (await client.query(numberPlaceholders(sql), [...params])).rows as Row[] },
    async run (sql, params = []) { return (await client.query(numberPlaceholders(sql), [...params])).rowCount ?? 0 }
  })
  // `pool.query` checks a client out, listens for its errors and discards it on one (pg-pool).
  const direct = over(pool)
  const driver: SqlDriver = {
    dialect: 'postgres',
    location: redactUrl(url),
    query: direct.query,
    run: direct.run,
    async transaction (fn) {
      const client = await pool.connect()
      // Set when the connection can no longer be trusted: it is then discarded, not pooled.
      let broken: Error | undefined
      const onError = (err: Error): void => { broken ??= err }
      client.on('error', onError)
      try {
        await client.query('BEGIN')
        const out = await fn(over(client))
        await client.query('COMMIT')
        return out
      } catch (err) {
        // Only an error the server answered leaves the connection usable (after ROLLBACK). A
        // timeout or a lost connection leaves it in an unknown state, and a failed COMMIT leaves
        // the outcome unknown: the caller's retry must be idempotent (decision-store.ts).
        if (broken === undefined && err instanceof pg.DatabaseError && !connectionEnded(err)) {
          await client.query('ROLLBACK').catch((rollbackErr: unknown) => { broken ??= asError(rollbackErr) })
        } else {
          broken ??= asError(err)
        }
        throw err
      } finally {
        client.removeListener('error', onError)
        client.release(broken)
      }
    },
    async batch (statements) { await batchInTransaction(driver, statements) },
    async close () { await pool.end() }
  }
  return driver
}

/**
 * SQLSTATE class 08 (connection exception) and 57P (operator intervention: shutdown, crash
 * recovery, terminated backend) end the connection; PostgreSQL Appendix A, "Error Codes".
 */
function connectionEnded (err: pg.DatabaseError): boolean {
  return err.code !== undefined && (err.code.startsWith('08') || err.code.startsWith('57P'))
}

function asError (err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
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
