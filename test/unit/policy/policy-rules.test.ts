/**
 * Platform rules through the gate's evaluation, one fixture folder per rule
 * (test/fixtures/rules/<RULE_ID>/: base.json, commit.json, policy.yaml, expected.json).
 * Each policy enables its rule for db.orders only, so every case runs three ways: enforced
 * (refused with exactly the expected findings), in warn mode (forwarded, the same findings as
 * warnings), and on another table (untouched).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isSafeNumber, parse as parseLossless } from 'lossless-json'
import t from 'tap'
import { evaluateCommit } from '../../../src/engine/evaluate-commit.js'
import { parseTableMetadata } from '../../../src/iceberg/parse.js'
import type { TableMetadata } from '../../../src/iceberg/types.js'
import { parsePolicy, presetPolicy, resolvePolicy, withOverride, mintOverride, verifyOverride, type Policy } from '../../../src/policy/index.js'
import { PLATFORM_RULES } from '../../../src/engine/rules/platform/index.js'
import type { Finding } from '../../../src/engine/rules/rule.js'
import type { DependentView } from '../../../src/iceberg/view-reads.js'
import { dependentsOf } from '../../../src/lineage/dependents.js'
import { loadSqlParser } from '../../../src/lineage/sql-reads.js'
import { readsTable, viewVersionReads } from '../../../src/lineage/view-reads.js'

const root = new URL('../../fixtures/rules/', import.meta.url).pathname
const platformIds = new Set(PLATFORM_RULES.map(r => r.id))
const ORDERS = { namespace: ['db'], name: 'orders' }
const OTHER = { namespace: ['sales'], name: 'deals' }
const ORDERS_PARTS = ['db', 'orders']

function readJson (path: string): unknown {
  // 64-bit snapshot ids stay exact (3055729675574597004).
  return parseLossless(readFileSync(path, 'utf8'), null, v => isSafeNumber(v) ? Number(v) : v)
}

function readBase (dir: string): TableMetadata {
  const { metadata, issues } = parseTableMetadata(readJson(join(dir, 'base.json')))
  if (!metadata) throw new Error(`${dir}/base.json: ${JSON.stringify(issues)}`)
  return metadata
}

function readPolicy (dir: string, extra = ''): Policy {
  const path = join(dir, 'policy.yaml')
  const { policy, errors } = parsePolicy(readFileSync(path, 'utf8') + extra, path)
  if (!policy) throw new Error(errors.map(e => e.message).join('\n'))
  return policy
}

/** Findings as fixtures hold them: the explanation is checked separately (it is prose). */
const comparable = (f: readonly Finding[]): unknown[] => f.map(({ explanation: _e, ...rest }) => rest)

/**
 * A fixture's view.json (a CreateViewRequest, for rules about views) as the view index would know
 * it: what its SQL reads, resolved against the fixture's base as db.orders.
 */
function dependents (dir: string, base: TableMetadata): DependentView[] | undefined {
  const path = join(dir, 'view.json')
  if (!existsSync(path)) return undefined
  const view = readJson(path) as { name: string, 'view-version': Record<string, unknown> }
  const schema = base.schemas.find(s => s.schemaId === base.currentSchemaId)
  const reads = viewVersionReads(view['view-version'], table => readsTable(table, ORDERS_PARTS) ? schema : undefined)
  return dependentsOf([{ namespace: ['db'], name: view.name, reads }], ORDERS_PARTS)
}

t.before(async () => { await loadSqlParser() })

function evaluate (dir: string, policy: Policy, ident: { namespace: string[], name: string }) {
  const base = readBase(dir)
  const views = dependents(dir, base)
  return evaluateCommit({
    base,
    ...(views !== undefined && { dependents: views }),
    request: readJson(join(dir, 'commit.json')) as { requirements?: unknown[], updates?: unknown[] },
    settings: resolvePolicy(policy, ident, new Date('2025-06-01T00:00:00Z'))
  })
}

const folders = readdirSync(root).filter(d => platformIds.has(d)).sort()

t.test('every platform rule has a fixture folder', async t => {
  t.same(folders, [...platformIds].sort())
})

