/**
 * The pure core of schema evolution (src/evolve): every change kind, fresh ids for every nested
 * field, last-column-id, schema id reuse and the no-op, the idempotent ensure-* helpers, the commit
 * body, and contract plans. The HTTP path is in evolve-e2e.test.ts.
 */
import t from 'tap'
import {
  applySchemaChanges, buildCommitRequest, planFromContract, readSchemaChanges, schemaChangeToWire, type SchemaChangeOp
} from '../../../src/evolve/index.js'
import { parseTableMetadata } from '../../../src/iceberg/parse.js'
import { indexSchema } from '../../../src/iceberg/schema-index.js'
import { typeToString } from '../../../src/iceberg/print.js'
import type { Schema, TableMetadata } from '../../../src/iceberg/types.js'
import { checkContract, parseContract } from '../../../src/policy/contract.js'

const FIELDS = [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'name', required: false, type: 'string', doc: 'Customer name' },
  { id: 3, name: 'price', required: false, type: 'decimal(10,2)' },
  { id: 4, name: 'qty', required: false, type: 'int' },
  { id: 5, name: 'kind', required: true, type: 'string' },
  { id: 6, name: 'address', required: false, type: { type: 'struct', fields: [{ id: 7, name: 'street', required: false, type: 'string' }, { id: 8, name: 'zip', required: false, type: 'string' }] } },
  { id: 9, name: 'tags', required: false, type: { type: 'list', 'element-id': 10, element: 'string', 'element-required': true } },
  { id: 11, name: 'attrs', required: false, type: { type: 'map', 'key-id': 12, key: 'int', 'value-id': 13, value: 'string', 'value-required': false } },
  { id: 14, name: 'day', required: false, type: 'date' },
  { id: 15, name: 'points', required: false, type: { type: 'list', 'element-id': 16, 'element-required': false, element: { type: 'struct', fields: [{ id: 17, name: 'x', required: false, type: 'int' }] } } },
  { id: 18, name: 'props', required: false, type: { type: 'map', 'key-id': 19, key: 'string', 'value-id': 20, 'value-required': false, value: { type: 'struct', fields: [{ id: 21, name: 'v', required: false, type: 'string' }] } } },
  { id: 22, name: 'amount', required: false, type: 'float' }
]

