/**
 * PyIceberg through iceguard, against the real Iceberg REST fixture (interop/python/pyiceberg_flow.py):
 * create a table, append an Arrow table and scan it back, every update_schema() operation (add,
 * nested add, rename, widen, union_by_name, make_column_optional, delete), a narrowing refused by
 * the spec rules and a delete refused by the policy in namespace `guarded` (BadRequestError naming
 * rule, field and page; the table unchanged), and two writers on the same base, the second raising
 * CommitFailedException. Runs on every transport. The texts PyIceberg shows are printed as comments.
 */
import t from 'tap'
import { onEveryTransport } from '../helpers/transports.js'
import { compareWithCapture, normalise } from './helpers/capture.js'
import { runDriver, type DriverStep } from './helpers/driver.js'
import { startGuarded } from './helpers/guarded.js'
import { needToolchain, toolchainSkip } from './helpers/toolchain.js'

const parts = ['java', 'fixture', 'python'] as const
type Field = [number, string, string, boolean]

const CAPTURE_HEADER = {
  client: 'pyiceberg',
  title: 'Every request of interop/python/pyiceberg_flow.py, as PyIceberg 0.12.0 sent it to iceguard, and the status it got',
  how: 'Captured by test/interop/pyiceberg.test.ts between PyIceberg and iceguard, in front of the Iceberg REST fixture 1.10.1; uuids, timestamps, locations, snapshot ids, sizes and the iceguard address normalised (test/interop/helpers/capture.ts). Re-record with ICEGUARD_CAPTURE_WRITE=1 npm run test:interop -- pyiceberg.'
}

t.test('PyIceberg through iceguard', { skip: toolchainSkip(parts) }, async t => {
  if (!needToolchain(t, parts)) return
  onEveryTransport(t, t => {
    t.test('every schema operation, two refusals and a concurrent change', async t => {
      const env = await startGuarded(t, { capture: true })
      const run = await runDriver('pyiceberg_flow.py', { uri: env.clientUrl })
      const step = (name: string): DriverStep | undefined => run.steps.get(name)
      const ok = (name: string): void => {
        const s = step(name)
        t.ok(s?.ok, `${name}${s?.ok === true ? '' : `: ${s?.error?.class ?? ''} ${s?.error?.text ?? 'not run'}`}`)
      }
      const rows = [
        { id: 1, qty: 2, price: 1.5, addr: { city: 'Oslo' } },
        { id: 2, qty: 5, price: 2.5, addr: { city: 'Rome' } }
      ]
      for (const ns of ['eng', 'guarded']) {
        for (const s of ['create namespace', 'create table', 'append', 'add column', 'add nested column', 'rename column', 'widen int to long', 'union_by_name', 'make_column_optional']) ok(`${ns}: ${s}`)
        t.same(step(`${ns}: scan`)?.result, rows, `${ns}: the appended rows are scanned back`)
        const fields = step(`${ns}: schema before delete`)?.result as Field[]
        t.same(fields.map(f => f[1]), ['id', 'qty', 'price', 'addr', 'remark', 'tag', 'score'], `${ns}: added, renamed, unioned, in order`)
        t.match(fields.find(f => f[1] === 'qty'), [2, 'qty', 'long', false], `${ns}: qty widened`)
        t.match(fields.find(f => f[1] === 'price'), [3, 'price', 'float', false], `${ns}: price optional`)
        t.match(fields.find(f => f[1] === 'addr')?.[2], /zip/, `${ns}: nested zip added`)

        const narrow = step(`${ns}: narrow long to int (refused)`)
        t.equal(narrow?.error?.class, 'pyiceberg.exceptions.BadRequestError', `${ns}: a narrowing raises BadRequestError`)
        t.match(narrow?.error?.text, new RegExp(`^IllegalArgumentException: Cannot commit schema change to ${ns}\\.orders: 1 finding: TYPE_PROMOTION_VALID \\(qty, field id 2, long -> int\\)`), 'naming rule, column and change')
        t.match(narrow?.error?.text, `${env.proxy.url}/rules/TYPE_PROMOTION_VALID`, 'and the rule\'s page')
        if (ns === 'eng') t.comment(`PyIceberg narrowing: ${narrow?.error?.class ?? ''}: ${narrow?.error?.text ?? ''}`)
      }

      ok('eng: delete column')
      t.notOk((step('eng: schema after delete')?.result as Field[]).some(f => f[1] === 'tag'), 'eng: tag deleted')
      const del = step('guarded: delete column')
      t.equal(del?.error?.class, 'pyiceberg.exceptions.BadRequestError', 'guarded: a delete raises BadRequestError')
      t.match(del?.error?.text, /^IllegalArgumentException: Cannot commit schema change to guarded\.orders: 1 finding: COLUMN_NO_DROP \(tag, field id \d+, string -> none\): Cannot drop column tag \(id \d+\)/)
      t.match(del?.error?.text, `${env.proxy.url}/rules/COLUMN_NO_DROP`)
      t.comment(`PyIceberg policy refusal: ${del?.error?.class ?? ''}: ${del?.error?.text ?? ''}`)
      t.same(step('guarded: schema after delete')?.result, step('guarded: schema before delete')?.result, 'guarded: the table is unchanged')
      t.ok((await env.currentFields('guarded', 'orders')).some(f => f[1] === 'tag'), 'guarded: the catalog still has tag')
      t.same((step('guarded: scan after')?.result as Array<Record<string, unknown>>).map(r => r.id), [1, 2], 'guarded: the data is still there')
      const denied = await env.decisions({ verdict: 'deny' })
      t.same(denied.map(d => d.findings.map((f: { rule: string }) => f.rule)).flat().sort(), ['COLUMN_NAME_PATTERN', 'COLUMN_NO_DROP', 'TYPE_PROMOTION_VALID', 'TYPE_PROMOTION_VALID'], 'the four refusals are in the decision log')

      const create = step('guarded: create table refused')
      t.equal(create?.error?.class, 'pyiceberg.exceptions.BadRequestError', 'guarded: a create the policy refuses raises BadRequestError')
      t.match(create?.error?.text, /^IllegalArgumentException: Cannot commit schema change to guarded\.bad: 1 finding: COLUMN_NAME_PATTERN \(Bad, field id \d+\): Cannot name column Bad/)
      t.comment(`PyIceberg refused create: ${create?.error?.class ?? ''}: ${create?.error?.text ?? ''}`)
      t.equal(step('guarded: table exists after refused create')?.result, false, 'guarded: no table was created')

      const concurrent = step('concurrent change')
      t.equal(concurrent?.error?.class, 'pyiceberg.exceptions.CommitFailedException', 'the second writer raises CommitFailedException')
      t.match(concurrent?.error?.text, /^CommitFailedException: .*current schema changed/)
      t.comment(`PyIceberg concurrent change: ${concurrent?.error?.class ?? ''}: ${concurrent?.error?.text ?? ''}`)
      const after = step('schema after concurrent change')?.result as Field[]
      t.ok(after.some(f => f[1] === 'first_writer') && !after.some(f => f[1] === 'second_writer'), 'the first writer\'s column landed, the second\'s did not')

      t.test('what PyIceberg sends matches the checked-in capture', async t => {
        compareWithCapture(t, new URL('../fixtures/clients/captured/pyiceberg.json', import.meta.url), CAPTURE_HEADER, normalise(env.capture?.exchanges ?? [], env.proxy.url))
      })
    })
  })
})
