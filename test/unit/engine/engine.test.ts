import { LosslessNumber } from 'lossless-json'
import t from 'tap'
import { diffSchemas } from '../../../src/engine/diff/schema-diff.js'
import { summarizeChanges } from '../../../src/engine/diff/summary.js'
import { applyUpdates, checkRequirements } from '../../../src/iceberg/apply-commit.js'
import { parsePrimitiveType, parseSchema, parseTableMetadata, parseType } from '../../../src/iceberg/parse.js'
import { schemaToJson, typeToJson, typeToString } from '../../../src/iceberg/print.js'
import { isPromotionAllowed, V3_ONLY_TYPES } from '../../../src/iceberg/promotion.js'
import { indexSchema } from '../../../src/iceberg/schema-index.js'
import { sameSchema, sameTypeShape } from '../../../src/iceberg/type-equality.js'
import type { IcebergType, ParseIssue, PrimitiveType, Schema, TableMetadata } from '../../../src/iceberg/types.js'

function schemaOf (json: unknown): Schema {
  const { schema, issues } = parseSchema(json)
  if (schema === undefined) throw new Error(JSON.stringify(issues))
  return schema
}

const f = (id: number, name: string, type: unknown, required = false, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ id, name, required, type, ...extra })
const struct = (...fields: unknown[]): Record<string, unknown> => ({ type: 'struct', fields })
const schemaJson = (fields: unknown[], ident: number[] = [], id = 0): Record<string, unknown> => ({ type: 'struct', 'schema-id': id, 'identifier-field-ids': ident, fields })

const sample = schemaJson([
  f(1, 'id', 'long', true),
  f(2, 'amount', 'decimal(10,2)'),
  f(3, 'address', struct(f(4, 'zip', 'string'), f(5, 'city', 'string'))),
  f(6, 'tags', { type: 'list', 'element-id': 7, element: 'string', 'element-required': false }),
  f(8, 'm', { type: 'map', 'key-id': 9, key: 'string', 'value-id': 10, 'value-required': true, value: struct(f(11, 'zip', 'int')) })
], [1])

function tableOf (schemas: unknown[], current: number, extra: Record<string, unknown> = {}): TableMetadata {
  const { metadata, issues } = parseTableMetadata({
    'format-version': 2,
    'table-uuid': 'UUID-1',
    location: 's3://x',
    'last-column-id': 11,
    'current-schema-id': current,
    schemas,
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'last-partition-id': 999,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: {},
    ...extra
  })
  if (metadata === undefined) throw new Error(JSON.stringify(issues))
  return metadata
}

t.test('parsePrimitiveType', async t => {
  t.same(parsePrimitiveType('LONG'), { kind: 'long' })
  // Appendix C: whitespace around parameters and separators, inside the brackets (Java Types.fromTypeName).
  t.same(parsePrimitiveType('decimal( 10 ,2 )'), { kind: 'decimal', precision: 10, scale: 2 })
  for (const outside of [' decimal(10,2) ', 'decimal (10,2)', 'fixed [16]', ' long', 'long ']) t.equal(parsePrimitiveType(outside), undefined, `${JSON.stringify(outside)}: whitespace outside the parameters`)
  t.same(parsePrimitiveType('decimal(38, 38)'), { kind: 'decimal', precision: 38, scale: 38 })
  t.equal(parsePrimitiveType('decimal(39, 2)'), undefined)
  t.equal(parsePrimitiveType('decimal(0, 0)'), undefined)
  t.equal(parsePrimitiveType('decimal(5, 6)'), undefined)
  t.same(parsePrimitiveType('Fixed[ 16 ]'), { kind: 'fixed', length: 16 })
  t.same(parsePrimitiveType('fixed[0]'), { kind: 'fixed', length: 0 }, 'fixed[0]: no minimum in the spec; Java, iceberg-go and iceberg-rust read it')
  t.equal(parsePrimitiveType('fixed[2147483648]'), undefined, 'longer than a Java int')
  t.same(parsePrimitiveType('geometry'), { kind: 'geometry' })
  t.same(parsePrimitiveType('geometry(srid:4326)'), { kind: 'geometry', crs: 'srid:4326' })
  t.same(parsePrimitiveType('geography(OGC:CRS84, Karney)'), { kind: 'geography', crs: 'OGC:CRS84', algorithm: 'karney' })
  t.same(parsePrimitiveType('timestamptz_ns'), { kind: 'timestamptz_ns' })
  t.same(parsePrimitiveType('variant'), { kind: 'variant' })
  for (const bad of ['', 'integer', 'decimal(10)', 'fixed[x]', 'list<int>', 'decimal(10,2)x']) t.equal(parsePrimitiveType(bad), undefined, bad)
})

