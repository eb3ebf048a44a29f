/**
 * The PostgreSQL driver against a real server whose connections are ended under it
 * (`pg_terminate_backend`, what a restart or failover does to each backend): a connection ended
 * while idle in the pool, while checked out between two statements of a transaction, while a
 * statement runs, around ROLLBACK, and a statement past the timeout. Each failed call rejects,
 * no `error` event is left unheard (it would end the process), the broken connection is not
 * reused, and the next call works. Storing the same decisions twice stores them once.
 */
import t, { type Test } from 'tap'
import pg from 'pg'
import { decisionsFromAudit } from '../../../src/decisions/decision.js'
import { DecisionStore } from '../../../src/decisions/decision-store.js'
import { openPostgres } from '../../../src/decisions/pg-driver.js'
import type { SqlDriver } from '../../../src/decisions/sql-driver.js'
import { postgresSkip, startPostgres } from '../../helpers/postgres.js'

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

interface Setup { driver: SqlDriver, admin: pg.Client, lost: Error[], uncaught: unknown[] }

async function setup (t: Test): Promise<Setup | undefined> {
  const server = await startPostgres(t)
  if (server === undefined) return undefined
  const lost: Error[] = []
  const driver = openPostgres(server.url, { max: 2, queryTimeout: 500, onConnectionLost: (err) => lost.push(err) })
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  // tap fails the file on an uncaught exception too; this names it in the test that caused it.
  const uncaught: unknown[] = []
  const onUncaught = (err: unknown): void => { uncaught.push(err) }
  process.on('uncaughtException', onUncaught)
  t.teardown(async () => {
    process.removeListener('uncaughtException', onUncaught)
    await admin.end()
    await driver.close()
  })
  await driver.run('CREATE TABLE IF NOT EXISTS marks (id TEXT PRIMARY KEY)')
  return { driver, admin, lost, uncaught }
}

/** Ends every backend of the driver's database but the admin's own. */
async function terminateOthers (admin: pg.Client): Promise<number> {
  const r = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = \'client backend\'')
  return r.rowCount ?? 0
}

async function backendPid (driver: SqlDriver): Promise<number> {
  return Number((await driver.query('SELECT pg_backend_pid() AS pid'))[0]?.pid)
}

t.test('PostgreSQL connections ended under the driver', { skip: postgresSkip }, async t => {
  const s = await setup(t)
  if (s === undefined) return
  const { driver, admin, lost, uncaught } = s

  await t.test('ended while idle in the pool', async t => {
    await driver.query('SELECT 1')
    const before = lost.length
    t.ok(await terminateOthers(admin) >= 1, 'the idle connection was ended')
    for (let i = 0; i < 100 && lost.length === before; i++) await sleep(20)
    t.ok(lost.length > before, 'the loss was reported, not thrown')
    t.same(await driver.query('SELECT 2 AS n'), [{ n: 2 }], 'the next call works on a new connection')
  })

  await t.test('ended while checked out, between two statements of a transaction', async t => {
    let pid = 0
    const failed = driver.transaction(async (tx) => {
      pid = Number((await tx.query('SELECT pg_backend_pid() AS pid'))[0]?.pid)
      await tx.run('INSERT INTO marks (id) VALUES (?)', ['between'])
      await admin.query('SELECT pg_terminate_backend($1)', [pid])
      // The server's message arrives while no statement runs: pg emits `error` on the client.
      await sleep(200)
      await tx.run('INSERT INTO marks (id) VALUES (?)', ['between-2'])
    })
    await t.rejects(failed, 'the transaction fails')
    t.same(await driver.query('SELECT id FROM marks WHERE id LIKE ?', ['between%']), [], 'nothing of it was kept')
    t.not(await backendPid(driver), pid, 'the ended connection is not reused')
  })

  await t.test('ended while a statement runs', async t => {
    let pid = 0
    const failed = driver.transaction(async (tx) => {
      pid = Number((await tx.query('SELECT pg_backend_pid() AS pid'))[0]?.pid)
      setTimeout(() => { void admin.query('SELECT pg_terminate_backend($1)', [pid]) }, 50)
      await tx.query('SELECT pg_sleep(0.4)')
    })
    await t.rejects(failed, /terminat/, 'the transaction fails with the server\'s reason')
    t.not(await backendPid(driver), pid, 'the ended connection is not reused')
  })

  await t.test('ended around ROLLBACK', async t => {
    let pid = 0
    const failed = driver.transaction(async (tx) => {
      pid = Number((await tx.query('SELECT pg_backend_pid() AS pid'))[0]?.pid)
      const err = await tx.query('SELECT 1/0').then(() => undefined, (e: unknown) => e)
      // The rollback the driver sends next meets a connection being ended.
      void admin.query('SELECT pg_terminate_backend($1)', [pid])
      throw err
    })
    await t.rejects(failed, /division by zero/, 'the transaction fails with its own error')
    await sleep(200)
    t.not(await backendPid(driver), pid, 'the ended connection is not reused')
  })

  await t.test('a statement past the timeout', async t => {
    let pid = 0
    const failed = driver.transaction(async (tx) => {
      pid = Number((await tx.query('SELECT pg_backend_pid() AS pid'))[0]?.pid)
      await tx.query('SELECT pg_sleep(3)')
    })
    await t.rejects(failed, /timeout/i, 'the call fails at the timeout')
    t.not(await backendPid(driver), pid, 'the connection left running the statement is not reused')
    t.same(await driver.query('SELECT 3 AS n'), [{ n: 3 }], 'and the next call does not wait behind it')
  })

  await t.test('storing the same decisions again (a retry after an unknown outcome) stores them once', async t => {
    const store = new DecisionStore(driver)
    await store.migrate()
    const decisions = decisionsFromAudit({
      requestId: 'r1',
      kind: 'update-table',
      tables: ['db.a'],
      tableRefs: [{ namespace: ['db'], name: 'a' }],
      flows: ['update'],
      verdict: 'deny',
      rules: ['COLUMN_NO_DROP'],
      warnings: [],
      summary: 'db.a',
      status: 400,
      forwarded: false,
      durationMs: 1,
      decided: [{ namespace: ['db'], name: 'a', findings: [{ rule: 'COLUMN_NO_DROP', severity: 'error', message: 'x' }], summary: 'dropped x' }]
    }, Date.now())
    const outbox = [{ id: 'm1', decisionId: decisions[0]!.id, url: 'http://127.0.0.1:1/', body: '{}' }]
    await store.insert(decisions, outbox)
    await store.insert(decisions, outbox)
    t.equal((await driver.query('SELECT id FROM decisions')).length, 1, 'one decision')
    t.equal((await driver.query('SELECT rule FROM decision_rules')).length, 1, 'one rule row')
    t.equal((await driver.query('SELECT id FROM webhook_outbox')).length, 1, 'one webhook message')
  })

  t.same(uncaught, [], 'no error event went unheard')
})