for (const id of folders) {
  t.test(id, async t => {
    const dir = join(root, id)
    const expectedPath = join(dir, 'expected.json')
    const enforced = evaluate(dir, readPolicy(dir), ORDERS)
    // ICEGUARD_WRITE_FIXTURES=1 rewrites expected.json from the current output: review the diff before committing.
    if (process.env.ICEGUARD_WRITE_FIXTURES === '1') {
      writeFileSync(expectedPath, JSON.stringify(comparable(enforced.findings), null, 2) + '\n')
    }
    const expected = JSON.parse(readFileSync(expectedPath, 'utf8')) as Array<{ rule: string }>
    t.ok(expected.length > 0 && expected.every(f => f.rule === id), 'the fixture trips its rule and only it')

    t.equal(enforced.verdict, 'deny', `enforced: ${enforced.explanation}`)
    t.same(comparable(enforced.findings), expected)
    t.match(enforced.explanation, id, 'the rejection message names the rule')

    const warned = evaluate(dir, readPolicy(dir, 'mode: warn\n'), ORDERS)
    t.equal(warned.verdict, 'warn', 'warn mode forwards')
    t.same(comparable(warned.findings), expected.map(f => ({ ...f, severity: 'warn' })), 'the same findings, as warnings')

    const other = evaluate(dir, readPolicy(dir), OTHER)
    t.equal(other.verdict, 'allow', 'a table the rule is not enabled for is untouched')
    t.same(other.findings, [])

    const spec = evaluate(dir, presetPolicy('builtin:spec'), ORDERS)
    t.same(spec.findings.filter(f => platformIds.has(f.rule)), [], 'builtin:spec runs no platform rule')
  })
}

t.test('the drop-then-add trap under the presets', async t => {
  const dir = join(root, 'DROP_THEN_ADD_SAME_NAME')
  const rec = evaluate(dir, presetPolicy('builtin:recommended'), ORDERS)
  t.equal(rec.verdict, 'deny', 'refused under builtin:recommended')
  const f = rec.findings.find(x => x.rule === 'DROP_THEN_ADD_SAME_NAME')
  t.match(f?.message, /this is not a rename/)
  t.match(f?.explanation, /not a rename/)
  t.match(f?.explanation, /empty \(null\) for every row written before/)
  t.match(f?.explanation, /rename the old column .*add the new one, and backfill it/)
  t.match(rec.explanation, /DROP_THEN_ADD_SAME_NAME/)
  t.equal(evaluate(dir, presetPolicy('builtin:spec'), ORDERS).verdict, 'allow', 'the spec allows it')

  const later = join(root, 'DROPPED_NAME_REUSED')
  const warned = evaluate(later, presetPolicy('builtin:recommended'), ORDERS)
  t.equal(warned.verdict, 'warn', 'reusing a dropped name later is a warning')
  const w = warned.findings.find(x => x.rule === 'DROPPED_NAME_REUSED')
  t.equal(w?.severity, 'warn')
  t.match(w?.explanation, /not a rename[\s\S]*rename the old column .*add the new one, and backfill it/)
  t.equal(evaluate(later, presetPolicy('builtin:spec'), ORDERS).verdict, 'allow')
})

t.test('exceptions and overrides in the evaluation', async t => {
  const dir = join(root, 'COLUMN_NO_DROP')
  const excepted = readPolicy(dir, [
    '    exceptions:',
    '      - { rules: COLUMN_NO_DROP, path: placed, expires: 2030-01-01, reason: "retiring placed" }',
    ''
  ].join('\n'))
  t.equal(evaluate(dir, excepted, ORDERS).verdict, 'allow', 'an exception for the path lets the drop through')
  const lapsed = readPolicy(dir, '    exceptions:\n      - { rules: COLUMN_NO_DROP, path: placed, expires: 2025-01-01 }\n')
  t.equal(evaluate(dir, lapsed, ORDERS).verdict, 'deny', 'an expired exception no longer applies')

  const secret = 'override-secret-for-tests'
  const now = new Date('2025-06-01T00:00:00Z')
  const settings = resolvePolicy(readPolicy(dir), ORDERS, now)
  const run = (token: string) => {
    const v = verifyOverride(token, { table: 'db.orders', secret, now })
    if (!v.ok) return v.error
    return evaluateCommit({ base: readBase(dir), request: readJson(join(dir, 'commit.json')) as { updates: unknown[] }, settings: withOverride(settings, v.rules) }).verdict
  }
  t.equal(run(mintOverride({ table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttlSeconds: 3600, reason: 'INC-7', secret, now })), 'warn', 'the named rule becomes a warning')
  t.equal(run(mintOverride({ table: 'db.orders', rules: ['COLUMN_NO_RENAME'], ttlSeconds: 3600, reason: 'INC-7', secret, now })), 'deny', 'a token for another rule changes nothing')
  t.match(run(mintOverride({ table: 'db.customers', rules: ['COLUMN_NO_DROP'], ttlSeconds: 3600, reason: 'INC-7', secret, now })), /is for table db\.customers, not db\.orders/)
  t.match(run(mintOverride({ table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttlSeconds: 60, reason: 'INC-7', secret, now: new Date('2025-05-31T00:00:00Z') })), /expired/)
})

