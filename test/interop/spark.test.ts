/**
 * Spark SQL through iceguard, against the real Iceberg REST fixture: one PySpark `local[1]` session
 * (SparkCatalog, type=rest, uri=iceguard, cache-enabled=false, the pinned Iceberg runtime jar and
 * SQL extensions) runs every statement of interop/python/spark_sql.py in order, in two namespaces:
 * `eng` (the spec rules), `guarded` (which also forbids column drops) and `reporting` (where a change
 * that breaks a view is refused: VIEW_REFERENCES_COLUMN). A refused statement must
 * raise in Spark with a message naming the rule, the column and the rule's page; the table must be
 * unchanged when Spark reads it back and in the catalog; the refusal must be in the decision log.
 * The texts Spark shows are printed as comments (docs/engines.md quotes them).
 */
import t from 'tap'
import { compareWithCapture, normalise } from './helpers/capture.js'
import { runDriver, type DriverRun, type DriverStep } from './helpers/driver.js'
import { startGuarded } from './helpers/guarded.js'
import { needToolchain, sparkRuntimeJar, toolchainSkip } from './helpers/toolchain.js'

const parts = ['java', 'fixture', 'python', 'spark'] as const

const CAPTURE_HEADER = {
  client: 'spark',
  title: 'Every request of interop/python/spark_sql.py, as PySpark 4.0.1 with iceberg-spark-runtime-4.0_2.13 1.10.1 sent it to iceguard, and the status it got',
  how: 'Captured by test/interop/spark.test.ts between Spark and iceguard, in front of the Iceberg REST fixture 1.10.1; uuids, timestamps, locations, snapshot ids, sizes and the iceguard address normalised (test/interop/helpers/capture.ts). Re-record with ICEGUARD_CAPTURE_WRITE=1 npm run test:interop -- spark.'
}

/**
 * What a PySpark user reads: the exception's text up to the Java stack trace, without py4j's
 * "An error occurred while calling oNN.sql." line.
 */
function headline (step: DriverStep | undefined): string {
  const text = (step?.error?.text ?? '').split(/\n\s*at /)[0] ?? ''
  return text.replace(/^An error occurred while calling o\d+\.sql\.\n: /, '').trim()
}

function fieldsOf (step: DriverStep | undefined): string[] {
  const schema = step?.result as { fields?: Array<{ name: string, type: unknown }> } | undefined
  return (schema?.fields ?? []).map(f => f.name)
}

