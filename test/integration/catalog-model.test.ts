/**
 * The embedded catalog and the gate share one Iceberg model: for the same schema they give the
 * same answer (one type grammar), and for the same commit the catalog stores exactly the metadata
 * the gate judged (one metadata builder), failures included (one message). The catalog runs for
 * real on 127.0.0.1:0 over HTTP; the gate's side is its pure evaluation over the base it would load.
 */
import t, { type Test } from 'tap'
import { request } from 'undici'
import { startEmbeddedCatalog, type EmbeddedCatalog } from '../../src/dev-catalog/index.js'
import { evaluateCommit } from '../../src/engine/evaluate-commit.js'
import { applyUpdates } from '../../src/iceberg/apply-commit.js'
import { parseJsonText } from '../../src/iceberg/json-text.js'
import { parseTableMetadata } from '../../src/iceberg/parse.js'
import type { TableMetadata } from '../../src/iceberg/types.js'
import { SPEC_ONLY_SETTINGS } from '../../src/engine/rules/settings.js'

interface Res { status: number, json: any }

async function call (c: EmbeddedCatalog, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Res> {
  const res = await request(c.url + path, { method, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } })
  const text = await res.body.text()
  // Lossless, as the gate reads an upstream answer: 64-bit ids keep every digit.
  return { status: res.statusCode, json: text === '' ? undefined : parseJsonText(text) }
}

const TABLE = '/v1/namespaces/db/tables/t'
const baseFields = [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'name', required: false, type: 'string' }
]

async function setup (t: Test): Promise<EmbeddedCatalog> {
  const c = await startEmbeddedCatalog({ memory: true })
  t.teardown(() => c.close())
  t.equal((await call(c, 'POST', '/v1/namespaces', { namespace: ['db'] })).status, 200)
  t.equal((await call(c, 'POST', '/v1/namespaces/db/tables', { name: 't', schema: { type: 'struct', fields: baseFields } })).status, 200)
  return c
}

/** The table as the gate reads it from a loadTable answer. */
async function gateBase (t: Test, c: EmbeddedCatalog): Promise<TableMetadata> {
  const loaded = await call(c, 'GET', `${TABLE}?snapshots=refs`)
  const { metadata, issues } = parseTableMetadata(loaded.json.metadata)
  t.same(issues, [], 'the gate reads the catalog\'s metadata without issues')
  return metadata as TableMetadata
}

/** What the rules read of table metadata: everything but the data parts, records as plain objects. */
function ruleView (m: TableMetadata): unknown {
  return {
    formatVersion: m.formatVersion,
    tableUuid: m.tableUuid,
    location: m.location,
    lastColumnId: m.lastColumnId,
    schemas: m.schemas,
    currentSchemaId: m.currentSchemaId,
    partitionSpecs: m.partitionSpecs,
    defaultSpecId: m.defaultSpecId,
    lastPartitionId: m.lastPartitionId,
    sortOrders: m.sortOrders,
    defaultSortOrderId: m.defaultSortOrderId,
    properties: { ...m.properties },
    refs: { ...m.refs }
  }
}

