/**
 * DuckDB's iceberg extension (1.5, loaded from the PyPI wheels) through iceguard, against the real
 * Iceberg REST fixture (interop/python/duckdb_flow.py): ATTACH, CREATE SCHEMA/TABLE, INSERT, SELECT,
 * ALTER TABLE ADD COLUMN, ALTER COLUMN TYPE (int -> bigint allowed; bigint -> varchar, which DuckDB
 * refuses itself), DROP COLUMN (allowed in `eng`, refused by the policy in `guarded`: DuckDB raises
 * naming rule, column and page, and the table is unchanged), a CREATE TABLE the policy refuses. Runs on every transport. The texts
 * DuckDB shows are printed as comments.
 */
import t from 'tap'
import { onEveryTransport } from '../helpers/transports.js'
import { runDriver, type DriverStep } from './helpers/driver.js'
import { startGuarded } from './helpers/guarded.js'
import { needToolchain, toolchainSkip } from './helpers/toolchain.js'

const parts = ['java', 'fixture', 'python'] as const

t.test('DuckDB through iceguard', { skip: toolchainSkip(parts) }, async t => {
  if (!needToolchain(t, parts)) return
  onEveryTransport(t, t => {
    t.test('create, insert, select, alter, and a refused drop', async t => {
      const env = await startGuarded(t)
      const run = await runDriver('duckdb_flow.py', { uri: env.proxy.url })
      const step = (name: string): DriverStep | undefined => run.steps.get(name)
      const ok = (name: string): void => {
        const s = step(name)
        t.ok(s?.ok, `${name}${s?.ok === true ? '' : `: ${s?.error?.class ?? ''} ${s?.error?.text ?? 'not run'}`}`)
      }
      ok('attach')
      for (const ns of ['eng', 'guarded']) {
        for (const s of ['create schema', 'create table', 'insert', 'add column', 'widen int to bigint']) ok(`${ns}: ${s}`)
        t.same(step(`${ns}: select`)?.result, [[1, 2, 'a'], [2, 5, 'b']], `${ns}: the rows inserted are read back`)
        t.same(step(`${ns}: columns before drop`)?.result, [['id', 'BIGINT'], ['qty', 'BIGINT'], ['note', 'VARCHAR'], ['score', 'INTEGER']], `${ns}: column added, qty widened`)
        const retype = step(`${ns}: retype bigint to varchar (refused)`)
        t.equal(retype?.ok, false, `${ns}: BIGINT -> VARCHAR fails`)
        if (ns === 'eng') t.comment(`DuckDB ALTER COLUMN TYPE VARCHAR: ${retype?.error?.class ?? ''}: ${retype?.error?.text ?? ''}`)
      }
      ok('eng: drop column')
      t.same(step('eng: columns after')?.result, [['id', 'BIGINT'], ['qty', 'BIGINT'], ['score', 'INTEGER']], 'eng: note dropped')

      const drop = step('guarded: drop column')
      t.equal(drop?.ok, false, 'guarded: DROP COLUMN raises in DuckDB')
      t.comment(`DuckDB policy refusal: ${drop?.error?.class ?? ''}: ${drop?.error?.text ?? ''}`)
      t.match(drop?.error?.text, /COLUMN_NO_DROP .*Cannot drop column note \(id \d+\)/, 'naming the rule and the column')
      t.match(drop?.error?.text, `${env.proxy.url}/rules/COLUMN_NO_DROP`, 'and the rule\'s page')
      t.match(drop?.error?.text, 'type: IllegalArgumentException')
      t.same(step('guarded: columns after')?.result, step('guarded: columns before drop')?.result, 'guarded: DuckDB reads the same columns back')
      t.same(step('guarded: select after')?.result, [[1, 2, 'a', null], [2, 5, 'b', null]], 'guarded: and the same rows')
      t.ok((await env.currentFields('guarded', 'orders')).some(f => f[1] === 'note'), 'guarded: the catalog still has note')
      const create = step('guarded: create table refused')
      t.equal(create?.ok, false, 'guarded: a create the policy refuses raises in DuckDB')
      t.comment(`DuckDB refused create: ${create?.error?.class ?? ''}: ${create?.error?.text ?? ''}`)
      t.match(create?.error?.text, /COLUMN_NAME_PATTERN \(Bad, field id \d+\): Cannot name column Bad/, 'naming the rule and the column')
      t.match(create?.error?.text, `${env.proxy.url}/rules/COLUMN_NAME_PATTERN`, 'and the rule\'s page')
      t.same(step('guarded: tables after refused create')?.result, [['orders']], 'guarded: no table was created')
      const denied = await env.decisions({ namespace: 'guarded', verdict: 'deny' })
      t.same(denied.map(d => d.findings.map((f: { rule: string }) => f.rule).join()).sort(), ['COLUMN_NAME_PATTERN', 'COLUMN_NO_DROP'], 'both refusals are in the decision log')
      t.match(denied.find(d => d.findings[0]?.rule === 'COLUMN_NO_DROP'), { findings: [{ rule: 'COLUMN_NO_DROP', path: 'note' }] })
    })
  })
})