t.test('parseSchema collects every problem with its path', async t => {
  const { schema, issues } = parseSchema(schemaJson([
    { name: 'a', required: true, type: 'int' },
    f(2, 'b', 'decimal(40, 2)'),
    f(3, 'c', 'int'),
    f(3, 'c', 'long'),
    { id: 5, name: 'd', type: 'int' },
    f(6, 'e', { type: 'list', element: 'int', 'element-required': false })
  ]))
  t.equal(schema, undefined)
  const at = issues.map(i => i.at)
  t.same(at, [
    'schema.fields[0].id', 'schema.fields[1].type', 'schema.fields[3].id', 'schema.fields[3].name',
    'schema.fields[4].required', 'schema.fields[5].type.element-id'
  ])
  t.match(issues[1]?.message, /decimal precision must be 1\.\.38, got 40/)
  t.match(issues[2]?.message, /multiple fields for id 3/)
  t.match(issues[3]?.message, /multiple fields named c/)
  t.match(parseSchema({ fields: [] }).issues[0]?.message, /missing "type": "struct"/)
  t.match(parseSchema('x').issues[0]?.message, /expected an object/)
  const issues2: ParseIssue[] = []
  t.equal(parseType({ type: 'set' }, 'x', issues2), undefined)
  t.same(issues2, [{ at: 'x.type', message: 'Cannot parse type: unknown nested type "set"' }])
})