t.test('one type grammar: the catalog accepts exactly the schemas the gate accepts', async t => {
  const c = await setup(t)
  // [type as sent, accepted?, the spelling stored]
  const cases: Array<[string, boolean, string?]> = [
    ['decimal(5,9)', false],
    ['decimal(39,2)', false],
    ['decimal (10,2)', false],
    ['decimal( 10 , 2 )', true, 'decimal(10, 2)'],
    ['DECIMAL(10,2)', true, 'decimal(10, 2)'],
    ['fixed[ 16 ]', true, 'fixed[16]'],
    ['fixed[0]', true, 'fixed[0]'],
    ['Long', true, 'long'],
    ['  int  ', false],
    ['TimestampTZ', true, 'timestamptz'],
    ['text', false],
    ['varchar(10)', false],
    ['decimal(10)', false],
    ['fixed(16)', false]
  ]
  let lastColumnId = 2
  for (const [type, accepted, stored] of cases) {
    const base = await gateBase(t, c)
    const current = base.schemas.find(s => s.schemaId === base.currentSchemaId)
    const fields = [...baseFields, { id: lastColumnId + 1, name: `c${lastColumnId + 1}`, required: false, type }]
    const updates = [{ action: 'add-schema', schema: { type: 'struct', fields } }, { action: 'set-current-schema', 'schema-id': -1 }]
    const requirements = [{ type: 'assert-current-schema-id', 'current-schema-id': current?.schemaId }]

    const gate = evaluateCommit({ base, request: { requirements, updates }, settings: SPEC_ONLY_SETTINGS })
    const catalog = await call(c, 'POST', TABLE, { requirements, updates })

    t.equal(gate.verdict === 'allow', accepted, `gate: ${type} ${accepted ? 'accepted' : 'refused'}`)
    t.equal(catalog.status === 200, accepted, `catalog: ${type} ${accepted ? 'accepted' : 'refused'} (${catalog.status})`)
    if (accepted) {
      lastColumnId++
      const schema = catalog.json.metadata.schemas.find((s: any) => s['schema-id'] === catalog.json.metadata['current-schema-id'])
      t.equal(schema.fields.at(-1).type, stored, `stored as ${stored ?? ''}`)
    } else {
      t.same(gate.findings.map(f => f.rule), ['REQUEST_WELL_FORMED'], `gate: ${type} is a malformed request`)
      t.equal(catalog.json.error.type, 'BadRequestException')
      // The same reader found the same problem: the catalog's message is the gate's finding, without its path.
      t.ok(gate.findings[0]?.message.startsWith(catalog.json.error.message), `same message for ${type}: ${catalog.json.error.message as string}`)
    }
  }
})