function table (opts: { formatVersion?: 1 | 2 | 3, extraSchemas?: unknown[], lastColumnId?: number, properties?: Record<string, string> } = {}): TableMetadata {
  const json = {
    'format-version': opts.formatVersion ?? 2,
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    location: 's3://bucket/db/orders',
    'last-column-id': opts.lastColumnId ?? 22,
    'current-schema-id': 1,
    schemas: [
      ...(opts.extraSchemas ?? []),
      { type: 'struct', 'schema-id': 1, 'identifier-field-ids': [1], fields: FIELDS }
    ],
    'partition-specs': [{ 'spec-id': 0, fields: [{ 'source-id': 14, 'field-id': 1000, name: 'day', transform: 'identity' }] }],
    'default-spec-id': 0,
    'last-partition-id': 1000,
    'sort-orders': [{ 'order-id': 1, fields: [{ 'source-id': 2, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] }],
    'default-sort-order-id': 1,
    properties: opts.properties ?? {}
  }
  const { metadata, issues } = parseTableMetadata(json)
  if (metadata === undefined) throw new Error(JSON.stringify(issues))
  return metadata
}

function ops (json: unknown[]): SchemaChangeOp[] {
  const { changes, problems } = readSchemaChanges(json)
  if (changes === undefined) throw new Error(problems.join('; '))
  return changes
}

function fieldAt (schema: Schema, path: string) {
  const id = indexSchema(schema).byPath.get(path)
  return id === undefined ? undefined : indexSchema(schema).byId.get(id)
}

t.test('add-column: optional, fresh ids for the column and every nested field, element, key and value', async t => {
  const meta = table()
  const r = applySchemaChanges(meta, ops([
    { op: 'add-column', name: 'note', type: 'string', doc: 'free text' },
    {
      op: 'add-column',
      name: 'deep',
      type: {
        type: 'struct',
        fields: [
          { name: 'a', type: 'int', required: true },
          { name: 'l', type: { type: 'list', element: { type: 'struct', fields: [{ name: 'e', type: 'long' }] } } },
          { id: 5, name: 'm', type: { type: 'map', 'key-id': 1, key: 'string', 'value-id': 1, value: 'decimal(9, 2)' } }
        ]
      }
    },
    { op: 'add-column', name: 'scores', type: 'map<string, list<int>>' }
  ]))
  t.same(r.errors, [])
  t.equal(r.noop, false)
  const idx = indexSchema(r.schema)
  t.same(idx.duplicateIds, [], 'no id is used twice')
  t.equal(fieldAt(r.schema, 'note')?.id, 23)
  t.equal(fieldAt(r.schema, 'note')?.required, false)
  t.equal(fieldAt(r.schema, 'note')?.field?.doc, 'free text')
  // Java assignFreshIds order: the column, then a struct's fields, then what is inside each.
  t.same(['deep', 'deep.a', 'deep.l', 'deep.m', 'deep.l.element', 'deep.l.element.e', 'deep.m.key', 'deep.m.value'].map(p => fieldAt(r.schema, p)?.id),
    [24, 25, 26, 27, 28, 29, 30, 31])
  t.equal(fieldAt(r.schema, 'deep.a')?.required, true, 'a nested field keeps its required flag (the new parent is optional)')
  t.same(['scores', 'scores.key', 'scores.value', 'scores.value.element'].map(p => fieldAt(r.schema, p)?.id), [32, 33, 34, 35])
  t.equal(r.lastColumnId, 35, 'last-column-id moves to the highest id handed out')
  t.same(r.newFieldIds, [23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35])
  t.equal(r.schema.schemaId, 2, 'the next free schema id')
  t.same(r.schema.identifierFieldIds, [1])
  for (const f of idx.fields) if (f.id <= 22) t.equal(fieldAt(table().schemas[0] as Schema, f.path)?.id, f.id, `existing ${f.path} keeps its id`)
})

t.test('add-column refusals: name taken, dotted name, bad type, v3-only type on v2', async t => {
  const meta = table()
  const r = applySchemaChanges(meta, ops([
    { op: 'add-column', name: 'name', type: 'string' },
    { op: 'add-column', name: 'a.b', type: 'string' },
    { op: 'add-column', name: 'x', type: 'strnig' },
    { op: 'add-column', name: 'ts', type: 'timestamp_ns' },
    { op: 'add-column', name: 'ok', type: 'long' }
  ]))
  t.equal(r.errors.length, 4)
  t.match(r.errors[0], { index: 0, op: 'add-column', path: 'name', message: /change 0 \(add-column name\).*name already exists: name/ })
  t.match(r.errors[1]?.message, /ambiguous name a\.b: use add-nested-column/)
  t.match(r.errors[2]?.message, /invalid type for x/)
  t.match(r.errors[3]?.message, /timestamp_ns of ts needs format version 3; the table is v2/)
  t.equal(fieldAt(r.schema, 'ok')?.id, 23, 'a refused change hands out no ids')
  const v3 = applySchemaChanges(table({ formatVersion: 3 }), ops([{ op: 'add-column', name: 'ts', type: 'timestamp_ns' }]))
  t.same(v3.errors, [], 'v3 tables take v3 types')
})

t.test('add-nested-column: struct parent, list parent → element struct, map parent → value struct', async t => {
  const r = applySchemaChanges(table(), ops([
    { op: 'add-nested-column', parent: 'address', name: 'city', type: 'string' },
    { op: 'add-nested-column', parent: 'points', name: 'y', type: 'int' },
    { op: 'add-nested-column', parent: 'props', name: 'w', type: 'list<string>' },
    { op: 'add-nested-column', parent: 'points.element', name: 'z', type: 'int' }
  ]))
  t.same(r.errors, [])
  t.equal(fieldAt(r.schema, 'address.city')?.id, 23)
  t.equal(fieldAt(r.schema, 'points.element.y')?.id, 24)
  t.same([fieldAt(r.schema, 'props.value.w')?.id, fieldAt(r.schema, 'props.value.w.element')?.id], [25, 26])
  t.equal(fieldAt(r.schema, 'points.element.z')?.id, 27)
  const bad = applySchemaChanges(table(), ops([
    { op: 'add-nested-column', parent: 'tags', name: 'q', type: 'int' },
    { op: 'add-nested-column', parent: 'nope', name: 'q', type: 'int' },
    { op: 'add-nested-column', parent: 'attrs.key', name: 'q', type: 'int' },
    { op: 'add-nested-column', parent: 'name', name: 'q', type: 'int' }
  ]))
  t.match(bad.errors.map(e => e.message), [/Cannot add to non-struct column: tags/, /Cannot find parent struct: nope/, /Cannot add fields to map keys/, /non-struct column: name/])
})

t.test('rename-column keeps the id; clashes and non-fields are refused', async t => {
  const r = applySchemaChanges(table(), ops([
    { op: 'rename-column', path: 'qty', 'new-name': 'quantity' },
    { op: 'rename-column', path: 'address.zip', 'new-name': 'postcode' },
    { op: 'rename-column', path: 'points.x', 'new-name': 'px' }
  ]))
  t.same(r.errors, [])
  t.equal(fieldAt(r.schema, 'quantity')?.id, 4)
  t.equal(fieldAt(r.schema, 'address.postcode')?.id, 8)
  t.equal(fieldAt(r.schema, 'points.element.px')?.id, 17, 'a struct in a list element is reachable by its short name')
  t.equal(r.lastColumnId, 22, 'no ids handed out')
  const bad = applySchemaChanges(table(), ops([
    { op: 'rename-column', path: 'qty', 'new-name': 'name' },
    { op: 'rename-column', path: 'tags.element', 'new-name': 'x' },
    { op: 'rename-column', path: 'missing', 'new-name': 'x' }
  ]))
  t.match(bad.errors.map(e => e.message), [/a column of that name already exists/, /list element, not a struct field/, /column missing does not exist/])
})

t.test('make-column-optional on fields, list elements and map values; never on keys', async t => {
  const r = applySchemaChanges(table(), ops([
    { op: 'make-column-optional', path: 'kind' },
    { op: 'make-column-optional', path: 'tags.element' },
    { op: 'make-column-optional', path: 'attrs.key' }
  ]))
  t.equal(fieldAt(r.schema, 'kind')?.required, false)
  t.equal(fieldAt(r.schema, 'tags.element')?.required, false)
  t.match(r.errors, [{ index: 2, message: /map keys are always required/ }])
})

t.test('update-column-type: only the spec promotions, by format version', async t => {
  const r = applySchemaChanges(table(), ops([
    { op: 'update-column-type', path: 'qty', type: 'long' },
    { op: 'update-column-type', path: 'amount', type: 'double' },
    { op: 'update-column-type', path: 'price', type: 'decimal(12, 2)' },
    { op: 'update-column-type', path: 'points.x', type: 'long' }
  ]))
  t.same(r.errors, [])
  t.same(['qty', 'amount', 'price', 'points.element.x'].map(p => typeToString(fieldAt(r.schema, p)?.type ?? 'x' as never)), ['long', 'double', 'decimal(12, 2)', 'long'])
  const bad = applySchemaChanges(table(), ops([
    { op: 'update-column-type', path: 'price', type: 'decimal(8, 2)' },
    { op: 'update-column-type', path: 'price', type: 'decimal(12, 3)' },
    { op: 'update-column-type', path: 'day', type: 'timestamp' },
    { op: 'update-column-type', path: 'name', type: 'binary' },
    { op: 'update-column-type', path: 'attrs.key', type: 'long' },
    { op: 'update-column-type', path: 'address', type: 'string' }
  ]))
  t.equal(bad.errors.length, 6)
  t.match(bad.errors[0]?.message, /price: decimal\(10, 2\) -> decimal\(8, 2\) is not a promotion the spec allows for format version 2/)
  t.match(bad.errors[2]?.message, /date -> timestamp/)
  t.match(bad.errors[4]?.message, /cannot update map keys/)
  t.match(bad.errors[5]?.message, /only primitive types are promoted/)
  t.ok(bad.noop, 'nothing applied')
  const v3 = applySchemaChanges(table({ formatVersion: 3 }), ops([{ op: 'update-column-type', path: 'day', type: 'timestamp' }]))
  t.same(v3.errors, [], 'v3: date -> timestamp')
})

t.test('update-doc sets and removes; move-column first/before/after in one struct only', async t => {
  const r = applySchemaChanges(table(), ops([
    { op: 'update-doc', path: 'qty', doc: 'how many' },
    { op: 'update-doc', path: 'name', doc: null },
    { op: 'move-column', path: 'day', first: true },
    { op: 'move-column', path: 'amount', before: 'id' },
    { op: 'move-column', path: 'address.zip', before: 'street' },
    { op: 'move-column', path: 'qty', after: 'kind' }
  ]))
  t.same(r.errors, [])
  t.equal(fieldAt(r.schema, 'qty')?.field?.doc, 'how many')
  t.equal(fieldAt(r.schema, 'name')?.field?.doc, undefined)
  t.same(r.schema.struct.fields.map(f => f.name).slice(0, 7), ['day', 'amount', 'id', 'name', 'price', 'kind', 'qty'])
  t.same(indexSchema(r.schema).fields.filter(f => f.parentId === 6).map(f => f.name), ['zip', 'street'])
  t.equal(r.lastColumnId, 22)
  const bad = applySchemaChanges(table(), ops([
    { op: 'move-column', path: 'address.zip', before: 'id' },
    { op: 'move-column', path: 'qty', after: 'qty' },
    { op: 'update-doc', path: 'tags.element', doc: 'x' }
  ]))
  t.match(bad.errors.map(e => e.message), [/moves only within its own struct/, /next to itself/, /not a struct field/])
})

t.test('delete-column: fields go, identifier fields, elements, keys and values do not', async t => {
  const r = applySchemaChanges(table(), ops([{ op: 'delete-column', path: 'qty' }, { op: 'delete-column', path: 'address.street' }]))
  t.same(r.errors, [])
  t.equal(fieldAt(r.schema, 'qty'), undefined)
  t.equal(fieldAt(r.schema, 'address.street'), undefined)
  t.equal(r.lastColumnId, 22, 'last-column-id never goes down')
  const bad = applySchemaChanges(table(), ops([
    { op: 'delete-column', path: 'id' }, { op: 'delete-column', path: 'tags.element' },
    { op: 'delete-column', path: 'attrs.key' }, { op: 'delete-column', path: 'attrs.value' }
  ]))
  t.match(bad.errors.map(e => e.message), [/identifier field id/, /element type from list/, /delete map keys/, /value type from map/])
})

t.test('no-op, schema id reuse, and changes that undo each other', async t => {
  const meta = table()
  const noop = applySchemaChanges(meta, ops([{ op: 'rename-column', path: 'qty', 'new-name': 'qty' }]))
  t.equal(noop.noop, true)
  t.equal(noop.schema.schemaId, 1)
  t.equal(buildCommitRequest(meta, noop), undefined, 'a no-op commits nothing')
  const undo = applySchemaChanges(meta, ops([{ op: 'add-column', name: 'tmp', type: 'int' }, { op: 'delete-column', path: 'tmp' }]))
  t.equal(undo.noop, true, 'add then delete is a no-op')

  // Schema 0: the table before `amount` was added. Dropping amount again reuses id 0.
  const older = { type: 'struct', 'schema-id': 0, 'identifier-field-ids': [1], fields: FIELDS.filter(f => f.name !== 'amount') }
  const withHistory = table({ extraSchemas: [older] })
  const back = applySchemaChanges(withHistory, ops([{ op: 'delete-column', path: 'amount' }]))
  t.equal(back.reusedSchemaId, 0)
  t.equal(back.schema.schemaId, 0)
  t.same(buildCommitRequest(withHistory, back)?.updates, [{ action: 'set-current-schema', 'schema-id': 0 }],
    'an equal older schema is switched to, never added again (Java leaves -1 unresolvable there)')
})

t.test('buildCommitRequest: the three requirements, add-schema then set-current-schema -1', async t => {
  const meta = table()
  const r = applySchemaChanges(meta, ops([{ op: 'add-column', name: 'note', type: 'string' }]))
  const body = buildCommitRequest(meta, r, { namespace: ['db'], name: 'orders' })
  t.same(body?.identifier, { namespace: ['db'], name: 'orders' })
  t.same(body?.requirements, [
    { type: 'assert-table-uuid', uuid: '9c12d441-03fe-4693-9a96-a0705ddf69c1' },
    { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 22 },
    { type: 'assert-current-schema-id', 'current-schema-id': 1 }
  ])
  t.equal(body?.updates.length, 2)
  t.match(body?.updates[0], { action: 'add-schema', 'last-column-id': 23, schema: { type: 'struct', 'schema-id': 2, 'identifier-field-ids': [1] } })
  t.same(body?.updates[1], { action: 'set-current-schema', 'schema-id': -1 })
  const fields = (body?.updates[0]?.schema as { fields: Array<{ name: string, id: number }> }).fields
  t.same(fields.at(-1), { id: 23, name: 'note', required: false, type: 'string' })
})

t.test('union-by-name: adds by name at any depth, loosens, takes docs, keeps the rest, never retypes', async t => {
  const r = applySchemaChanges(table(), ops([{
    op: 'union-by-name',
    schema: {
      type: 'struct',
      fields: [
        { id: 900, name: 'kind', required: false, type: 'string', doc: 'order kind' },
        { id: 901, name: 'address', required: false, type: { type: 'struct', fields: [{ id: 3, name: 'city', required: true, type: 'string' }] } },
        { name: 'points', type: { type: 'list', element: { type: 'struct', fields: [{ name: 'x', type: 'int' }, { name: 'y', type: 'int' }] } } },
        { name: 'tags', type: { type: 'list', element: 'string', 'element-required': false } },
        { name: 'fresh', type: { type: 'map', key: 'string', value: { type: 'struct', fields: [{ name: 'q', type: 'int' }] } } }
      ]
    }
  }]))
  t.same(r.errors, [])
  t.equal(fieldAt(r.schema, 'kind')?.required, false, 'optional in the given schema → optional')
  t.equal(fieldAt(r.schema, 'kind')?.field?.doc, 'order kind', 'doc taken')
  t.equal(fieldAt(r.schema, 'address.city')?.id, 23, 'given ids are ignored')
  t.equal(fieldAt(r.schema, 'address.city')?.required, false, 'added as optional')
  t.equal(fieldAt(r.schema, 'points.element.y')?.id, 24)
  t.equal(fieldAt(r.schema, 'tags.element')?.required, false)
  t.same(['fresh', 'fresh.key', 'fresh.value', 'fresh.value.q'].map(p => fieldAt(r.schema, p)?.id), [25, 26, 27, 28])
  t.equal(fieldAt(r.schema, 'qty')?.id, 4, 'unmentioned fields stay')
  t.match(r.warnings, [/address\.city as optional/])
  t.equal(r.lastColumnId, 28)

  const bad = applySchemaChanges(table(), ops([{ op: 'union-by-name', schema: { fields: [{ name: 'qty', type: 'long' }, { name: 'note', type: 'string' }] } }]))
  t.match(bad.errors, [{ op: 'union-by-name', path: 'qty', message: /never changes a type/ }])
  t.equal(bad.noop, true, 'a refused union adds nothing, not even its other fields')
  const kind = applySchemaChanges(table(), ops([{ op: 'union-by-name', schema: { fields: [{ name: 'address', type: 'string' }] } }]))
  t.match(kind.errors[0]?.message, /never changes a type/)
})

t.test('ensure-column: absent → added; equivalent → nothing or the doc; promotable → promoted; else refused', async t => {
  const meta = table()
  const added = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'address.city', type: 'string', doc: 'City' }]))
  t.equal(fieldAt(added.schema, 'address.city')?.id, 23)
  const same = applySchemaChanges(meta, ops([
    { op: 'ensure-column', path: 'qty', type: 'int' },
    { op: 'ensure-column', path: 'address', type: 'struct<zip: string, street: string>' },
    { op: 'ensure-column', path: 'points', type: { type: 'list', 'element-id': 99, element: { type: 'struct', fields: [{ id: 1, name: 'x', required: false, type: 'int', doc: 'ignored' }] } } }
  ]))
  t.equal(same.noop, true, 'structs, lists and maps compare by shape: ids, order and nested docs ignored')
  const doc = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'qty', type: 'int', doc: 'Quantity' }]))
  t.equal(fieldAt(doc.schema, 'qty')?.field?.doc, 'Quantity')
  t.equal(doc.lastColumnId, 22)
  const promoted = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'qty', type: 'long' }]))
  t.equal(typeToString(fieldAt(promoted.schema, 'qty')?.type ?? 'x' as never), 'long')
  t.equal(fieldAt(promoted.schema, 'qty')?.id, 4)
  const refused = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'qty', type: 'string' }]))
  t.match(refused.errors, [{ path: 'qty', message: /qty is int, wanted string.*legacy-archival/ }])
  // Idempotence: applying the result again changes nothing.
  const again = applySchemaChanges({ ...meta, schemas: [...meta.schemas, added.schema], currentSchemaId: added.schema.schemaId as number, lastColumnId: added.lastColumnId },
    ops([{ op: 'ensure-column', path: 'address.city', type: 'string', doc: 'City' }]))
  t.equal(again.noop, true)
})

