/**
 * The embedded store: one SQLite file (better-sqlite3). Its calls are synchronous; they are
 * wrapped in promises and queued one after another so a transaction's statements never interleave
 * with another caller's. WAL mode lets readers (the admin API) run beside the writer.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import type { Row, SqlDriver, SqlExecutor } from './sql-driver.js'

export function openSqlite (file: string): SqlDriver {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  // Another process (a CLI, a second server on the same state folder) may hold the write lock briefly.
  db.pragma('busy_timeout = 5000')
  let queue: Promise<unknown> = Promise.resolve()
  const serial = <T>(fn: () => Promise<T> | T): Promise<T> => {
    const next = queue.then(fn, fn)
    queue = next.catch(() => {})
    return next
  }
  const exec: SqlExecutor = {
    async query (sql, params = []) { return db.prepare(sql).all(...params.map(bindable)) as Row[] },
    async run (sql, params = []) { return db.prepare(sql).run(...params.map(bindable)).changes }
  }
  return {
    dialect: 'sqlite',
    location: file,
    query: async (sql, params) => await serial(async () => await exec.query(sql, params)),
    run: async (sql, params) => await serial(async () => await exec.run(sql, params)),
    transaction: async (fn) => await serial(async () => {
      db.exec('BEGIN IMMEDIATE')
      try {
        const out = await fn(exec)
        db.exec('COMMIT')
        return out
      } catch (err) {
        db.exec('ROLLBACK')
        throw err
      }
    }),
    close: async () => { await serial(() => { db.close() }) }
  }
}

// better-sqlite3 binds numbers, strings, bigints, buffers and null; booleans are stored as 0/1.
function bindable (v: unknown): unknown {
  if (v === undefined) return null
  if (typeof v === 'boolean') return v ? 1 : 0
  return v
}
