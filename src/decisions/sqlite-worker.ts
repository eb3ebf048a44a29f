/**
 * The SQLite decision store's own thread (see sqlite-driver.ts). better-sqlite3 is synchronous:
 * a statement's parse, its run and the sync of a committed transaction take the thread they run
 * on, so they run here and never on the thread that serves requests. Each statement text is
 * prepared once and kept; requests are answered in the order they arrive.
 */
import { parentPort, workerData } from 'node:worker_threads'
import Database, { type Statement } from 'better-sqlite3'

/** What the driver asks; `id` pairs the answer with the question. */
export type SqliteRequest =
  | {
    readonly id: number
    readonly op: 'query' | 'run'
    readonly sql: string
    readonly params: readonly unknown[]
    /** The first statement of a transaction: BEGIN goes with it rather than in a message of its own. */
    readonly begin?: true
  }
  | {
    readonly id: number
    readonly op: 'batch'
    /** Run in order in one transaction: committed when all ran, rolled back when one fails. */
    readonly statements: ReadonlyArray<{ readonly sql: string, readonly params: readonly unknown[] }>
  }
  | { readonly id: number, readonly op: 'commit' | 'rollback' | 'close' }

export type SqliteAnswer =
  | { readonly id: number, readonly rows: unknown[] }
  | { readonly id: number, readonly changes: number }
  | { readonly id: number, readonly error: { readonly message: string, readonly code?: string } }

export interface SqliteWorkerData {
  readonly file: string
}

/**
 * Statement texts differ only by which filters a listing uses, so they are few; the bound keeps
 * a caller that built texts from values from growing the cache without end.
 */
const MOST_STATEMENTS = 256

function serve (port: NonNullable<typeof parentPort>, { file }: SqliteWorkerData): void {
  let db: Database.Database
  try {
    db = new Database(file)
  } catch (err) {
    // better-sqlite3's error class loses its message crossing to the other thread; a plain Error keeps it.
    const e = err as { message?: unknown, code?: unknown }
    throw new Error(`Cannot open ${file}: ${String(e.message ?? err)}${typeof e.code === 'string' ? ` (${e.code})` : ''}`)
  }
  // WAL: the admin API's reads run beside the writer. synchronous=NORMAL: in WAL mode a commit is
  // not synced; the WAL is synced at each checkpoint. A committed transaction survives the
  // process ending (it is in the operating system's cache); an operating-system crash or power
  // loss can take the last transactions back, never the file's consistency (SQLite "WAL mode",
  // PRAGMA synchronous). The decisions being written were already held only in memory before.
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  // Another process (a CLI, a second server on the same state folder) may hold the write lock briefly.
  db.pragma('busy_timeout = 5000')
  const statements = new Map<string, Statement>()
  const prepared = (sql: string): Statement => {
    let s = statements.get(sql)
    if (s === undefined) {
      if (statements.size >= MOST_STATEMENTS) statements.clear()
      s = db.prepare(sql)
      statements.set(sql, s)
    }
    return s
  }
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const rollback = db.prepare('ROLLBACK')

  port.on('message', (req: SqliteRequest) => {
    let answer: SqliteAnswer
    try {
      switch (req.op) {
        case 'query':
        case 'run': {
          const statement = prepared(req.sql)
          if (req.begin === true) begin.run()
          answer = req.op === 'query'
            ? { id: req.id, rows: statement.all(...req.params.map(bindable)) }
            : { id: req.id, changes: statement.run(...req.params.map(bindable)).changes }
          break
        }
        case 'batch': {
          let changes = 0
          begin.run()
          try {
            for (const s of req.statements) changes += prepared(s.sql).run(...s.params.map(bindable)).changes
            commit.run()
          } catch (err) {
            if (db.inTransaction) rollback.run()
            throw err
          }
          answer = { id: req.id, changes }
          break
        }
        case 'commit': commit.run(); answer = { id: req.id, changes: 0 }; break
        case 'rollback': if (db.inTransaction) rollback.run(); answer = { id: req.id, changes: 0 }; break
        case 'close':
          db.close()
          port.postMessage({ id: req.id, changes: 0 } satisfies SqliteAnswer)
          port.close()
          return
      }
    } catch (err) {
      const e = err as { message?: unknown, code?: unknown }
      answer = { id: req.id, error: { message: String(e.message ?? err), ...(typeof e.code === 'string' ? { code: e.code } : {}) } }
    }
    port.postMessage(answer)
  })
}

// better-sqlite3 binds numbers, strings, bigints, buffers and null (the driver maps the rest);
// a Buffer arrives as a plain Uint8Array (structured clone).
function bindable (v: unknown): unknown {
  if (v instanceof Uint8Array && !Buffer.isBuffer(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength)
  return v
}

if (parentPort !== null) serve(parentPort, workerData as SqliteWorkerData)