t.test('ensure-column legacy-archival: rename to <name>__legacy_N, optional, doc archived, fresh column, all in one result', async t => {
  const meta = table()
  const r = applySchemaChanges(meta, ops([
    { op: 'ensure-column', path: 'qty', type: 'string', doc: 'now text', 'legacy-archival': true },
    { op: 'ensure-column', path: 'qty', type: 'struct<n: int>', 'legacy-archival': true },
    { op: 'ensure-column', path: 'kind', type: 'int', 'legacy-archival': true }
  ]))
  t.same(r.errors, [])
  t.equal(fieldAt(r.schema, 'qty__legacy_1')?.id, 4, 'the old data keeps its id')
  t.match(fieldAt(r.schema, 'qty__legacy_1')?.field?.doc, /^ARCHIVED: replaced by a new qty of type string/)
  t.equal(fieldAt(r.schema, 'qty__legacy_2')?.id, 23, 'the first free N')
  t.same([fieldAt(r.schema, 'qty')?.id, fieldAt(r.schema, 'qty.n')?.id], [24, 25])
  t.equal(fieldAt(r.schema, 'kind__legacy_1')?.required, false, 'archived columns become optional')
  t.equal(fieldAt(r.schema, 'kind')?.id, 26)
  t.equal(r.lastColumnId, 26)
  t.equal(r.warnings.length, 3)
  const body = buildCommitRequest(meta, r)
  t.equal(body?.updates.filter(u => u.action === 'add-schema').length, 1, 'one add-schema carries the whole archival')
})