t.test('parsing is bounded in depth and immune to __proto__ keys', async t => {
  let deep: unknown = 'int'
  for (let i = 0; i < 5000; i++) deep = { type: 'list', 'element-id': i + 2, 'element-required': false, element: deep }
  const { issues } = parseSchema(schemaJson([f(1, 'x', deep)]))
  t.equal(issues.length, 1)
  t.match(issues[0]?.message, /nested deeper than 200 levels/)

  const hostile = JSON.parse('{"type":"struct","fields":[{"id":1,"name":"__proto__","required":false,"type":"int","initial-default":{"__proto__":{"polluted":true}}}],"__proto__":{"polluted":true}}')
  const s = schemaOf(hostile)
  t.equal(s.struct.fields[0]?.name, '__proto__')
  t.equal(indexSchema(s).byPath.get('__proto__'), 1)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  const meta = parseTableMetadata(JSON.parse('{"format-version":2,"last-column-id":1,"current-schema-id":0,"schemas":[{"type":"struct","schema-id":0,"fields":[]}],"properties":{"__proto__":"x","a":"b"},"refs":{"__proto__":{"snapshot-id":1,"type":"tag"}}}'))
  t.equal(meta.metadata?.properties.__proto__, 'x') // eslint-disable-line no-proto -- a JSON key named __proto__ is data here
  t.equal(meta.metadata?.refs.__proto__, '1') // eslint-disable-line no-proto -- a JSON key named __proto__ is data here
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('parseTableMetadata: v1 legacy fields, refs and 64-bit ids', async t => {
  const v1 = parseTableMetadata({
    'format-version': 1,
    location: 's3://x',
    'last-column-id': 2,
    schema: { type: 'struct', fields: [f(1, 'a', 'int', true), f(2, 'b', 'date')] },
    'partition-spec': [{ 'source-id': 2, name: 'b_day', transform: 'day' }],
    'current-snapshot-id': new LosslessNumber('3055729675574597004')
  })
  t.same(v1.issues, [])
  const m = v1.metadata as TableMetadata
  t.equal(m.formatVersion, 1)
  t.equal(m.currentSchemaId, 0)
  t.equal(m.schemas[0]?.schemaId, 0)
  t.same(m.partitionSpecs, [{ specId: 0, fields: [{ sourceIds: [2], name: 'b_day', transform: 'day' }] }])
  t.equal(m.defaultSortOrderId, 0)
  t.equal(m.refs.main, '3055729675574597004')
  const v2 = tableOf([sample], 0, { refs: { main: { 'snapshot-id': new LosslessNumber('3055729675574597004'), type: 'branch' }, t1: { 'snapshot-id': 5, type: 'tag' } }, 'current-snapshot-id': -1 })
  t.same({ ...v2.refs }, { main: '3055729675574597004', t1: '5' })
  t.equal(v2.refTypes?.t1, 'tag')
  const bad = parseTableMetadata({ 'format-version': 4, 'current-schema-id': 3, schemas: [sample] })
  t.same(bad.issues.map(i => i.at), ['format-version', 'last-column-id', 'current-schema-id'])
  t.equal(bad.metadata, undefined)
})

t.test('print: spec spelling and round trips', async t => {
  const s = schemaOf(sample)
  t.equal(typeToString(s.struct), 'struct<id: long, amount: decimal(10, 2), address: struct<zip: string, city: string>, tags: list<string>, m: map<string, struct<zip: int>>>')
  t.equal(typeToString({ kind: 'fixed', length: 16 }), 'fixed[16]')
  t.equal(typeToString({ kind: 'geography', crs: 'srid:4326' }), 'geography(srid:4326)')
  t.equal(typeToJson({ kind: 'decimal', precision: 9, scale: 2 }), 'decimal(9, 2)')
  const again = schemaOf(JSON.parse(JSON.stringify(schemaToJson(s))))
  t.ok(sameSchema(s, again))
  t.same(again, s)
  const withDefaults = schemaOf(schemaJson([f(1, 'a', 'int', true, { doc: 'd', 'initial-default': 1, 'write-default': 2 })]))
  t.same(schemaOf(schemaToJson(withDefaults)), withDefaults)
})

t.test('indexSchema: ids, paths, parents, highest id, linear walk', async t => {
  const idx = indexSchema(schemaOf(sample))
  t.same([...idx.byPath.keys()], ['id', 'amount', 'address', 'address.zip', 'address.city', 'tags', 'tags.element', 'm', 'm.key', 'm.value', 'm.value.zip'])
  t.equal(idx.highestId, 11)
  const zip = idx.byId.get(11)
  t.same({ name: zip?.name, path: zip?.path, parentId: zip?.parentId, index: zip?.index, required: zip?.required }, { name: 'zip', path: 'm.value.zip', parentId: 10, index: 0, required: false })
  t.equal(idx.byId.get(9)?.name, 'key')
  t.equal(idx.byId.get(10)?.required, true)
  t.equal(idx.byId.get(7)?.field, undefined)
  t.equal(idx.byId.get(4)?.field?.name, 'zip')
  // 20,000 levels built in code (not parsed): no recursion, so no stack overflow.
  let type: IcebergType = { kind: 'int' }
  for (let i = 20000; i > 0; i--) type = { kind: 'struct', fields: [{ id: i + 1, name: 'n', required: false, type }] }
  const deep = indexSchema({ identifierFieldIds: [], struct: { kind: 'struct', fields: [{ id: 1, name: 'root', required: false, type }] } })
  t.equal(deep.fields.length, 20001)
  t.equal(deep.byId.get(20001)?.path.split('.').length, 20001)
  t.ok(typeToString(type).startsWith('struct<n: struct<'))
})

t.test('indexSchema: sparse, negative and repeated ids behave as in a Map', async t => {
  const field = (id: number, name: string): { id: number, name: string, required: boolean, type: IcebergType } => ({ id, name, required: false, type: { kind: 'int' } })
  const sparse = indexSchema({ identifierFieldIds: [], struct: { kind: 'struct', fields: [field(2147483000, 'far'), field(-3, 'neg'), field(7, 'a'), field(7, 'again')] } })
  t.equal(sparse.byId.get(2147483000)?.name, 'far')
  t.equal(sparse.byId.get(-3)?.name, 'neg')
  t.equal(sparse.byId.get(7)?.name, 'a', 'the first occurrence wins')
  t.same(sparse.duplicateIds, [7])
  t.equal(sparse.byId.size, 3)
  t.same([...sparse.byId.keys()], [2147483000, -3, 7])
  t.equal(sparse.highestId, 2147483000)

  const dense = indexSchema({ identifierFieldIds: [], struct: { kind: 'struct', fields: [field(3, 'c'), { id: 1, name: 'a', required: false, type: { kind: 'struct', fields: [field(2, 'b'), field(3, 'dup')] } }] } })
  t.same([...dense.byId.keys()], [3, 1, 2], 'iteration follows pre-order, first occurrences only')
  t.same([...dense.byId.values()].map(v => v.name), ['c', 'a', 'b'])
  t.same([...dense.byId].map(([k, v]) => `${k}:${v.path}`), ['3:c', '1:a', '2:a.b'])
  const seen: number[] = []
  dense.byId.forEach((v, k, m) => { if (m.get(k) === v) seen.push(k) })
  t.same(seen, [3, 1, 2])
  t.same(dense.duplicateIds, [3])
  for (const missing of [0, 4, -1, 1.5, Number.NaN, 1e12]) t.equal(dense.byId.get(missing), undefined, `no field ${missing}`)
  t.notOk(dense.byId.has(0))
})

t.test('parsing reads own properties only, on any prototype', async t => {
  // A field whose keys are inherited has none of its own.
  const inherited = Object.create({ id: 5, name: 'evil', required: true, type: 'int' }) as unknown
  t.same(parseSchema(schemaJson([inherited])).issues.map(i => i.at), ['schema.fields[0].id', 'schema.fields[0].name', 'schema.fields[0].required', 'schema.fields[0].type'])
  const bare = Object.assign(Object.create(null) as object, { id: 1, name: 'a', required: false, type: 'int', 'write-default': null })
  // A null default is no default (spec "Default values").
  t.same(schemaOf(schemaJson([bare])).struct.fields[0], { id: 1, name: 'a', required: false, type: { kind: 'int' } })
  const proto = Object.prototype as Record<string, unknown>
  proto.type = 'long'
  proto.doc = 'inherited'
  try {
    t.same(parseSchema(schemaJson([{ id: 1, name: 'a', required: false }])).issues.map(i => i.at), ['schema.fields[0].type'])
    t.same(schemaOf(schemaJson([f(1, 'a', 'int')])).struct.fields[0], { id: 1, name: 'a', required: false, type: { kind: 'int' } })
  } finally {
    delete proto.type
    delete proto.doc
  }
})

t.test('sameSchema (Java semantics) and sameTypeShape', async t => {
  const a = schemaOf(sample)
  t.ok(sameSchema(a, schemaOf({ ...sample, 'schema-id': 9 })), 'schema id does not matter')
  t.notOk(sameSchema(a, schemaOf({ ...sample, 'identifier-field-ids': [] })))
  const docChanged = structuredClone(sample) as { fields: Array<Record<string, unknown>> }
  ;(docChanged.fields[1] as Record<string, unknown>).doc = 'money'
  t.notOk(sameSchema(a, schemaOf(docChanged)))
  t.ok(sameTypeShape(a.struct, schemaOf(docChanged).struct), 'docs ignored by shape')
  const reordered = schemaJson([...(sample.fields as unknown[])].reverse())
  t.notOk(sameSchema(a, schemaOf(reordered)))
  t.ok(sameTypeShape(a.struct, schemaOf(reordered).struct), 'order ignored by shape')
  const renumbered = schemaOf(schemaJson([f(100, 'id', 'long', true), f(101, 'amount', 'decimal(10, 2)')]))
  t.ok(sameTypeShape(renumbered.struct, schemaOf(schemaJson([f(1, 'amount', 'decimal(10,2)'), f(2, 'id', 'long', true)])).struct), 'ids ignored by shape')
  t.notOk(sameTypeShape(renumbered.struct, schemaOf(schemaJson([f(1, 'id', 'long'), f(2, 'amount', 'decimal(10,2)')])).struct), 'required compared')
  t.notOk(sameTypeShape(renumbered.struct, schemaOf(schemaJson([f(1, 'id', 'long', true), f(2, 'total', 'decimal(10,2)')])).struct), 'names compared')
  t.ok(sameSchema(schemaOf(schemaJson([f(1, 'g', 'geometry')])), schemaOf(schemaJson([f(1, 'g', 'geometry(OGC:CRS84)')]))), 'crs default')
  t.ok(sameSchema(schemaOf(schemaJson([f(1, 'a', 'int', false, { 'initial-default': null })])), schemaOf(schemaJson([f(1, 'a', 'int')]))), 'null default = none')
  t.ok(sameSchema(schemaOf(schemaJson([f(1, 'a', 'long', false, { 'initial-default': new LosslessNumber('5') })])), schemaOf(schemaJson([f(1, 'a', 'long', false, { 'initial-default': 5 })]))), 'lossless default')
})

// Every primitive sample; decimals and fixed in a few shapes so widening, narrowing and scale show.
const PRIMITIVES = [
  'boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz', 'string', 'uuid', 'binary',
  'timestamp_ns', 'timestamptz_ns', 'unknown', 'variant', 'decimal(9, 2)', 'decimal(12, 2)', 'decimal(12, 3)', 'decimal(8, 2)',
  'fixed[8]', 'fixed[16]', 'geometry', 'geography'
]
/** The spec's table, written out pair by pair ("Schema Evolution"). */
const ALLOWED: Record<1 | 2 | 3, ReadonlySet<string>> = {
  1: new Set(['int>long', 'float>double', 'decimal(9, 2)>decimal(12, 2)', 'decimal(8, 2)>decimal(9, 2)', 'decimal(8, 2)>decimal(12, 2)']),
  2: new Set(['int>long', 'float>double', 'decimal(9, 2)>decimal(12, 2)', 'decimal(8, 2)>decimal(9, 2)', 'decimal(8, 2)>decimal(12, 2)']),
  3: new Set(['int>long', 'float>double', 'decimal(9, 2)>decimal(12, 2)', 'decimal(8, 2)>decimal(9, 2)', 'decimal(8, 2)>decimal(12, 2)',
    'date>timestamp', 'date>timestamp_ns', ...PRIMITIVES.filter(p => p !== 'unknown').map(p => `unknown>${p}`)])
}

t.test('promotion table: every pair of primitive types for format versions 1, 2 and 3', async t => {
  let checked = 0
  for (const v of [1, 2, 3] as const) {
    for (const from of PRIMITIVES) {
      for (const to of PRIMITIVES) {
        const expected = from === to || ALLOWED[v].has(`${from}>${to}`)
        const got = isPromotionAllowed(parsePrimitiveType(from) as PrimitiveType, parsePrimitiveType(to) as PrimitiveType, v)
        if (got !== expected) t.fail(`v${v} ${from} -> ${to}: expected ${String(expected)}`)
        checked++
      }
    }
  }
  t.equal(checked, PRIMITIVES.length * PRIMITIVES.length * 3)
  t.notOk(isPromotionAllowed({ kind: 'date' }, { kind: 'timestamptz' }, 3), 'never to timestamptz')
  t.ok(V3_ONLY_TYPES.has('variant') && V3_ONLY_TYPES.has('timestamp_ns') && !V3_ONLY_TYPES.has('timestamp'))
})

t.test('checkRequirements: every requirement type, Java-like messages', async t => {
  const base = tableOf([sample], 0, { refs: { main: { 'snapshot-id': new LosslessNumber('3055729675574597004'), type: 'branch' }, v1: { 'snapshot-id': 7, type: 'tag' } } })
  t.same(checkRequirements(base, [
    { type: 'assert-create' },
    { type: 'assert-table-uuid', uuid: 'uuid-1' },
    { type: 'assert-table-uuid', uuid: 'other' },
    { type: 'assert-current-schema-id', 'current-schema-id': 1 },
    { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 10 },
    { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1000 },
    { type: 'assert-default-spec-id', 'default-spec-id': 1 },
    { type: 'assert-default-sort-order-id', 'default-sort-order-id': 2 },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': new LosslessNumber('3055729675574597004') },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': new LosslessNumber('3055729675574597005') },
    { type: 'assert-ref-snapshot-id', ref: 'v1', 'snapshot-id': null },
    { type: 'assert-ref-snapshot-id', ref: 'dev', 'snapshot-id': 5 },
    { type: 'assert-ref-snapshot-id', ref: 'dev', 'snapshot-id': null },
    { type: 'assert-nonsense' }
  ]).map(c => c.message), [
    'Requirement failed: table already exists',
    'Requirement failed: UUID does not match: expected UUID-1 != other',
    'Requirement failed: current schema changed: expected id 1 != 0',
    'Requirement failed: last assigned field id changed: expected id 10 != 11',
    'Requirement failed: last assigned partition id changed: expected id 1000 != 999',
    'Requirement failed: default partition spec changed: expected id 1 != 0',
    'Requirement failed: default sort order changed: expected id 2 != 0',
    'Requirement failed: branch main has changed: expected id 3055729675574597005 != 3055729675574597004',
    'Requirement failed: tag v1 was created concurrently',
    'Requirement failed: branch or tag dev is missing, expected 5'
  ])
  t.same(checkRequirements(undefined, [{ type: 'assert-create' }]), [])
  t.same(checkRequirements(undefined, [{ type: 'assert-table-uuid', uuid: 'x' }]), [{ type: 'assert-table-uuid', message: 'Requirement failed: table does not exist' }])
})

t.test('applyUpdates follows the reference server', async t => {
  const base = tableOf([sample], 0)
  const s0 = sample.fields as unknown[]
  const added = applyUpdates(base, [
    { action: 'add-schema', schema: schemaJson([...s0, f(12, 'x', 'int')], [1], 42), 'last-column-id': 3 },
    { action: 'set-current-schema', 'schema-id': -1 }
  ])
  t.same(added.issues, [])
  t.equal(added.proposed.currentSchemaId, 1, "the client's schema-id is ignored")
  t.equal(added.proposed.lastColumnId, 12, "the client's last-column-id is ignored; max wins")
  t.equal(added.lastAddedSchemaId, 1)
  t.equal(added.currentSchemaChanged, true)
  t.equal(added.addedSchemas.length, 1)

  const dropHighest = applyUpdates(base, [{ action: 'add-schema', schema: schemaJson((s0).slice(0, 2), [1]) }, { action: 'set-current-schema', 'schema-id': -1 }])
  t.equal(dropHighest.proposed.lastColumnId, 11, 'last-column-id never decreases')

  const same = applyUpdates(base, [{ action: 'add-schema', schema: { ...sample, 'schema-id': 5 } }, { action: 'set-current-schema', 'schema-id': -1 }])
  t.same(same.addedSchemas, [], 'an equal schema is reused, not added')
  t.same(same.issues.map(i => [i.rule, i.message]), [['CURRENT_SCHEMA_KNOWN', 'Cannot set last added schema: no schema has been added']])
  const twice = applyUpdates(base, [
    { action: 'add-schema', schema: schemaJson([f(1, 'id', 'long', true)]) },
    { action: 'add-schema', schema: schemaJson([f(1, 'id', 'long', true)]) },
    { action: 'set-current-schema', 'schema-id': -1 }
  ])
  t.equal(twice.proposed.currentSchemaId, 1, 'an add equal to one added in this commit still counts')
  t.same(applyUpdates(base, [{ action: 'set-current-schema', 'schema-id': 3 }]).issues.map(i => i.message), ['Cannot set current schema to unknown schema: 3'])

  const misc = applyUpdates(base, [
    { action: 'Upgrade-Format-Version', 'format-version': 3 },
    { action: 'upgrade-format-version', 'format-version': 1 },
    { action: 'add-spec', spec: { fields: [{ 'source-id': 1, name: 'b', transform: 'bucket[4]' }] } },
    { action: 'set-default-spec', 'spec-id': -1 },
    { action: 'add-sort-order', 'sort-order': { 'order-id': 9, fields: [{ 'source-id': 1, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] } },
    { action: 'set-default-sort-order', 'sort-order-id': -1 },
    { action: 'set-properties', updates: { a: 'b' } },
    { action: 'remove-properties', removals: ['a'] },
    { action: 'add-snapshot', snapshot: { 'snapshot-id': 1 } },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': new LosslessNumber('3055729675574597004') },
    { action: 'remove-schemas', 'schema-ids': [0] },
    { action: 'remove-partition-specs', 'spec-ids': [1, 0] },
    { action: 'drop-everything' },
    { action: 'add-view-version', 'view-version': {} },
    { action: 'set-location' },
    { action: 'remove-snapshots', 'snapshot-ids': 'x' }
  ])
  t.equal(misc.proposed.formatVersion, 3)
  t.equal(misc.proposed.defaultSpecId, 1)
  t.equal(misc.proposed.partitionSpecs.find(s => s.specId === 1)?.fields[0]?.fieldId, 1000, 'partition field ids assigned from last-partition-id')
  t.equal(misc.proposed.defaultSortOrderId, 1, 'new sorted orders start at 1')
  t.equal(misc.proposed.properties.a, undefined)
  t.equal(misc.proposed.refs.main, '3055729675574597004')
  t.ok(misc.specChanged && misc.sortOrderChanged)
  t.same(misc.issues.map(i => i.message), [
    'Cannot downgrade v3 table to v1',
    'Cannot remove current schema: 0',
    'Cannot remove the default partition spec: 1',
    'Cannot apply unknown update action: drop-everything',
    'Cannot apply update add-view-version to a table',
    'Cannot apply set-location: location is missing',
    'Cannot apply remove-snapshots: snapshot-ids must be an array of integers'
  ])
  t.equal(misc.issues[1]?.rule, 'CURRENT_SCHEMA_NOT_REMOVED')

  const created = applyUpdates(undefined, [{ action: 'upgrade-format-version', 'format-version': 3 }, { action: 'add-schema', schema: schemaJson([f(1, 'a', 'int')]) }, { action: 'set-current-schema', 'schema-id': -1 }])
  t.equal(created.proposed.formatVersion, 3)
  t.equal(created.proposed.currentSchemaId, 0)
  t.equal(applyUpdates(undefined, []).proposed.formatVersion, 2)
  t.same(applyUpdates(base, 'x' as unknown as unknown[]).issues.map(i => i.at), ['updates'])
})

t.test('diffSchemas pairs by id; summary reads well', async t => {
  const from = schemaOf(sample)
  t.same(diffSchemas(from, from), [])
  const to = schemaOf(schemaJson([
    f(3, 'address', struct(f(4, 'zip', 'string', false, { doc: 'postal code' }), f(5, 'town', 'string'))),
    f(1, 'id', 'long', true),
    f(2, 'total', 'decimal(12,2)', true),
    f(6, 'tags', { type: 'list', 'element-id': 7, element: 'string', 'element-required': false }),
    f(8, 'm', { type: 'map', 'key-id': 9, key: 'string', 'value-id': 10, 'value-required': false, value: struct(f(11, 'zip', 'int'), f(12, 'extra', 'int')) }),
    f(13, 'amount', 'string')
  ], [1, 2]))
  const changes = diffSchemas(from, to)
  t.same(changes.map(c => c.kind === 'identifier-fields-changed' ? [c.kind, c.added, c.removed] : [c.kind, c.fieldId, c.path]), [
    ['doc-changed', 4, 'address.zip'],
    ['field-renamed', 5, 'address.town'],
    ['field-renamed', 2, 'total'],
    ['type-changed', 2, 'total'],
    ['nullability-changed', 2, 'total'],
    ['nullability-changed', 10, 'm.value'],
    ['field-added', 12, 'm.value.extra'],
    ['field-added', 13, 'amount'],
    ['field-reordered', 3, 'address'],
    ['identifier-fields-changed', [2], []]
  ])
  const text = summarizeChanges(changes)
  t.match(text, /~ renamed {3}2 amount -> total/)
  t.match(text, /~ retyped {3}2 total: decimal\(10, 2\) -> decimal\(12, 2\)/)
  t.match(text, /\+ added {5}13 amount: string \(optional\)/)
  t.match(text, /~ reordered 3 address: position 2 -> 0/)
  t.equal(summarizeChanges([]), 'no schema changes')

  const trap = diffSchemas(schemaOf(schemaJson([f(1, 'id', 'long', true), f(4, 'legacy', 'int')])), schemaOf(schemaJson([f(1, 'id', 'long', true), f(7, 'legacy', 'string')])))
  t.same(trap.map(c => c.kind), ['field-added', 'field-dropped'])
  const trapText = summarizeChanges(trap)
  t.match(trapText, /! dropped {3}4 legacy: int/)
  t.match(trapText, /dropped legacy \(id 4\) and added a new legacy \(id 7\): not a rename/)

  const moved = diffSchemas(from, schemaOf(schemaJson([f(1, 'id', 'long', true), f(3, 'address', struct(f(5, 'city', 'string'))), f(4, 'zip', 'string')])))
  t.same(moved.filter(c => c.kind === 'field-moved').map(c => c.kind === 'field-moved' ? [c.oldPath, c.path] : []), [['address.zip', 'zip']])
  const kind = diffSchemas(from, schemaOf(schemaJson([f(1, 'id', struct(f(20, 'v', 'long')), true)])))
  t.equal(kind[0]?.kind, 'kind-changed')
  const dropStruct = diffSchemas(from, schemaOf(schemaJson([f(1, 'id', 'long', true)], [1])))
  t.same(dropStruct.map(c => c.kind === 'field-dropped' ? c.path : c.kind), ['amount', 'address', 'tags', 'm'], 'only the top-most dropped field is listed')
  const dropFirst = diffSchemas(from, schemaOf(schemaJson([f(1, 'id', 'long', true), f(3, 'address', struct(f(5, 'city', 'string'))), f(6, 'tags', { type: 'list', 'element-id': 7, element: 'string', 'element-required': false }), f(8, 'm', { type: 'map', 'key-id': 9, key: 'string', 'value-id': 10, 'value-required': true, value: struct(f(11, 'zip', 'int')) })], [1])))
  t.same(dropFirst.map(c => [c.kind, c.kind === 'identifier-fields-changed' ? 0 : c.fieldId]), [['field-dropped', 2], ['field-dropped', 4]], 'a drop moves later siblings up without reordering them')
  const nested = diffSchemas(from, schemaOf(schemaJson([f(1, 'id', 'long', true), f(2, 'amount', 'decimal(10,2)'), f(3, 'address', struct(f(5, 'city', 'string'), f(4, 'zip', 'string'))), f(6, 'tags', { type: 'list', 'element-id': 7, element: 'string', 'element-required': false }), f(8, 'm', { type: 'map', 'key-id': 9, key: 'string', 'value-id': 10, 'value-required': true, value: struct(f(11, 'zip', 'int')) })], [1])))
  t.same(nested.map(c => c.kind === 'field-reordered' ? [c.fieldId, c.oldIndex, c.newIndex] : c.kind), [[5, 1, 0]], 'a swap inside a nested struct is one reorder')
  const defaults = diffSchemas(schemaOf(schemaJson([f(1, 'a', 'int', false, { 'initial-default': 1, 'write-default': 1 })])), schemaOf(schemaJson([f(1, 'a', 'int', false, { 'initial-default': 1, 'write-default': 2 })])))
  t.same(defaults.map(c => c.kind === 'default-changed' ? [c.which, c.from, c.to] : []), [['write-default', 1, 2]])
  t.match(summarizeChanges(defaults), /~ default {3}1 a: write-default 1 -> 2/)
})