t.test('one metadata builder: the catalog stores what the gate judged', async t => {
  const c = await setup(t)
  const BIG = '3055729675574597004'
  const steps: Array<{ name: string, updates: unknown[] }> = [
    { name: 'add a column', updates: [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': 77, fields: [...baseFields, { id: 3, name: 'qty', required: false, type: 'int' }] }, 'last-column-id': 1 }, { action: 'set-current-schema', 'schema-id': -1 }] },
    { name: 'partition without field ids', updates: [{ action: 'add-spec', spec: { fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'BUCKET[16]' }] } }, { action: 'set-default-spec', 'spec-id': -1 }] },
    { name: 'a wider spec reuses the id of the same source and transform', updates: [{ action: 'add-spec', spec: { fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'bucket[16]' }, { 'source-id': 2, name: 'name', transform: 'identity' }] } }, { action: 'set-default-spec', 'spec-id': -1 }] },
    { name: 'sort order', updates: [{ action: 'add-sort-order', 'sort-order': { 'order-id': 5, fields: [{ 'source-id': 2, transform: 'identity', direction: 'DESC', 'null-order': 'nulls-last' }] } }, { action: 'set-default-sort-order', 'sort-order-id': -1 }] },
    { name: 'revert to an older schema', updates: [{ action: 'add-schema', schema: { type: 'struct', fields: baseFields } }, { action: 'set-current-schema', 'schema-id': 0 }] },
    { name: 'drop a schema that is not current', updates: [{ action: 'remove-schemas', 'schema-ids': [1] }] },
    { name: 'properties and location', updates: [{ action: 'set-properties', updates: { a: '1', ['__proto__']: 'x' } }, { action: 'remove-properties', removals: ['a'] }, { action: 'set-location', location: 'file:///elsewhere/t' }] },
    { name: 'a 64-bit snapshot on main', updates: [{ action: 'add-snapshot', snapshot: { 'snapshot-id': BIG, 'sequence-number': 1, 'timestamp-ms': 1700000000000, 'manifest-list': 'file:///m.avro', summary: { operation: 'append' } } }, { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': BIG }] },
    { name: 'upgrade to v3, drop the old spec', updates: [{ action: 'upgrade-format-version', 'format-version': 3 }, { action: 'set-default-spec', 'spec-id': 0 }, { action: 'remove-partition-specs', 'spec-ids': [1] }] },
    // The unsorted order exists since the create: adding it again reuses id 0 and adds nothing.
    { name: 'back to unsorted', updates: [{ action: 'add-sort-order', 'sort-order': { fields: [] } }, { action: 'set-default-sort-order', 'sort-order-id': 0 }] }
  ]
  for (const step of steps) {
    const base = await gateBase(t, c)
    // Sent as text, so the 64-bit id travels with every digit (JSON.stringify of a string id would quote it).
    const body = JSON.stringify({ requirements: [], updates: step.updates }).replaceAll(`"${BIG}"`, BIG)
    const gate = applyUpdates(base, (parseJsonText(body) as { updates: unknown[] }).updates)
    t.same(gate.issues, [], `${step.name}: the gate finds no issue`)
    const res = await request(c.url + TABLE, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
    const text = await res.body.text()
    t.equal(res.statusCode, 200, `${step.name}: the catalog commits it`)
    const stored = parseTableMetadata((parseJsonText(text) as { metadata: unknown }).metadata)
    t.same(stored.issues, [])
    t.same(ruleView(stored.metadata as TableMetadata), ruleView(gate.proposed), `${step.name}: the catalog stored what the gate judged`)
  }
  const final = await gateBase(t, c)
  t.equal(final.refs.main, BIG, 'the 64-bit id is exact on both sides')
  t.equal(final.properties.__proto__, 'x', 'a __proto__ property is data on both sides') // eslint-disable-line no-proto -- a JSON key named __proto__ is data here
})

t.test('one builder for failures too: the catalog refuses with the issue the gate reports', async t => {
  const c = await setup(t)
  const cases: Array<{ updates: unknown[], type: string, status: number }> = [
    { updates: [{ action: 'set-current-schema', 'schema-id': 7 }], type: 'IllegalArgumentException', status: 400 },
    { updates: [{ action: 'set-current-schema', 'schema-id': -1 }], type: 'ValidationException', status: 400 },
    { updates: [{ action: 'remove-schemas', 'schema-ids': [0] }], type: 'ValidationException', status: 400 },
    { updates: [{ action: 'set-default-spec', 'spec-id': -1 }], type: 'ValidationException', status: 400 },
    { updates: [{ action: 'set-default-sort-order', 'sort-order-id': 3 }], type: 'IllegalArgumentException', status: 400 },
    { updates: [{ action: 'upgrade-format-version', 'format-version': 9 }], type: 'IllegalArgumentException', status: 400 },
    { updates: [{ action: 'add-spec', spec: { fields: [{ 'source-id': 1, name: '', transform: 'identity' }] } }], type: 'IllegalArgumentException', status: 400 },
    { updates: [{ action: 'add-sort-order', 'sort-order': { fields: [{ 'source-id': 1, transform: 'identity', direction: 'up', 'null-order': 'nulls-first' }] } }], type: 'IllegalArgumentException', status: 400 },
    { updates: [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'tag', 'snapshot-id': 1 }], type: 'ValidationException', status: 400 },
    { updates: [{ action: 'add-view-version', 'view-version': {} }], type: 'BadRequestException', status: 400 },
    { updates: [{ action: 'set-location' }], type: 'BadRequestException', status: 400 }
  ]
  for (const { updates, type, status } of cases) {
    const base = await gateBase(t, c)
    const gate = applyUpdates(base, updates)
    const res = await call(c, 'POST', TABLE, { requirements: [], updates })
    const first = gate.issues[0]
    t.ok(first !== undefined, `the gate finds an issue in ${JSON.stringify(updates)}`)
    t.equal(res.status, status)
    t.equal(res.json.error.type, type)
    t.equal(res.json.error.message, first?.message, `same message: ${first?.message ?? ''}`)
  }
})