t.test('a column a partition spec, sort order or the identifier fields use is never archived', async t => {
  const meta = table()
  for (const [path, by] of [['day', /partition spec 0/], ['name', /sort order 1/], ['id', /identifier fields/]] as const) {
    const r = applySchemaChanges(meta, ops([{ op: 'ensure-column', path, type: 'boolean', 'legacy-archival': true }]))
    t.match(r.errors, [{ path, message: by }], `${path} is protected`)
    t.equal(r.noop, true)
  }
  const blocker = applySchemaChanges(meta, ops([{ op: 'ensure-rename', from: 'qty', to: 'day' }]))
  t.match(blocker.errors, [{ message: /cannot archive day .*partition spec 0/ }], 'nor as an ensure-rename blocker')
})

t.test('ensure-rename: done, rename, neither (warning), both (archive the blocker, then rename)', async t => {
  const meta = table()
  const rename = applySchemaChanges(meta, ops([{ op: 'ensure-rename', from: 'amount', to: 'total' }]))
  t.equal(fieldAt(rename.schema, 'total')?.id, 22)
  const done = applySchemaChanges(meta, ops([{ op: 'ensure-rename', from: 'gone', to: 'amount' }]))
  t.equal(done.noop, true)
  t.same(done.warnings, [])
  const neither = applySchemaChanges(meta, ops([{ op: 'ensure-rename', from: 'a1', to: 'a2' }]))
  t.equal(neither.noop, true)
  t.match(neither.warnings, [/neither a1 nor a2 exists/])
  const both = applySchemaChanges(meta, ops([{ op: 'ensure-rename', from: 'amount', to: 'qty' }]))
  t.same(both.errors, [])
  t.equal(fieldAt(both.schema, 'qty')?.id, 22, 'the old column now has the name')
  t.equal(fieldAt(both.schema, 'qty__legacy_1')?.id, 4, 'the blocker is archived, data kept')
  t.equal(both.lastColumnId, 22, 'no new ids')
  const nested = applySchemaChanges(meta, ops([{ op: 'ensure-rename', from: 'address.zip', to: 'address.postcode' }, { op: 'ensure-rename', from: 'address.street', to: 'line1' }]))
  t.same([fieldAt(nested.schema, 'address.postcode')?.id, fieldAt(nested.schema, 'address.line1')?.id], [8, 7])
  const cross = applySchemaChanges(meta, ops([{ op: 'ensure-rename', from: 'address.zip', to: 'points.zip' }]))
  t.match(cross.errors[0]?.message, /not under the same parent/)
})

