/**
 * The embedded store: one SQLite file (better-sqlite3), run on a thread of its own
 * (sqlite-worker.ts) so that parsing statements and syncing the file never hold up the requests
 * this thread serves. Calls are queued one after another so a transaction's statements never
 * interleave with another caller's. A thread that stops fails what was waiting on it, with an
 * error, and the next call starts a new one.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { Row, SqlDriver, SqlExecutor } from './sql-driver.js'
import type { SqliteAnswer, SqliteRequest, SqliteWorkerData } from './sqlite-worker.js'

/** The driver's current thread, for tests that stop it. */
export const kSqliteThread = Symbol('iceguard.sqliteThread')

export interface SqliteDriver extends SqlDriver {
  readonly [kSqliteThread]: () => Worker | undefined
}

// Built, the thread runs sqlite-worker.js. Under tsx (tests, `npm run dev`) its neighbour is
// TypeScript: the thread registers tsx's loader first, then imports it (a loader passed in
// execArgv is not always in place before a thread's first module loads on Node 20).
const TYPESCRIPT = import.meta.url.endsWith('.ts')
const WORKER_URL = new URL(TYPESCRIPT ? './sqlite-worker.ts' : './sqlite-worker.js', import.meta.url)

function startWorker (data: SqliteWorkerData): Worker {
  if (!TYPESCRIPT) return new Worker(WORKER_URL, { workerData: data })
  const api = import.meta.resolve('tsx/esm/api')
  const boot = `import(${JSON.stringify(api)}).then(m => { m.register(); return import(${JSON.stringify(WORKER_URL.href)}) })`
  return new Worker(boot, { eval: true, workerData: data, execArgv: [] })
}

type Request = SqliteRequest extends infer R ? R extends { id: number } ? Omit<R, 'id'> : never : never

interface Waiting {
  readonly resolve: (a: SqliteAnswer) => void
  readonly reject: (err: Error) => void
}

/** One started thread: its questions in flight, and why it stopped once it has. */
class Thread {
  readonly worker: Worker
  readonly #waiting = new Map<number, Waiting>()
  #next = 0
  stopped: Error | undefined

  constructor (file: string, onStop: () => void) {
    this.worker = startWorker({ file })
    // Idle, the thread does not keep the process alive; a question in flight does.
    this.worker.unref()
    let cause: Error | undefined
    this.worker.on('message', (a: SqliteAnswer) => {
      const w = this.#waiting.get(a.id)
      if (w === undefined) return
      this.#waiting.delete(a.id)
      if (this.#waiting.size === 0) this.worker.unref()
      w.resolve(a)
    })
    // A background dependency never ends the process: an error in the thread fails its callers.
    this.worker.on('error', (err) => { cause = err })
    this.worker.on('exit', (code) => {
      const why = cause === undefined ? '' : `: ${String(cause.message ?? (cause as { code?: unknown }).code ?? cause)}`
      this.stopped = new Error(`The SQLite decision store's thread stopped (exit code ${code})${why}`, { cause })
      for (const w of this.#waiting.values()) w.reject(this.stopped)
      this.#waiting.clear()
      onStop()
    })
  }

  async ask (req: Request): Promise<SqliteAnswer> {
    if (this.stopped !== undefined) throw this.stopped
    const id = this.#next++
    const answer = new Promise<SqliteAnswer>((resolve, reject) => { this.#waiting.set(id, { resolve, reject }) })
    if (this.#waiting.size === 1) this.worker.ref()
    this.worker.postMessage({ ...req, id })
    const a = await answer
    if ('error' in a) throw Object.assign(new Error(a.error.message), a.error.code !== undefined ? { code: a.error.code } : {})
    return a
  }
}

export function openSqlite (file: string): SqliteDriver {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
  let thread: Thread | undefined
  let closed = false
  const current = (): Thread => {
    if (closed) throw new Error('The SQLite decision store is closed')
    if (thread === undefined) {
      const t = new Thread(file, () => { if (thread === t) thread = undefined })
      thread = t
    }
    return thread
  }
  let queue: Promise<unknown> = Promise.resolve()
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn)
    queue = next.catch(() => {})
    return next
  }
  const executor = (t: Thread): SqlExecutor => ({
    async query (sql, params = []) { return rowsOf(await t.ask({ op: 'query', sql, params: params.map(cloneable) })) },
    async run (sql, params = []) { return changesOf(await t.ask({ op: 'run', sql, params: params.map(cloneable) })) }
  })
  // Every statement of a transaction goes to the thread that began it: if that thread stops,
  // the rest fail rather than run outside the transaction on a new one. BEGIN travels with the
  // first statement, so a one-statement transaction is two messages, not three.
  const inTransaction = (t: Thread): SqlExecutor & { readonly begun: boolean } => {
    let begun = false
    const ask = async (req: { op: 'query' | 'run', sql: string, params: readonly unknown[] }): Promise<SqliteAnswer> => {
      if (begun) return await t.ask(req)
      begun = true
      return await t.ask({ ...req, begin: true })
    }
    return {
      get begun () { return begun },
      async query (sql, params = []) { return rowsOf(await ask({ op: 'query', sql, params: params.map(cloneable) })) },
      async run (sql, params = []) { return changesOf(await ask({ op: 'run', sql, params: params.map(cloneable) })) }
    }
  }
  return {
    dialect: 'sqlite',
    location: file,
    [kSqliteThread]: () => thread?.worker,
    query: async (sql, params) => await serial(async () => await executor(current()).query(sql, params)),
    run: async (sql, params) => await serial(async () => await executor(current()).run(sql, params)),
    transaction: async (fn) => await serial(async () => {
      const t = current()
      const tx = inTransaction(t)
      try {
        const out = await fn(tx)
        if (tx.begun) await t.ask({ op: 'commit' })
        return out
      } catch (err) {
        // A first statement that failed may have begun the transaction (BEGIN, then its error).
        if (tx.begun && t.stopped === undefined) await t.ask({ op: 'rollback' })
        throw err
      }
    }),
    batch: async (statements) => {
      if (statements.length === 0) return
      await serial(async () => {
        await current().ask({ op: 'batch', statements: statements.map(s => ({ sql: s.sql, params: (s.params ?? []).map(cloneable) })) })
      })
    },
    close: async () => {
      await serial(async () => {
        if (closed) return
        closed = true
        const t = thread
        if (t === undefined) return
        // Everything queued before the close has been answered by now (the queue is in order).
        if (t.stopped === undefined) await t.ask({ op: 'close' }).catch(() => {})
        await t.worker.terminate()
      })
    }
  }
}

function rowsOf (a: SqliteAnswer): Row[] {
  return 'rows' in a ? a.rows as Row[] : []
}

function changesOf (a: SqliteAnswer): number {
  return 'changes' in a ? a.changes : 0
}

// better-sqlite3 binds numbers, strings, bigints, buffers and null: booleans are stored as 0/1.
function cloneable (v: unknown): unknown {
  if (v === undefined) return null
  if (typeof v === 'boolean') return v ? 1 : 0
  return v
}
