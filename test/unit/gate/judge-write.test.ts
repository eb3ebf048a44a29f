/**
 * The gate's decision (src/gate/judge-write.ts) is a pure function of the write, its bases and
 * the settings: no upstream, no transport. These tests call it with literal inputs and read the
 * Decision it returns: the verdict, the refusal's status and type, the requirements to inject.
 */
import t from 'tap'
import { parseTableMetadata } from '../../../src/iceberg/parse.js'
import type { TableMetadata } from '../../../src/iceberg/types.js'
import { SPEC_ONLY_SETTINGS, specOnlySettings } from '../../../src/engine/rules/settings.js'
import { decideRegister, decideWrite, judgeChange, readWrite, type Write } from '../../../src/gate/judge-write.js'

const field = (id: number, name: string, type: string): Record<string, unknown> => ({ id, name, required: false, type })

const parsed = parseTableMetadata({
  'format-version': 2,
  'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
  location: 's3://bucket/db/t',
  'last-sequence-number': 0,
  'last-updated-ms': 1700000000000,
  'last-column-id': 2,
  'current-schema-id': 0,
  schemas: [{ type: 'struct', 'schema-id': 0, fields: [field(1, 'id', 'long'), field(2, 'n', 'int')] }],
  'default-spec-id': 0,
  'partition-specs': [{ 'spec-id': 0, fields: [] }],
  'last-partition-id': 999,
  'default-sort-order-id': 0,
  'sort-orders': [{ 'order-id': 0, fields: [] }],
  properties: {},
  'current-snapshot-id': -1,
  snapshots: [],
  'snapshot-log': [],
  'metadata-log': []
})
if (parsed.metadata === undefined) throw new Error(JSON.stringify(parsed.issues))
const base: TableMetadata = parsed.metadata

const addSchema = (fields: unknown[], requirements: unknown[] = []): Record<string, unknown> => ({
  requirements,
  updates: [
    { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields } },
    { action: 'set-current-schema', 'schema-id': -1 }
  ]
})

function readOk (kind: Parameters<typeof readWrite>[0], body: Record<string, unknown>, table = 't'): Write {
  const read = readWrite(kind, { namespace: ['db'], table }, body)
  if ('refusal' in read) throw new Error(read.refusal.body.error.message)
  return read.write
}

function decide (body: Record<string, unknown>, settings = SPEC_ONLY_SETTINGS, assertions: 'inject' | 'require' = 'inject'): ReturnType<typeof decideWrite> {
  const write = readOk('update-table', body)
  const judged = write.entries.map(e => judgeChange(write, e, base, settings))
  return decideWrite(write, judged, { assertions })
}

