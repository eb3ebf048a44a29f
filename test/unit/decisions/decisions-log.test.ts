/**
 * The decision log's buffer: queued records never wait on the store, a store that fails keeps
 * them buffered and retried, a full buffer refuses new records and the audit line then carries
 * what could not be stored, and a shutdown names what was never stored.
 */
import t from 'tap'
import type { AuditRecord } from '../../../src/audit/audit-log.js'
import { memoryAuditSink } from '../../../src/audit/audit-log.js'
import { DecisionLog } from '../../../src/decisions/decision-log.js'
import { DecisionStore } from '../../../src/decisions/decision-store.js'
import { openSqlite } from '../../../src/decisions/sqlite-driver.js'
import type { SqlDriver } from '../../../src/decisions/sql-driver.js'
import { createMetrics } from '../../../src/metrics/iceguard-metrics.js'
import { counterValue } from '../../helpers/metrics.js'

/** SQLite in memory that fails every call while `down` is set, as a database that went away. */
function flaky (): { driver: SqlDriver, down: boolean } {
  const inner = openSqlite(':memory:')
  const state = { down: false, driver: undefined as unknown as SqlDriver }
  const guard = (): void => { if (state.down) throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }) }
  state.driver = {
    dialect: inner.dialect,
    location: inner.location,
    query: async (sql, params) => { guard(); return await inner.query(sql, params) },
    run: async (sql, params) => { guard(); return await inner.run(sql, params) },
    transaction: async (fn) => { guard(); return await inner.transaction(fn) },
    batch: async (statements) => { guard(); await inner.batch(statements) },
    close: async () => { await inner.close() }
  }
  return state
}

function record (n: number, over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    requestId: `req-${n}`,
    kind: 'transaction',
    tables: ['db.a', 'db.b'],
    tableRefs: [{ namespace: ['db'], name: 'a' }, { namespace: ['db'], name: 'b' }],
    flows: ['update'],
    verdict: 'deny',
    rules: ['COLUMN_NO_DROP'],
    warnings: [],
    summary: 'db.a: dropped',
    status: 400,
    forwarded: false,
    durationMs: 1,
    decided: [
      { namespace: ['db'], name: 'a', findings: [{ rule: 'COLUMN_NO_DROP', severity: 'error', message: 'Cannot drop column: x', fieldId: 2, path: 'x' }], summary: '! dropped 2 x: int' },
      { namespace: ['db'], name: 'b', findings: [], summary: '' }
    ],
    ...over
  }
}

function quietLog (): { lines: Array<{ level: string, obj: any, msg: string }>, info: any, warn: any, error: any } {
  const lines: Array<{ level: string, obj: any, msg: string }> = []
  return {
    lines,
    info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }),
    error: (obj: object, msg: string) => lines.push({ level: 'error', obj, msg })
  }
}

t.test('a transaction gives one decision per table; the audit line names them', async t => {
  const db = flaky()
  const store = new DecisionStore(db.driver)
  const log = new DecisionLog({ store, log: quietLog() })
  t.teardown(async () => { await log.close(); await store.close() })
  const lines = memoryAuditSink()
  log.auditSink(lines).record(record(1))
  t.equal(lines.records[0]?.decisionIds?.length, 2, 'two decision ids on the line')
  await log.flush()
  const page = await store.list({ verdict: 'deny' }, 10)
  t.same(page.decisions.map(d => [d.table.name, d.findings.map(f => f.rule)]).sort(), [['a', ['COLUMN_NO_DROP']], ['b', []]], 'each table with its own findings')
  t.same(page.decisions.map(d => d.requestId), ['req-1', 'req-1'], 'sharing the request id')
  t.same(page.decisions.map(d => d.details.tables), [['db.a', 'db.b'], ['db.a', 'db.b']], 'and naming the whole write')
})

