/**
 * Every background loop over the decision store goes on when a store call fails, in each way a
 * PostgreSQL connection fails as the driver reports it (`pg-driver.ts`): a connection that died
 * while idle in the pool, one that died while checked out in a transaction (the server ended it),
 * a statement that timed out, and a COMMIT whose answer was lost (the write landed, the call
 * failed: the outcome is unknown to the caller). The loops: the decision log's flusher, retention,
 * the revocation refresh and the webhook outbox. After the fault each loop runs again on its own
 * and does its work, once.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import type { AuditRecord } from '../../../src/audit/audit-log.js'
import { DecisionLog } from '../../../src/decisions/decision-log.js'
import { DecisionStore } from '../../../src/decisions/decision-store.js'
import { Revocations } from '../../../src/decisions/revocations.js'
import { openSqlite } from '../../../src/decisions/sqlite-driver.js'
import { batchInTransaction, type SqlDriver, type SqlExecutor } from '../../../src/decisions/sql-driver.js'
import { WebhookDeliverer } from '../../../src/decisions/webhooks.js'

type Fault = 'idle connection lost' | 'checked-out connection lost' | 'timeout' | 'unknown outcome'
const FAULTS: readonly Fault[] = ['idle connection lost', 'checked-out connection lost', 'timeout', 'unknown outcome']

/** The errors `pg` gives for each fault (messages and codes as pg and PostgreSQL write them). */
function failure (fault: Fault): Error {
  switch (fault) {
    case 'idle connection lost': return new Error('Connection terminated unexpectedly')
    case 'checked-out connection lost': return Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' })
    case 'timeout': return new Error('Query read timeout')
    case 'unknown outcome': return new Error('Connection terminated unexpectedly')
  }
}

interface Faulty {
  readonly driver: SqlDriver
  /** The same database without faults, for the test's own reads. */
  readonly inner: SqlDriver
  /** The next `times` calls fail this way. */
  fail (fault: Fault, times?: number): void
  /** Calls that failed so far. */
  readonly failed: number
}

/**
 * SQLite in memory behind the fault: an idle-connection loss fails the call before it runs; a
 * checked-out loss fails a transaction after its first statement (rolled back); a timeout fails
 * after a delay without running; an unknown outcome commits, then fails.
 */
function faulty (): Faulty {
  const inner = openSqlite(':memory:')
  let fault: Fault | undefined
  let left = 0
  let failed = 0
  const take = (): Fault | undefined => {
    if (left === 0) return undefined
    left--
    failed++
    return fault
  }
  const before = async (f: Fault | undefined): Promise<void> => {
    if (f === 'idle connection lost') throw failure(f)
    if (f === 'timeout') {
      await new Promise(resolve => setTimeout(resolve, 20))
      throw failure(f)
    }
  }
  const single = async <T>(call: () => Promise<T>): Promise<T> => {
    const f = take()
    await before(f)
    if (f === 'checked-out connection lost') throw failure(f)
    const out = await call()
    if (f === 'unknown outcome') throw failure(f)
    return out
  }
  const driver: SqlDriver = {
    dialect: 'sqlite',
    location: ':memory: (faulty)',
    query: async (sql, params) => await single(async () => await inner.query(sql, params)),
    run: async (sql, params) => await single(async () => await inner.run(sql, params)),
    async transaction<T> (fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const f = take()
      await before(f)
      const out = await inner.transaction(async (tx) => {
        if (f !== 'checked-out connection lost') return await fn(tx)
        await fn(tx)
        // The server ended the connection before COMMIT: the transaction is rolled back.
        throw failure(f)
      })
      if (f === 'unknown outcome') throw failure(f)
      return out
    },
    // The same faults as a transaction of the same statements.
    batch: async (statements) => { await batchInTransaction(driver, statements) },
    close: async () => { await inner.close() }
  }
  return {
    driver,
    inner,
    fail (f, times = 1) { fault = f; left = times },
    get failed () { return failed }
  }
}

function quietLog (): { lines: Array<{ level: string, msg: string }>, info: any, warn: any, error: any } {
  const lines: Array<{ level: string, msg: string }> = []
  return {
    lines,
    info: (_obj: object, msg: string) => lines.push({ level: 'info', msg }),
    warn: (_obj: object, msg: string) => lines.push({ level: 'warn', msg }),
    error: (_obj: object, msg: string) => lines.push({ level: 'error', msg })
  }
}