t.test('compatibility levels, transitive against the schema history', async t => {
  const base = (schemas: unknown[], current: number, last: number): TableMetadata => {
    const { metadata } = parseTableMetadata({
      'format-version': 2,
      'last-column-id': last,
      'current-schema-id': current,
      schemas,
      'partition-specs': [{ 'spec-id': 0, fields: [] }],
      'default-spec-id': 0
    })
    if (!metadata) throw new Error('bad metadata')
    return metadata
  }
  const policyWith = (level: string): Policy => {
    const { policy } = parsePolicy(`version: 1\nextends: builtin:spec\ncompatibility: ${level}\nrules: { SCHEMA_COMPATIBILITY: error }\n`, 'p.yaml')
    return policy as Policy
  }
  const compat = (m: TableMetadata, fields: unknown[], level: string): Finding[] => evaluateCommit({
    base: m,
    request: { updates: [{ action: 'add-schema', schema: { type: 'struct', fields } }, { action: 'set-current-schema', 'schema-id': -1 }] },
    settings: resolvePolicy(policyWith(level), ORDERS)
  }).findings.filter(f => f.rule === 'SCHEMA_COMPATIBILITY')

  // Schema 0 wrote x as int; schema 1 dropped it; the commit brings id 2 back as a string.
  const id = { id: 1, name: 'id', required: true, type: 'long' }
  const dropped = base([
    { type: 'struct', 'schema-id': 0, fields: [id, { id: 2, name: 'x', required: false, type: 'int' }] },
    { type: 'struct', 'schema-id': 1, fields: [id] }
  ], 1, 2)
  const undelete = [id, { id: 2, name: 'x', required: false, type: 'string' }]
  t.same(compat(dropped, undelete, 'BACKWARD'), [], 'BACKWARD compares with the current schema only')
  t.match(compat(dropped, undelete, 'BACKWARD_TRANSITIVE').map(f => f.message), [
    /compatibility BACKWARD_TRANSITIVE: column x \(id 2\) is string but schema 0 wrote int/
  ])
  t.same(compat(dropped, undelete, 'NONE'), [])

  // Schema 0 had y required; schema 1 relaxed it. The commit widens z: FORWARD_TRANSITIVE reports
  // the widening once and not the old relaxation, which this commit did not introduce.
  const relaxed = base([
    { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'y', required: true, type: 'string' }, { id: 2, name: 'z', required: false, type: 'int' }] },
    { type: 'struct', 'schema-id': 1, fields: [{ id: 1, name: 'y', required: false, type: 'string' }, { id: 2, name: 'z', required: false, type: 'int' }] }
  ], 1, 2)
  const widened = [{ id: 1, name: 'y', required: false, type: 'string' }, { id: 2, name: 'z', required: false, type: 'long' }]
  t.match(compat(relaxed, widened, 'FORWARD_TRANSITIVE').map(f => f.message), [/column z \(id 2\) changes type from int \(schema 1\) to long/])
  t.same(compat(relaxed, widened, 'BACKWARD').length, 0, 'a widening is BACKWARD compatible')
  t.equal(compat(relaxed, widened, 'FULL').length, 1)

  // FORWARD: dropping a required column and making one optional are findings; dropping an optional one is not.
  const two = base([{ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'a', required: true, type: 'int' }, { id: 2, name: 'b', required: true, type: 'int' }, { id: 3, name: 'c', required: false, type: 'int' }] }], 0, 3)
  const forward = compat(two, [{ id: 2, name: 'b', required: false, type: 'int' }], 'FORWARD').map(f => f.message).sort()
  t.equal(forward.length, 2, forward.join('\n'))
  t.match(forward[0], /column a \(id 1\) is required in schema 0 but the new schema no longer has it/)
  t.match(forward[1], /column b \(id 2\) was required in schema 0 and is now optional/)
})

t.test('create flows: naming, docs and contracts apply to a new table', async t => {
  const { policy } = parsePolicy([
    'version: 1',
    'extends: builtin:spec',
    'rules:',
    '  COLUMN_NAME_PATTERN: error',
    '  COLUMN_DOC_REQUIRED: error',
    '  SCHEMA_CONTRACT: error',
    'contract:',
    '  columns:',
    '    - { name: order_id, type: long, required: true }'
  ].join('\n'), 'p.yaml')
  const { evaluateCreate } = await import('../../../src/engine/evaluate-commit.js')
  const result = evaluateCreate({
    request: { name: 'orders', schema: { type: 'struct', fields: [{ id: 1, name: 'OrderId', required: true, type: 'long', doc: 'key' }] } },
    settings: resolvePolicy(policy as Policy, ORDERS)
  })
  t.equal(result.verdict, 'deny')
  t.same(result.findings.map(f => [f.rule, f.path]).sort(), [
    ['COLUMN_NAME_PATTERN', 'OrderId'],
    ['SCHEMA_CONTRACT', 'order_id']
  ])
})