t.test('a store that is down: buffered, counted, logged once, retried; a full buffer is said on the line', async t => {
  const db = flaky()
  const store = new DecisionStore(db.driver)
  const logged = quietLog()
  const m = createMetrics()
  const log = new DecisionLog({ store, log: logged, capacity: 3, metrics: m })
  t.teardown(async () => { await store.close() })
  const lines = memoryAuditSink()
  const sink = log.auditSink(lines)

  db.down = true
  sink.record(record(1, { decided: undefined, tables: ['db.a'], tableRefs: [{ namespace: ['db'], name: 'a' }] }))
  sink.record(record(2, { decided: undefined, tables: ['db.a'], tableRefs: [{ namespace: ['db'], name: 'a' }] }))
  await log.flush()
  await log.flush()
  t.equal(log.pending, 2, 'both wait in the buffer')
  t.equal(await counterValue(m.decisionStore, { outcome: 'failed' }), 4, 'each failed attempt is counted')
  t.equal(logged.lines.filter(l => /Cannot store decisions/.test(l.msg)).length, 1, 'the outage is logged once')

  sink.record(record(3, { decided: undefined, tables: ['db.a'], tableRefs: [{ namespace: ['db'], name: 'a' }] }))
  sink.record(record(4))
  t.ok(lines.records[2]?.decisionIds !== undefined, 'the third still fits')
  const full = lines.records[3]
  t.match(full?.decisionNotStored, /buffer is full \(3 writes waiting; store unavailable: ECONNREFUSED: connection refused\)/, 'the fourth line says it was not stored, and why')
  t.match(full?.decided, [{ name: 'a', findings: [{ rule: 'COLUMN_NO_DROP' }] }], 'and carries the findings it would have stored')
  t.equal(await counterValue(m.decisionStore, { outcome: 'not-stored' }), 2, 'counted per table')

  db.down = false
  await log.flush()
  t.equal(log.pending, 0, 'the store is back: the buffer drains')
  t.same((await store.list({}, 10)).decisions.map(d => d.requestId).sort(), ['req-1', 'req-2', 'req-3'], 'every buffered decision is stored, in one piece')
  t.ok(logged.lines.some(l => /available again/.test(l.msg)), 'and the recovery is logged')

  db.down = true
  sink.record(record(5, { decided: undefined, tables: ['db.z'], tableRefs: [{ namespace: ['db'], name: 'z' }] }))
  await log.close()
  const lost = logged.lines.find(l => l.msg === 'decision not stored')
  t.match(lost?.obj, { component: 'audit', audit: { requestId: 'req-5', decisionNotStored: /shut down/ } }, 'at shutdown what never reached the store is logged as an audit line')
  t.match(log.accept(record(6)).decisionNotStored, /shut down/, 'and nothing is queued after it')
})

t.test('configuration of the decision log', async t => {
  const { loadConfig, ConfigError } = await import('../../../src/main/config.js')
  const c = loadConfig(['--state-dir', '/srv/state', '--decision-retention', '30'], {
    ICEGUARD_DATABASE_URL: 'postgres://u:p@db:5432/iceguard', ICEGUARD_WEBHOOK_URL: 'https://hooks.example.com/x?token=a', ICEGUARD_WEBHOOK_SECRET: 's'
  })
  t.match(c, { stateDir: '/srv/state', decisionRetentionDays: 30, databaseUrl: 'postgres://u:p@db:5432/iceguard', webhookUrl: 'https://hooks.example.com/x?token=a', webhookSecret: 's' },
    'flags and environment are read')
  t.equal(loadConfig([], {}).decisionRetentionDays, 90, 'retention defaults to 90 days')
  let problems = ''
  try {
    loadConfig(['--database-url', 'mysql://db/x', '--decision-retention', 'soon'], { ICEGUARD_WEBHOOK_URL: 'ftp://x' })
  } catch (err) {
    if (err instanceof ConfigError) problems = err.problems.join('\n')
  }
  t.match(problems, /database-url.*postgres:\/\//, 'a database URL that is not PostgreSQL is named')
  t.match(problems, /decision-retention.*"soon"/, 'so is a retention that is not a number of days')
  t.match(problems, /ICEGUARD_WEBHOOK_URL.*ftp/, 'and a webhook URL that is not http(s)')
})