t.test('readSchemaChanges names every problem; the wire form round-trips', async t => {
  const { problems } = readSchemaChanges([
    { op: 'add-column', name: 'x' },
    { op: 'drop-column', path: 'x' },
    { op: 'move-column', path: 'x', first: true, after: 'y' },
    { op: 'rename-column', path: 'x', newName: 'y' },
    'nope'
  ])
  t.match(problems, [
    /changes\[0\]\.type: missing/,
    /changes\[1\]\.op: unknown change "drop-column"/,
    /changes\[2\]: move-column needs exactly one of first, before, after/,
    /changes\[3\]\.newName: not a field of rename-column/,
    /changes\[3\]\.new-name: missing/,
    /changes\[4\]: expected an object/
  ])
  t.match(readSchemaChanges([]).problems, [/empty/])
  const wire = [
    { op: 'rename-column', path: 'a', 'new-name': 'b' },
    { op: 'ensure-column', path: 'a', type: 'int', 'legacy-archival': true },
    { op: 'move-column', path: 'a', after: 'b' }
  ]
  t.same(ops(wire).map(schemaChangeToWire), wire)
})

t.test('planFromContract: adds, promotes, loosens, documents; strict drops; the rest is unresolved', async t => {
  const meta = table()
  const { contract } = parseContract(`
columns:
  - { name: id, type: long, required: true }
  - { name: qty, type: long, doc: Quantity }
  - { name: kind, type: string, required: false }
  - { name: price, type: "decimal(8, 2)" }
  - { name: name, type: string, required: true }
  - { name: note, type: string, doc: Free text }
  - { name: customer.id, type: long }
  - { name: customer.tier, type: string }
  - { name: address, type: "struct<street: string, zip: string>" }
  - { name: day, type: date }
  - { name: points, type: list }
  - { name: points.element.x, type: int }
  - { name: points.element.y, type: int }
strict: true
`, 'inline')
  if (contract === undefined) throw new Error('contract')
  const plan = planFromContract(meta, contract)
  t.same(plan.changes.map(schemaChangeToWire), [
    { op: 'add-column', name: 'note', type: 'string', doc: 'Free text' },
    { op: 'add-column', name: 'customer', type: { type: 'struct', fields: [{ id: 0, name: 'id', required: false, type: 'long' }] } },
    { op: 'add-nested-column', parent: 'customer', name: 'tier', type: 'string' },
    { op: 'add-nested-column', parent: 'points.element', name: 'y', type: 'int' },
    { op: 'update-column-type', path: 'qty', type: 'long' },
    { op: 'update-doc', path: 'qty', doc: 'Quantity' },
    { op: 'make-column-optional', path: 'kind' },
    { op: 'delete-column', path: 'tags' },
    { op: 'delete-column', path: 'attrs' },
    { op: 'delete-column', path: 'props' },
    { op: 'delete-column', path: 'amount' }
  ])
  t.match(plan.unresolved.map(u => u.message), [
    /price .*decimal\(10, 2\), the contract requires decimal\(8, 2\)/,
    /name .*never made required/,
    /customer under the strict contract: it is created to hold customer\.id.*does not list customer/
  ], 'price cannot narrow, name cannot be made required, a created parent is unlisted')

  const applied = applySchemaChanges(meta, plan.changes)
  t.same(applied.errors, [])
  const next: TableMetadata = { ...meta, schemas: [...meta.schemas, applied.schema], currentSchemaId: applied.schema.schemaId as number, lastColumnId: applied.lastColumnId }
  const second = planFromContract(next, contract)
  t.same(second.changes, [], 'a second plan is empty')
  const left = checkContract(contract, applied.schema, 2).map(v => `${v.kind} ${v.path}`)
  t.same(left.sort(), ['required name', 'type price', 'unlisted customer'], 'only what the plan reported unresolved is left')
  t.same(second.unresolved.map(u => u.path).sort(), ['customer', 'name', 'price'])
})