t.test('readWrite refuses a body that names its table wrongly, with a 400 and nothing judged', async t => {
  const other = readWrite('update-table', { namespace: ['db'], table: 't' }, { identifier: { namespace: ['db'], name: 'u' }, updates: [] })
  t.ok('refusal' in other)
  if ('refusal' in other) {
    t.equal(other.refusal.statusCode, 400)
    t.equal(other.refusal.body.error.type, 'BadRequestException')
    t.match(other.refusal.body.error.message, /^Cannot commit to db\.t: the body's identifier names db\.u/)
    t.match(other.tables, [{ namespace: ['db'], name: 't' }], 'the refusal names the table by its levels')
  }
  const noChanges = readWrite('transaction', { namespace: [] }, { 'table-changes': [] })
  t.ok('refusal' in noChanges && /table-changes must be a non-empty array/.test(noChanges.refusal.body.error.message))
  const unnamed = readWrite('transaction', { namespace: [] }, { 'table-changes': [{ updates: [] }] })
  t.ok('refusal' in unnamed && /table-changes\[0\]\.identifier is missing/.test(unnamed.refusal.body.error.message))
  const register = readWrite('register-table', { namespace: ['db'] }, { name: 'r', 'metadata-location': null })
  t.ok('refusal' in register)
  if ('refusal' in register) t.same(register.flows, ['register'], 'a register refusal is audited as a register flow')
})

t.test('readWrite names every table of a transaction with where its change sits', async t => {
  const write = readOk('transaction', {
    'table-changes': [
      { identifier: { namespace: ['a'], name: 'x' }, updates: [] },
      { identifier: { namespace: ['b'], name: 'y' }, updates: [] }
    ]
  })
  t.equal(write.judge, 'base')
  t.same(write.entries.map(e => ({ table: e.table, at: e.at })), [
    { table: { prefix: undefined, namespace: ['a'], name: 'x' }, at: ['table-changes', 0] },
    { table: { prefix: undefined, namespace: ['b'], name: 'y' }, at: ['table-changes', 1] }
  ])
})

t.test('a widening is allowed and the requirements that pin the base are to be injected', async t => {
  const d = decide(addSchema([field(1, 'id', 'long'), field(2, 'n', 'long'), field(3, 'c', 'string')]))
  t.equal(d.verdict, 'allow')
  t.equal(d.refusal, undefined)
  t.same(d.inject, [{
    at: [],
    requirements: [
      { type: 'assert-current-schema-id', field: 'current-schema-id', value: 0, requiredOfClient: true },
      { type: 'assert-last-assigned-field-id', field: 'last-assigned-field-id', value: 2, requiredOfClient: true }
    ]
  }])
  t.same(d.injected, ['assert-current-schema-id', 'assert-last-assigned-field-id'])
  t.same(d.flows, ['update'])
})

t.test('a narrowing is denied: 400 IllegalArgumentException naming the rule, nothing to inject', async t => {
  const d = decide(addSchema([field(1, 'id', 'int'), field(2, 'n', 'int')]))
  t.equal(d.verdict, 'deny')
  t.equal(d.refusal?.statusCode, 400)
  t.equal(d.refusal?.body.error.type, 'IllegalArgumentException')
  t.equal(d.refusal?.body.error.code, 400)
  t.match(d.refusal?.body.error.message, /TYPE_PROMOTION_VALID/)
  t.same(d.inject, [])
  t.ok(d.rules.includes('TYPE_PROMOTION_VALID'))
})

t.test('a stale requirement is a 409 CommitFailedException', async t => {
  const d = decide(addSchema([field(1, 'id', 'long'), field(2, 'n', 'int')], [{ type: 'assert-current-schema-id', 'current-schema-id': 7 }]))
  t.equal(d.verdict, 'conflict')
  t.equal(d.refusal?.statusCode, 409)
  t.equal(d.refusal?.body.error.type, 'CommitFailedException')
})

t.test('require mode refuses a schema change that lacks its requirements, naming what to send', async t => {
  const d = decide(addSchema([field(1, 'id', 'long'), field(2, 'n', 'int'), field(3, 'c', 'string')]), SPEC_ONLY_SETTINGS, 'require')
  t.equal(d.verdict, 'refused')
  t.equal(d.refusal?.statusCode, 400)
  t.match(d.refusal?.body.error.message, /send \{"type":"assert-current-schema-id","current-schema-id":0\}/)
  t.equal(d.summary, 'missing requirement: assert-current-schema-id, assert-last-assigned-field-id')
})

t.test('a frozen table refuses a schema change and lets a data-only change through', async t => {
  const frozen = decide(addSchema([field(1, 'id', 'long'), field(2, 'n', 'int'), field(3, 'c', 'string')]), specOnlySettings('freeze'))
  t.equal(frozen.verdict, 'deny')
  t.ok(frozen.rules.includes('TABLE_FROZEN'))
  const data = decide({ requirements: [], updates: [{ action: 'set-properties', updates: { k: 'v' } }] }, specOnlySettings('freeze'))
  t.equal(data.verdict, 'allow')
  t.same(data.inject, [], 'a data change needs no schema requirement')
})

t.test('decideRegister: the registration check decides, a refusal is a 403', async t => {
  const write = readOk('register-table', { name: 'r', 'metadata-location': 's3://b/m.json' })
  t.equal(decideRegister(write, undefined).verdict, 'allow')
  const refused = decideRegister(write, () => ({ allowed: false, reason: 'the scope is frozen' }))
  t.equal(refused.verdict, 'refused')
  t.equal(refused.refusal?.statusCode, 403)
  t.equal(refused.refusal?.body.error.type, 'ForbiddenException')
  t.match(refused.refusal?.body.error.message, /^Cannot register table db\.r: .*\(the scope is frozen\)$/)
})

t.test('the same inputs give the same decision (nothing is remembered between calls)', async t => {
  const body = addSchema([field(1, 'id', 'long'), field(2, 'n', 'long')])
  t.same(decide(body), decide(body))
})
