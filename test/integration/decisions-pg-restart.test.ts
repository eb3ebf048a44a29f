/**
 * The shared decision log under the ordinary faults of a production week: two real iceguard
 * processes (`node --import tsx src/main/server.ts`) share one PostgreSQL and one catalog, clients
 * commit schema changes through both, and PostgreSQL is restarted (`pg_ctl restart -m fast` and
 * `-m immediate`) and stopped for a few seconds while those writes are in flight. Afterwards both
 * processes still serve, the catalog holds every acknowledged change and no refused one, and every
 * answered write has exactly one stored decision.
 *
 * Each write names a column of its own (`okA0x0007` allowed, `noA0x0007` refused: a required column
 * without a default, which the Iceberg spec forbids), so its decision is found by that name in the
 * stored schema diff. Each worker owns one table, so no write fails for a reason the test did not cause.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import t, { type Test } from 'tap'
import pg from 'pg'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { startCatalog } from '../helpers/index.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta } from '../helpers/gate-fixtures.js'
import { postgresSkip, startPostgres, type TestPostgres } from '../helpers/postgres.js'

const ROOT = new URL('../..', import.meta.url).pathname
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

interface Iceguard {
  readonly name: string
  readonly child: ChildProcess
  readonly url: string
  /** Every log line it wrote. */
  readonly lines: string[]
  /** The fault running (or last run) when it exited, if it did. */
  exitedAt?: string
}

/** The fault running now, to say which one a process did not survive. */
let currentFault = 'before the first fault'