t.test('planFromContract keeps protected and parent columns in strict mode', async t => {
  const { contract } = parseContract('columns:\n  - { name: id, type: long }\n  - { name: address.zip, type: string }\nstrict: true\n', 'inline')
  if (contract === undefined) throw new Error('contract')
  const plan = planFromContract(table(), contract)
  const dropped = plan.changes.filter(c => c.op === 'delete-column').map(c => (c as { path: string }).path)
  t.notOk(dropped.includes('day'), 'the partition source is not dropped')
  t.notOk(dropped.includes('name'), 'the sort source is not dropped')
  t.notOk(dropped.includes('address'), 'a struct with listed fields is not dropped')
  t.ok(dropped.includes('qty'))
  t.match(plan.unresolved.map(u => u.path).sort(), ['address', 'day', 'name'])
})

/** The name mapping Java's `MappingUtil.create` makes for FIELDS (what `migrate` and `add_files` leave). */
const MAPPING = [
  ...[[1, 'id'], [2, 'name'], [3, 'price'], [4, 'qty'], [5, 'kind']].map(([id, name]) => ({ 'field-id': id, names: [name] })),
  { 'field-id': 6, names: ['address'], fields: [{ 'field-id': 7, names: ['street'] }, { 'field-id': 8, names: ['zip'] }] },
  { 'field-id': 9, names: ['tags'], fields: [{ 'field-id': 10, names: ['element'] }] },
  { 'field-id': 11, names: ['attrs'], fields: [{ 'field-id': 12, names: ['key'] }, { 'field-id': 13, names: ['value'] }] },
  { 'field-id': 14, names: ['day'] },
  { 'field-id': 15, names: ['points'], fields: [{ 'field-id': 16, names: ['element'], fields: [{ 'field-id': 17, names: ['x'] }] }] },
  { 'field-id': 18, names: ['props'], fields: [{ 'field-id': 19, names: ['key'] }, { 'field-id': 20, names: ['value'], fields: [{ 'field-id': 21, names: ['v'] }] }] },
  { 'field-id': 22, names: ['amount'] }
]