function record (n: number, verdict: 'allow' | 'deny' = 'deny'): AuditRecord {
  return {
    requestId: `req-${n}`,
    kind: 'update-table',
    tables: ['db.a'],
    tableRefs: [{ namespace: ['db'], name: 'a' }],
    flows: ['update'],
    verdict,
    rules: verdict === 'deny' ? ['COLUMN_NO_DROP'] : [],
    warnings: [],
    summary: 'db.a',
    status: verdict === 'deny' ? 400 : 200,
    forwarded: verdict !== 'deny',
    durationMs: 1,
    decided: [{ namespace: ['db'], name: 'a', findings: verdict === 'deny' ? [{ rule: 'COLUMN_NO_DROP', severity: 'error', message: 'Cannot drop column: x' }] : [], summary: `change ${n}` }]
  }
}

async function until (t: Test, what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  t.fail(`never: ${what}`)
}

async function storedIds (db: Faulty): Promise<string[]> {
  return (await db.inner.query('SELECT id FROM decisions ORDER BY id')).map(r => String(r.id))
}

for (const fault of FAULTS) {
  t.test(`${fault}: the decision log's flusher retries the batch until stored, and stores each decision once`, async t => {
    const db = faulty()
    const store = new DecisionStore(db.driver)
    await store.migrate()
    const log = quietLog()
    const dlog = new DecisionLog({ store, log })
    t.teardown(async () => { await dlog.close(); await store.close() })
    db.fail(fault, 2)
    const ids = [record(1), record(2, 'allow')].flatMap(r => dlog.accept(r).decisionIds ?? [])
    t.equal(ids.length, 2, 'both records were queued')
    // The flusher runs by itself: first right away, then on its retry timer.
    await until(t, 'the batch is stored', () => dlog.pending === 0)
    t.equal(db.failed, 2, 'the store failed twice')
    t.same(await storedIds(db), [...ids].sort(), 'every decision is stored, once')
    t.equal((await db.inner.query('SELECT decision_id FROM decision_rules')).length, 1, 'and its rule once')
    t.ok(log.lines.some(l => /Cannot store decisions/.test(l.msg)), 'the failure was logged')
    t.ok(log.lines.some(l => /available again/.test(l.msg)), 'and the recovery')
    dlog.accept(record(3))
    await until(t, 'the next record is stored', async () => (await storedIds(db)).length === 3)
    t.equal(dlog.stats().pending, 0, 'the loop went on: a later record is stored too')
  })

  t.test(`${fault}: retention runs again on its next tick`, async t => {
    const db = faulty()
    const store = new DecisionStore(db.driver)
    await store.migrate()
    const old = Date.now() - 100 * 86_400_000
    const dlog0 = new DecisionLog({ store, log: quietLog(), now: () => old })
    dlog0.accept(record(1))
    await dlog0.close()
    const log = quietLog()
    db.fail(fault, 1)
    const dlog = new DecisionLog({ store, log, retentionDays: 90, pruneEveryMs: 30 })
    t.teardown(async () => { await dlog.close(); await store.close() })
    dlog.startPruning()
    await until(t, 'the old decision is deleted', async () => (await storedIds(db)).length === 0)
    t.equal(db.failed, 1, 'the first run failed')
    t.ok(log.lines.some(l => /Cannot delete old decisions/.test(l.msg)), 'and was logged')
  })

  t.test(`${fault}: the revocation refresh keeps the last set, then reads the new one`, async t => {
    const db = faulty()
    const store = new DecisionStore(db.driver)
    await store.migrate()
    const now = Date.now()
    await store.revokeOverride('tok-1', 'admin', now, now + 3600_000)
    let errors = 0
    const revocations = new Revocations(store, { refreshMs: 20, onError: () => { errors++ } })
    t.teardown(async () => { revocations.stop(); await store.close() })
    await revocations.refresh()
    t.ok(revocations.isRevoked('tok-1'), 'the first refresh read the set')
    await store.revokeOverride('tok-2', 'admin', now, now + 3600_000)
    db.fail(fault, 2)
    await revocations.refresh()
    t.ok(revocations.isRevoked('tok-1'), 'while the store fails the last set stays in force')
    t.equal(errors, 1, 'the failure is reported once')
    revocations.start()
    await until(t, 'the new revocation is read', () => revocations.isRevoked('tok-2'))
    t.equal(db.failed, 2, 'after the failures the loop read the store again')
  })

  t.test(`${fault}: the webhook outbox is read again on the next poll, and every message is delivered`, async t => {
    const received: string[] = []
    const receiver = http.createServer((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => { body += c.toString() })
      req.on('end', () => { received.push(body); res.end() })
    })
    await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
    t.teardown(() => { receiver.closeAllConnections(); receiver.close() })
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    const db = faulty()
    const store = new DecisionStore(db.driver)
    await store.migrate()
    const [d] = (await import('../../../src/decisions/decision.js')).decisionsFromAudit(record(1), Date.now())
    await store.insert([d!], [{ id: 'msg-1', decisionId: d!.id, url, body: '{"n":1}' }])
    const log = quietLog()
    const deliverer = new WebhookDeliverer({ store, log, secretFor: () => undefined, pollMs: 20 })
    t.teardown(async () => { await deliverer.stop(); await store.close() })
    db.fail(fault, 1)
    t.equal(await deliverer.deliverDue(), 0, 'the run whose store call failed delivers nothing')
    t.ok(log.lines.some(l => /Cannot read the webhook outbox/.test(l.msg)), 'and says why')
    deliverer.start()
    await until(t, 'the message is delivered and recorded', async () => (await db.inner.query('SELECT delivered_at FROM webhook_outbox'))[0]?.delivered_at !== null)
    t.same(received, ['{"n":1}'], 'the message reached the receiver')
    t.equal(db.failed, 1, 'after the failure the loop read the outbox again')
  })
}