async function startIceguard (t: Test, name: string, upstream: string, databaseUrl: string): Promise<Iceguard> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/server.ts', '--port', '0', '--host', '127.0.0.1', '--log-level', 'info',
    '--upstream', upstream, '--database-url', databaseUrl, '--shutdown-timeout', '15000'], {
    cwd: ROOT,
    env: { ...process.env, ICEGUARD_POLICY: 'builtin:spec' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const lines: string[] = []
  let partial = ''
  const url = await new Promise<string>((resolve, reject) => {
    const take = (c: Buffer): void => {
      partial += c.toString()
      const all = partial.split('\n')
      partial = all.pop() ?? ''
      for (const l of all) {
        lines.push(l)
        const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(l)
        if (m?.[1] !== undefined) resolve(m[1])
      }
    }
    child.stdout!.on('data', take)
    child.stderr!.on('data', take)
    child.once('exit', code => reject(new Error(`${name} exited ${code} before listening: ${lines.join('\n')}`)))
  })
  const ig: Iceguard = { name, child, url, lines }
  child.once('exit', () => { ig.exitedAt = currentFault })
  return ig
}

interface Write {
  readonly column: string
  readonly table: string
  readonly allowed: boolean
  /** HTTP status, or 0 when no answer came (the process was gone). */
  readonly status: number
  readonly via: string
}

/** Commits through `ig` to its own table until `stop()` says so, alternating allowed and refused writes. */
async function worker (ig: Iceguard, table: string, tag: string, stop: () => boolean, writes: Write[]): Promise<void> {
  for (let n = 0; !stop(); n++) {
    const allowed = n % 3 !== 2
    const column = `${allowed ? 'ok' : 'no'}${tag}x${String(n).padStart(4, '0')}`
    let status = 0
    try {
      const meta = await loadMeta(ig.url, 'db', table)
      const s = cloneSchema(meta)
      s.fields.push({ id: meta['last-column-id'] + 1, name: column, required: !allowed, type: 'string' })
      const res = await request(`${ig.url}/v1/namespaces/db/tables/${table}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(clientShapes.java(meta, s, 'db', table))
      })
      await res.body.dump()
      status = res.statusCode
    } catch {
      // Nothing answered: counted as status 0 (the process died or refused the connection).
      await sleep(50)
    }
    writes.push({ column, table, allowed, status, via: ig.name })
  }
}

/** The faults, in order, while the workers write. */
async function faults (pgServer: TestPostgres, log: string[]): Promise<void> {
  const restart = (mode: 'fast' | 'immediate'): [string, () => Promise<void>] => [`restart -m ${mode}`, async () => { await pgServer.restart(mode) }]
  const steps: Array<[string, () => Promise<void>]> = [
    restart('fast'), restart('immediate'), restart('fast'),
    ['stop for 3 s', async () => { await pgServer.stop('fast'); await sleep(3000); await pgServer.start() }],
    restart('immediate'), restart('fast'), restart('immediate')
  ]
  for (const [name, step] of steps) {
    await sleep(700)
    currentFault = `during ${name} (fault ${log.length + 1})`
    await step()
    log.push(name)
    currentFault = `after ${name} (fault ${log.length})`
  }
  await sleep(700)
}

t.test('PostgreSQL restarted and stopped under writes: both iceguards keep serving and every answered write has exactly one decision', { skip: postgresSkip, timeout: 180_000 }, async t => {
  const pgServer = await startPostgres(t)
  if (pgServer === undefined) return
  const catalog = await startCatalog(t, { record: false })
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['db'] })
  const igs = await Promise.all([startIceguard(t, 'A', catalog.url, pgServer.url), startIceguard(t, 'B', catalog.url, pgServer.url)])

  const writes: Write[] = []
  let stopped = false
  const workers: Array<Promise<void>> = []
  for (const ig of igs) {
    for (const w of [0, 1, 2]) {
      const table = `t${ig.name}${w}`
      await createFixtureTable(ice, table, 2)
      workers.push(worker(ig, table, `${ig.name}${w}`, () => stopped, writes))
    }
  }
  const done: string[] = []
  await faults(pgServer, done)
  stopped = true
  await Promise.all(workers)
  t.same(done.length, 7, `the faults ran: ${done.join(', ')}`)

  for (const ig of igs) {
    const exits = ig.lines.filter(l => /shutting down after an error/.test(l))
    t.same(exits, [], `${ig.name} did not shut down after an error`)
    t.equal(ig.child.exitCode, null, `${ig.name} is still running${ig.exitedAt !== undefined ? ` (it exited ${ig.exitedAt})` : ''}`)
    const res = await request(`${ig.url}/v1/config`).catch(() => undefined)
    t.equal(res?.statusCode, 200, `${ig.name} still answers`)
    await res?.body.dump()
  }

  const answered = writes.filter(w => w.status !== 0)
  t.ok(answered.length >= 20, `writes went through both processes (${answered.length} answered: ${igs.map(ig => `${ig.name} ${answered.filter(w => w.via === ig.name).length}`).join(', ')})`)
  t.same(writes.filter(w => w.status === 0).map(w => `${w.via} ${w.column}`), [], 'every write was answered')
  t.same(writes.filter(w => w.status >= 500).map(w => `${w.via} ${w.column}: ${w.status}`), [], 'no 5xx')
  t.same(answered.filter(w => w.status !== (w.allowed ? 200 : 400)).map(w => `${w.column}: ${w.status}`), [], 'allowed writes answered 200, refused ones 400')

  const present = new Set<string>()
  for (const table of new Set(writes.map(w => w.table))) {
    for (const f of cloneSchema(await loadMeta(catalog.url, 'db', table)).fields) present.add(f.name)
  }
  t.same(answered.filter(w => w.status === 200 && !present.has(w.column)).map(w => w.column), [], 'no acknowledged commit is lost')
  t.same(writes.filter(w => !w.allowed && present.has(w.column)).map(w => w.column), [], 'no refused change was applied')

  // The decisions reach the store after PostgreSQL is back: wait for them (no deadline is asserted beyond the test's own).
  const db = new pg.Client({ connectionString: pgServer.url })
  await db.connect()
  t.teardown(async () => { await db.end() })
  const names = new Set(answered.map(w => w.column))
  const count = new Map<string, number>()
  for (let tries = 0; tries < 150; tries++) {
    const rows = (await db.query("SELECT id, changes, details FROM decisions WHERE kind = 'update-table'")).rows as Array<{ id: string, changes: string, details: string }>
    count.clear()
    for (const r of rows) {
      const named = new Set([...`${r.changes} ${r.details}`.matchAll(/\b(?:ok|no)[AB][012]x\d{4}\b/g)].map(m => m[0]))
      for (const n of named) count.set(n, (count.get(n) ?? 0) + 1)
    }
    if ([...names].every(n => count.has(n))) break
    await sleep(200)
  }
  t.same([...names].filter(n => !count.has(n)), [], 'every answered write has a stored decision')
  t.same([...count].filter(([, c]) => c > 1).map(([n, c]) => `${n} ×${c}`), [], 'no decision stored twice')
  const dup = await db.query('SELECT decision_id, rule, COUNT(*) AS n FROM decision_rules GROUP BY decision_id, rule HAVING COUNT(*) > 1')
  t.equal(dup.rowCount, 0, 'no rule of a decision stored twice')

  // SIGTERM: both flush and exit cleanly, losing nothing.
  await Promise.all(igs.filter(ig => ig.child.exitCode === null).map(async ig => {
    const exited = new Promise<number | null>(resolve => ig.child.once('exit', code => resolve(code)))
    ig.child.kill('SIGTERM')
    t.equal(await exited, 0, `${ig.name} exits 0 on SIGTERM`)
    t.same(ig.lines.filter(l => /decision not stored/.test(l)), [], `${ig.name} dropped no decision`)
  }))
})