t.test('name mapping: renames add a name, new columns get entries, a reused name moves to the new column', async t => {
  const mapped = table({ properties: { 'schema.name-mapping.default': JSON.stringify(MAPPING) } })
  const evolve = (changes: unknown[]): { mapping: Array<Record<string, unknown>> | undefined, updates: unknown[], warnings: readonly string[] } => {
    const result = applySchemaChanges(mapped, ops(changes))
    const body = buildCommitRequest(mapped, result)
    return { mapping: result.nameMapping === undefined ? undefined : JSON.parse(result.nameMapping), updates: body?.updates ?? [], warnings: result.warnings }
  }
  const entry = (mapping: Array<Record<string, unknown>> | undefined, id: number): unknown => {
    const find = (list: Array<Record<string, unknown>>): unknown => {
      for (const m of list) {
        if (m['field-id'] === id) return m
        const inner = Array.isArray(m.fields) ? find(m.fields as Array<Record<string, unknown>>) : undefined
        if (inner !== undefined) return inner
      }
      return undefined
    }
    return find(mapping ?? [])
  }

  const renamed = evolve([{ op: 'rename-column', path: 'name', 'new-name': 'customer' }, { op: 'rename-column', path: 'points.x', 'new-name': 'px' }])
  t.same(entry(renamed.mapping, 2), { 'field-id': 2, names: ['name', 'customer'] }, 'a renamed column answers to both names')
  t.same(entry(renamed.mapping, 17), { 'field-id': 17, names: ['x', 'px'] }, 'inside a list element struct too')
  t.same(renamed.updates.at(-1), { action: 'set-properties', updates: { 'schema.name-mapping.default': JSON.stringify(renamed.mapping) } }, 'the commit sets the property after the schema')
  t.equal(renamed.updates.length, 3, 'add-schema, set-current-schema, set-properties')

  const added = evolve([
    { op: 'add-column', name: 'note', type: 'string' },
    { op: 'add-nested-column', parent: 'address', name: 'city', type: 'string' },
    { op: 'add-nested-column', parent: 'props', name: 'w', type: 'int' },
    { op: 'add-column', name: 'geo', type: { type: 'struct', fields: [{ name: 'lat', type: 'double' }, { name: 'tags', type: 'list<string>' }] } }
  ])
  t.same(entry(added.mapping, 23), { 'field-id': 23, names: ['note'] }, 'a new top-level column')
  t.same(entry(added.mapping, 24), { 'field-id': 24, names: ['city'] }, 'a new nested column, under its struct')
  t.same((entry(added.mapping, 6) as { fields: unknown[] }).fields.length, 3, 'address keeps street and zip')
  t.same(entry(added.mapping, 25), { 'field-id': 25, names: ['w'] }, 'a new field of a map value struct')
  t.same(entry(added.mapping, 26), {
    'field-id': 26, names: ['geo'], fields: [{ 'field-id': 27, names: ['lat'] }, { 'field-id': 28, names: ['tags'], fields: [{ 'field-id': 29, names: ['element'] }] }]
  }, 'a new struct column maps its nested fields and list element')

  const reused = evolve([{ op: 'delete-column', path: 'qty' }, { op: 'add-column', name: 'qty', type: 'long' }])
  t.same(entry(reused.mapping, 4), { 'field-id': 4, names: [] }, 'the dropped column gives up the name')
  t.same(entry(reused.mapping, 23), { 'field-id': 23, names: ['qty'] }, 'files with qty now belong to the new column')
  const swapped = evolve([{ op: 'rename-column', path: 'price', 'new-name': 'cost' }, { op: 'rename-column', path: 'amount', 'new-name': 'price' }])
  t.same(entry(swapped.mapping, 3), { 'field-id': 3, names: ['cost'] }, 'a name renamed onto a sibling leaves its old holder')
  t.same(entry(swapped.mapping, 22), { 'field-id': 22, names: ['amount', 'price'] })

  t.same(evolve([{ op: 'update-doc', path: 'price', doc: 'Unit price' }]).mapping, undefined, 'no rename, no new column: the mapping is not touched')
  t.same(evolve([{ op: 'update-doc', path: 'price', doc: 'x' }]).updates.length, 2, 'and the commit does not set it')
  const plain = applySchemaChanges(table(), ops([{ op: 'rename-column', path: 'name', 'new-name': 'customer' }]))
  t.equal(plain.nameMapping, undefined, 'a table without a mapping gets none')
  t.equal(buildCommitRequest(table(), plain)?.updates.length, 2)

  const broken = table({ properties: { 'schema.name-mapping.default': '{"not": "a list"}' } })
  const kept = applySchemaChanges(broken, ops([{ op: 'rename-column', path: 'name', 'new-name': 'customer' }]))
  t.equal(kept.nameMapping, undefined, 'an unreadable mapping is left alone')
  t.match(kept.warnings.join('\n'), /schema\.name-mapping\.default is left as it is: the mapping is not a JSON array/)
  t.equal(kept.errors.length, 0, 'the schema change itself still applies')
})