t.test('a batch retried after a lost COMMIT answer stores each decision and message once', async t => {
  const db = faulty()
  const store = new DecisionStore(db.driver)
  await store.migrate()
  t.teardown(async () => { await store.close() })
  const [d] = (await import('../../../src/decisions/decision.js')).decisionsFromAudit(record(1), Date.now())
  const outbox = [{ id: 'msg-1', decisionId: d!.id, url: 'http://127.0.0.1:1/', body: '{}' }]
  db.fail('unknown outcome', 1)
  await t.rejects(store.insert([d!], outbox), /Connection terminated/, 'the first attempt reports a failure')
  await store.insert([d!], outbox)
  t.same(await storedIds(db), [d!.id], 'the decision is stored once')
  t.equal((await store.outboxFor(d!.id)).length, 1, 'its message is queued once')
})

t.test('closing writes the buffer until the deadline: a store back in time loses nothing, one still down is named record by record', async t => {
  const db = faulty()
  const store = new DecisionStore(db.driver)
  await store.migrate()
  t.teardown(async () => { await store.close() })
  const log = quietLog()
  const dlog = new DecisionLog({ store, log })
  db.fail('idle connection lost', 1_000_000)
  const ids = [record(1), record(2)].flatMap(r => dlog.accept(r).decisionIds ?? [])
  await until(t, 'the first attempt failed', () => db.failed > 0)
  t.match(dlog.stats(), { pending: 2, failures: 1 }, 'stats() shows the buffer and the failures')
  t.ok(dlog.stats().oldestAgeMs >= 0, 'and how long the oldest write has waited')
  setTimeout(() => { db.fail('idle connection lost', 0) }, 300)
  const began = Date.now()
  await dlog.close(Date.now() + 3000)
  t.ok(Date.now() - began < 3000, 'close returned once the buffer was stored')
  t.same(await storedIds(db), [...ids].sort(), 'every buffered decision was stored while closing')
  t.notOk(log.lines.some(l => l.msg === 'decision not stored'), 'none is reported lost')

  const db2 = faulty()
  const store2 = new DecisionStore(db2.driver)
  await store2.migrate()
  t.teardown(async () => { await store2.close() })
  const log2 = quietLog()
  const dlog2 = new DecisionLog({ store: store2, log: log2 })
  db2.fail('timeout', 1_000_000)
  dlog2.accept(record(3))
  const began2 = Date.now()
  await dlog2.close(Date.now() + 500)
  t.ok(Date.now() - began2 < 1500, 'with the store still down, close returns at the deadline')
  t.equal(log2.lines.filter(l => l.msg === 'decision not stored').length, 1, 'and names the record it could not store')
})