t.test('Spark SQL through iceguard', { skip: toolchainSkip(parts) }, async t => {
  if (!needToolchain(t, parts)) return
  const env = await startGuarded(t, { capture: true })
  const run: DriverRun = await runDriver('spark_sql.py', { uri: env.clientUrl, jar: sparkRuntimeJar(), scratch: env.scratch }, 900_000)
  const step = (name: string): DriverStep | undefined => run.steps.get(name)
  const ok = (name: string): void => {
    const s = step(name)
    t.ok(s?.ok, `${name}${s?.ok === true ? '' : `: ${headline(s) || 'not run'}`}`)
  }
  t.comment(`Spark ${String(run.extra.spark)}; ${run.order.length} statements in ${run.order.reduce((n, s) => n + (step(s)?.seconds ?? 0), 0).toFixed(0)} s`)

  for (const ns of ['eng', 'guarded']) {
    t.test(`${ns}: create, insert, select, evolve`, async t => {
      for (const s of ['create table', 'insert', 'add column', 'add columns', 'add nested column', 'rename column', 'alter column type bigint']) ok(`${ns}: ${s}`)
      t.same(step(`${ns}: select`)?.result, [
        { id: 1, qty: 2, price: 1.5, addr: { city: 'Oslo' } },
        { id: 2, qty: 5, price: 2.5, addr: { city: 'Rome' } }
      ], 'the rows inserted are read back')
      const before = step(`${ns}: schema before drop`)?.result as { fields: Array<{ name: string, type: any }> }
      t.same(fieldsOf(step(`${ns}: schema before drop`)), ['id', 'qty', 'price', 'addr', 'remark', 'tag', 'score'], 'added, renamed, in order')
      t.equal(before.fields.find(f => f.name === 'qty')?.type, 'long', 'qty widened to bigint')
      t.same(before.fields.find(f => f.name === 'addr')?.type.fields.map((f: { name: string }) => f.name), ['city', 'zip'], 'nested column added')

      // Java checks promotions itself: int -> string never leaves Spark, so iceguard sees nothing.
      const retype = step(`${ns}: alter column type string`)
      t.equal(retype?.ok, false, 'ALTER COLUMN score TYPE string fails')
      t.match(headline(retype), 'Unsupported table change: Cannot change column type: score: int -> string', 'in Spark itself')
      t.comment(`${ns} ALTER COLUMN TYPE string: ${headline(retype)}`)
    })
  }

  t.test('eng: DROP COLUMN is allowed by the spec rules', async t => {
    ok('eng: drop column')
    t.notOk(fieldsOf(step('eng: schema after drop')).includes('tag'), 'tag is gone')
    t.notOk((await env.currentFields('eng', 'orders')).some(f => f[1] === 'tag'), 'in the catalog too')
  })

  t.test('guarded: DROP COLUMN is refused, names rule, column and page, and changes nothing', async t => {
    const drop = step('guarded: drop column')
    t.equal(drop?.ok, false, 'the statement raises in Spark')
    const text = headline(drop)
    t.comment(`guarded DROP COLUMN: ${drop?.error?.class ?? ''} / ${drop?.error?.javaClass ?? ''}: ${text}`)
    t.match(text, 'COLUMN_NO_DROP', 'the rule')
    t.match(text, /Cannot drop column tag \(id \d+\)/, 'the column')
    t.match(text, `${env.proxy.url.replace('127.0.0.1', '127.0.0.1')}/rules/COLUMN_NO_DROP`, 'the rule\'s page')
    t.match(text, /^org\.apache\.spark\.SparkException: Unsupported table change: Cannot commit schema change to guarded\.orders/, 'as an unsupported table change, not a malformed request')
    t.notMatch(text, 'Malformed request')
    t.same(fieldsOf(step('guarded: schema after drop')), fieldsOf(step('guarded: schema before drop')), 'Spark reads the same columns back')
    t.ok((step('guarded: rows after drop')?.result as Array<Record<string, unknown>>).every(r => 'tag' in r), 'and the rows still have tag')
    t.ok((await env.currentFields('guarded', 'orders')).some(f => f[1] === 'tag'), 'the catalog still has tag')
    const denied = await env.decisions({ namespace: 'guarded', verdict: 'deny', rule: 'COLUMN_NO_DROP' })
    t.equal(denied.length, 1, 'one denied decision in the log (Spark did not retry)')
    t.match(denied[0], { table: { namespace: ['guarded'], name: 'orders' }, findings: [{ rule: 'COLUMN_NO_DROP', path: 'tag' }] })
  })

  t.test('guarded: a create and a CTAS the policy refuses raise in Spark, and no table is left', async t => {
    for (const name of ['guarded: create table refused', 'guarded: ctas refused']) {
      const s = step(name)
      t.equal(s?.ok, false, `${name}: the statement raises`)
      t.comment(`${name}: ${s?.error?.class ?? ''} / ${s?.error?.javaClass ?? ''}: ${headline(s)}`)
      t.match(headline(s), /COLUMN_NAME_PATTERN \(Bad, field id \d+\): Cannot name column Bad/, 'naming the rule and the column')
      t.match(headline(s), `${env.proxy.url}/rules/COLUMN_NAME_PATTERN`, 'and the rule\'s page')
      t.notMatch(headline(s), 'Malformed request')
    }
    t.same((step('guarded: tables after refused creates')?.result as Array<{ tableName: string }>).map(r => r.tableName), ['orders'], 'only orders exists in guarded')
    const denied = await env.decisions({ namespace: 'guarded', verdict: 'deny', rule: 'COLUMN_NAME_PATTERN' })
    t.ok(denied.length >= 2, `both refusals are in the decision log (${denied.length})`)
  })

  t.test('CTAS, CREATE OR REPLACE TABLE AS SELECT, DROP TABLE', async t => {
    ok('ctas')
    t.same(step('ctas: rows')?.result, [{ id: 1, qty: 2 }, { id: 2, qty: 5 }])
    ok('rtas')
    t.same(step('rtas: rows')?.result, [{ id: 2, qty: 5, price: 2.5 }], 'the replaced table holds the new rows')
    t.same(fieldsOf(step('rtas: columns')), ['id', 'qty', 'price'], 'and the new columns')
    ok('drop table')
    t.same((step('show tables')?.result as Array<{ tableName: string }>).map(r => r.tableName), ['orders'], 'summary is gone')
  })

  t.test('views', async t => {
    ok('create view')
    t.same(step('view: rows')?.result, [{ id: 2, qty: 5 }])
    const alterAs = step('alter view as')
    t.equal(alterAs?.ok, false, 'ALTER VIEW ... AS is refused by Spark itself')
    t.match(headline(alterAs), 'Use CREATE OR REPLACE VIEW instead')
    ok('create or replace view')
    t.same(step('replaced view: rows')?.result, [{ id: 1 }, { id: 2 }], 'the replaced view\'s query')
    ok('alter view set tblproperties')
    t.ok((step('view properties')?.result as Array<{ key: string, value: string }>).some(r => r.key === 'owner.team' && r.value === 'data'), 'the view property is set')
    ok('drop view')
  })

  t.test('reporting: renaming a column a view reads is refused naming the view; an unread column renames freely', async t => {
    for (const s of ['create namespace reporting', 'reporting: create table', 'reporting: insert', 'reporting: create view']) ok(s)
    const fields = await env.currentFields('reporting', 'orders')
    const idOf = (name: string): number | undefined => fields.find(f => f[1] === name)?.[0]

    // The crawl is off (startProxy): iceguard knows the view from Spark's create passing through it.
    const index = await env.admin('/admin/v1/views/index')
    t.match(index, { views: 1, complete: false }, 'one view indexed, and no crawl has run')
    const dependents = await env.admin('/admin/v1/namespaces/reporting/tables/orders/dependents')
    t.same(dependents.views, [{
      identifier: { namespace: ['reporting'], name: 'order_amounts' },
      dialects: ['spark'],
      columns: [{ 'field-id': idOf('id'), name: 'id' }, { 'field-id': idOf('amount'), name: 'amount' }],
      star: false,
      parsed: true
    }], 'the view Spark created reads id and amount, by field id')

    const rename = step('reporting: rename read column')
    t.equal(rename?.ok, false, 'RENAME COLUMN amount raises in Spark')
    const text = headline(rename)
    t.comment(`reporting RENAME COLUMN, as PySpark prints it: ${(rename?.error?.text ?? '').split(/\n\s*at /)[0] ?? ''}`)
    t.match(text, /^org\.apache\.spark\.SparkException: Unsupported table change: Cannot commit schema change to reporting\.orders/, 'as an unsupported table change')
    t.match(text, 'VIEW_REFERENCES_COLUMN', 'the rule')
    t.match(text, `rename column amount (id ${String(idOf('amount'))}) to total: view reporting.order_amounts (spark) reads it`, 'the column and the view')
    t.match(text, `${env.proxy.url}/rules/VIEW_REFERENCES_COLUMN`, 'the rule\'s page')
    t.same(fieldsOf(step('reporting: columns after refused rename')), ['id', 'amount', 'note'], 'Spark reads the same columns back')
    t.same(step('reporting: view rows after refused rename')?.result, [{ id: 1, amount: 9.5 }, { id: 2, amount: 12 }], 'and the view still reads')
    t.ok(fields.some(f => f[1] === 'amount'), 'the catalog still has amount')

    ok('reporting: rename unread column')
    t.same(fieldsOf(step('reporting: columns after renames')), ['id', 'amount', 'remark'], 'note, which no view reads, is renamed')
    t.same(fields.map(f => f[1]), ['id', 'amount', 'remark'], 'in the catalog too')

    const denied = await env.decisions({ namespace: 'reporting', verdict: 'deny', rule: 'VIEW_REFERENCES_COLUMN' })
    t.equal(denied.length, 1, 'one denied decision in the log (Spark did not retry)')
    t.match(denied[0], { table: { namespace: ['reporting'], name: 'orders' }, findings: [{ rule: 'VIEW_REFERENCES_COLUMN', path: 'amount', severity: 'error' }] })
  })

  t.test('what Spark sends matches the checked-in capture', async t => {
    compareWithCapture(t, new URL('../fixtures/clients/captured/spark.json', import.meta.url), CAPTURE_HEADER, normalise(env.capture?.exchanges ?? [], env.proxy.url))
  })

  const allowed = await env.decisions({ verdict: 'allow' })
  t.ok(allowed.length >= 10, `allowed schema changes are logged too (${allowed.length})`)
})