t.test('ensure-column on nested types: adds what is missing, promotes inside, keeps the rest; refuses anything else', async t => {
  const meta = table()
  const r = applySchemaChanges(meta, ops([
    { op: 'ensure-column', path: 'address', type: 'struct<street: string, zip: string, city: string>' },
    { op: 'ensure-column', path: 'points', type: 'list<struct<x: long, y: long>>' },
    { op: 'ensure-column', path: 'attrs', type: 'map<int, string>' }
  ]))
  t.same(r.errors, [])
  t.same([fieldAt(r.schema, 'address.street')?.id, fieldAt(r.schema, 'address.zip')?.id, fieldAt(r.schema, 'address.city')?.id], [7, 8, 23], 'a missing struct field is added; the others keep their ids')
  t.equal(typeToString(fieldAt(r.schema, 'points.element.x')?.type ?? 'x' as never), 'long', 'int -> long inside a list element struct')
  t.equal(fieldAt(r.schema, 'points.element.x')?.id, 17)
  t.equal(fieldAt(r.schema, 'points.element.y')?.id, 24)
  t.equal(r.lastColumnId, 24)

  const kept = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'address', type: 'struct<zip: string>' }]))
  t.equal(kept.noop, true, 'fields the wanted type does not name stay: ensure never drops')
  const value = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'props', type: 'map<string, struct<v: string, n: int>>' }]))
  t.equal(fieldAt(value.schema, 'props.value.n')?.id, 23, 'a field added to a map value struct')

  const key = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'attrs', type: 'map<long, string>' }]))
  t.match(key.errors, [{ path: 'attrs', message: /map keys never change: attrs\.key is int/ }])
  const narrowed = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'address', type: 'struct<zip: int, extra: string>' }]))
  t.match(narrowed.errors, [{ path: 'address', message: /address\.zip string -> int is not a promotion.*legacy-archival/ }])
  t.equal(narrowed.lastColumnId, 22, 'a refused change hands out no id')
  const kind = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'tags', type: 'map<string, string>' }]))
  t.match(kind.errors, [{ message: /tags is a list, not a map/ }])

  // With legacy-archival the old struct is kept whole and a new one added; the failed in-place
  // attempt (which would have added `extra`) leaves no gap in the ids.
  const archived = applySchemaChanges(meta, ops([{ op: 'ensure-column', path: 'address', type: 'struct<zip: int, extra: string>', 'legacy-archival': true }]))
  t.same(archived.errors, [])
  t.same([fieldAt(archived.schema, 'address__legacy_1')?.id, fieldAt(archived.schema, 'address')?.id, fieldAt(archived.schema, 'address.zip')?.id], [6, 23, 24])
  t.same(archived.newFieldIds, [23, 24, 25])
})
