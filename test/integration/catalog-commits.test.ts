/**
 * The embedded catalog's commits against the spec: every requirement type, every table update
 * action, transactions (all or nothing), concurrent commits, 64-bit ids, stage-create, register,
 * purge and persistence across a restart. Real server on 127.0.0.1:0, over HTTP.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { isLosslessNumber, parse } from 'lossless-json'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { startEmbeddedCatalog, type EmbeddedCatalog, type EmbeddedCatalogOptions } from '../../src/dev-catalog/index.js'

interface Res { status: number, headers: Record<string, string | string[] | undefined>, text: string, json: any }

const BIG = '3055729675574597004'

async function start (t: Test, opts: EmbeddedCatalogOptions = {}): Promise<EmbeddedCatalog> {
  const catalog = await startEmbeddedCatalog({ memory: true, ...opts })
  t.teardown(() => catalog.close())
  return catalog
}

async function call (c: EmbeddedCatalog, method: string, path: string, body?: unknown): Promise<Res> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  const res = await request(c.url + path, { method: method as 'GET', body: payload, headers: { 'content-type': 'application/json' } })
  const text = await res.body.text()
  return { status: res.statusCode, headers: res.headers, text, json: text === '' ? undefined : JSON.parse(text) }
}

const schema = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' }
  ]
}

const TABLE = '/v1/namespaces/db/tables/t'

async function setup (t: Test, opts: EmbeddedCatalogOptions = {}, extra: object = {}): Promise<{ c: EmbeddedCatalog, created: Res }> {
  const c = await start(t, opts)
  t.equal((await call(c, 'POST', '/v1/namespaces', { namespace: ['db'] })).status, 200)
  const created = await call(c, 'POST', '/v1/namespaces/db/tables', { name: 't', schema, ...extra })
  t.equal(created.status, 200)
  return { c, created }
}

const commit = async (c: EmbeddedCatalog, updates: unknown[], requirements: unknown[] = [], path = TABLE): Promise<Res> =>
  await call(c, 'POST', path, { requirements, updates })

const load = async (c: EmbeddedCatalog, path = TABLE): Promise<any> => (await call(c, 'GET', path)).json

function snapshot (id: number | string, parent: number | null, seq: number, extra: object = {}): object {
  return { 'snapshot-id': id, 'parent-snapshot-id': parent, 'sequence-number': seq, 'timestamp-ms': 1700000000000 + seq, 'manifest-list': `file:///nowhere/snap-${id}.avro`, summary: { operation: 'append' }, ...extra }
}

function failsWith (t: Test, res: Res, status: number, type: string, message?: RegExp): void {
  t.equal(res.status, status, `status ${status}`)
  t.equal(res.json?.error?.code, status)
  t.equal(res.json?.error?.type, type)
  if (message) t.match(res.json.error.message, message)
}

t.test('each requirement type fails with 409 CommitFailedException and a Java-like message', async t => {
  const { c, created } = await setup(t)
  const uuid = created.json.metadata['table-uuid'] as string
  t.equal((await commit(c, [{ action: 'add-snapshot', snapshot: snapshot(10, null, 1) }, { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 10 }, { action: 'set-snapshot-ref', 'ref-name': 'tag1', type: 'tag', 'snapshot-id': 10 }])).status, 200)
  const before = (await load(c))['metadata-location']
  const cases: Array<[object, RegExp]> = [
    [{ type: 'assert-create' }, /^Requirement failed: table already exists$/],
    // Java's order: the table's uuid, then the one the client expected.
    [{ type: 'assert-table-uuid', uuid: '00000000-0000-0000-0000-000000000000' }, /^Requirement failed: UUID does not match: expected [0-9a-f-]{36} != 00000000-0000-0000-0000-000000000000$/],
    [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 9 }, /^Requirement failed: branch main has changed: expected id 9 != 10$/],
    [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }, /^Requirement failed: branch main was created concurrently$/],
    [{ type: 'assert-ref-snapshot-id', ref: 'tag1', 'snapshot-id': 11 }, /^Requirement failed: tag tag1 has changed/],
    [{ type: 'assert-ref-snapshot-id', ref: 'dev', 'snapshot-id': 10 }, /^Requirement failed: branch or tag dev is missing, expected 10$/],
    [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 1 }, /^Requirement failed: last assigned field id changed: expected id 1 != 2$/],
    [{ type: 'assert-current-schema-id', 'current-schema-id': 5 }, /^Requirement failed: current schema changed: expected id 5 != 0$/],
    [{ type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1000 }, /^Requirement failed: last assigned partition id changed: expected id 1000 != 999$/],
    [{ type: 'assert-default-spec-id', 'default-spec-id': 1 }, /^Requirement failed: default partition spec changed: expected id 1 != 0$/],
    [{ type: 'assert-default-sort-order-id', 'default-sort-order-id': 1 }, /^Requirement failed: default sort order changed: expected id 1 != 0$/]
  ]
  for (const [requirement, message] of cases) {
    const res = await commit(c, [{ action: 'set-properties', updates: { touched: 'yes' } }], [requirement])
    failsWith(t, res, 409, 'CommitFailedException', message)
  }
  const after = await load(c)
  t.equal(after['metadata-location'], before, 'no failed commit wrote metadata')
  t.notOk('touched' in after.metadata.properties)

  // The same requirements, holding, let the commit through (uuid case-insensitively, as Java).
  const ok = await commit(c, [{ action: 'set-properties', updates: { touched: 'yes' } }], [
    { type: 'assert-table-uuid', uuid: uuid.toUpperCase() },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 10 },
    { type: 'assert-ref-snapshot-id', ref: 'dev', 'snapshot-id': null },
    { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 2 },
    { type: 'assert-current-schema-id', 'current-schema-id': 0 },
    { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 999 },
    { type: 'assert-default-spec-id', 'default-spec-id': 0 },
    { type: 'assert-default-sort-order-id', 'default-sort-order-id': 0 }
  ])
  t.equal(ok.status, 200)
  t.equal(ok.json.metadata.properties.touched, 'yes')

  failsWith(t, await commit(c, [], [{ type: 'assert-something-else' }]), 400, 'BadRequestException', /unknown requirement type: assert-something-else/)
  failsWith(t, await commit(c, [], [{ type: 'assert-current-schema-id' }]), 400, 'BadRequestException')
  // Malformed beats a failing requirement: the request is parsed first, as the Java server does.
  failsWith(t, await commit(c, [{ action: 'no-such-action' }], [{ type: 'assert-current-schema-id', 'current-schema-id': 9 }]), 400, 'BadRequestException')
  failsWith(t, await commit(c, [], [], '/v1/namespaces/db/tables/missing'), 404, 'NoSuchTableException', /^Table does not exist: db\.missing$/)
})

t.test('add-schema and set-current-schema behave as the Java reference server', async t => {
  const { c } = await setup(t)
  const withAge = { type: 'struct', 'schema-id': 42, fields: [...schema.fields, { id: 3, name: 'age', required: false, type: 'int' }] }
  // The client's schema-id (42) and last-column-id (1) are not trusted.
  const r1 = await commit(c, [{ action: 'add-schema', schema: withAge, 'last-column-id': 1 }, { action: 'set-current-schema', 'schema-id': -1 }])
  t.equal(r1.status, 200)
  let md = r1.json.metadata
  t.same(md.schemas.map((s: any) => s['schema-id']), [0, 1])
  t.equal(md['current-schema-id'], 1)
  t.equal(md['last-column-id'], 3)

  // Dropping the highest column: last-column-id never goes down.
  const r2 = await commit(c, [{ action: 'add-schema', schema: { type: 'struct', fields: [schema.fields[0]] } }, { action: 'set-current-schema', 'schema-id': -1 }])
  md = r2.json.metadata
  t.equal(md['current-schema-id'], 2)
  t.equal(md['last-column-id'], 3)

  // An add equal to a pre-existing schema reuses its id and is not "last added": -1 is a 400.
  const same = await commit(c, [{ action: 'add-schema', schema: { ...schema, 'schema-id': 99 } }, { action: 'set-current-schema', 'schema-id': -1 }])
  failsWith(t, same, 400, 'ValidationException', /^Cannot set last added schema: no schema has been added$/)
  const reuse = await commit(c, [{ action: 'add-schema', schema }])
  t.equal(reuse.status, 200)
  t.equal(reuse.json['metadata-location'], r2.json['metadata-location'], 'adding an existing schema changes nothing')
  t.equal(reuse.json.metadata.schemas.length, 3)

  // A rollback to an older schema id is accepted (that is the gate's job to judge).
  const back = await commit(c, [{ action: 'set-current-schema', 'schema-id': 0 }])
  t.equal(back.json.metadata['current-schema-id'], 0)
  failsWith(t, await commit(c, [{ action: 'set-current-schema', 'schema-id': 7 }]), 400, 'IllegalArgumentException', /unknown schema: 7/)
  failsWith(t, await commit(c, [{ action: 'set-current-schema', 'schema-id': -1 }]), 400, 'ValidationException')

  // Same fields in another order, or another doc, is a different schema; identifier ids count too.
  const reordered = await commit(c, [{ action: 'add-schema', schema: { type: 'struct', fields: [schema.fields[1], schema.fields[0]] } }])
  t.equal(reordered.json.metadata.schemas.length, 4)
  const ident = await commit(c, [{ action: 'add-schema', schema: { ...schema, 'identifier-field-ids': [1] } }])
  t.equal(ident.json.metadata.schemas.length, 5)
  t.same(ident.json.metadata.schemas[4]['identifier-field-ids'], [1])
  // Evolution rules are the gate's: a type change under the same id is accepted here.
  const retyped = await commit(c, [{ action: 'add-schema', schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: 'string' }] } }, { action: 'set-current-schema', 'schema-id': -1 }])
  t.equal(retyped.status, 200)
  failsWith(t, await commit(c, [{ action: 'add-schema', schema: { type: 'struct', fields: [{ id: 1, name: 'x', required: 'yes', type: 'long' }] } }]), 400, 'BadRequestException')
  failsWith(t, await commit(c, [{ action: 'add-schema' }]), 400, 'BadRequestException', /schema is missing/)
  failsWith(t, await commit(c, [{ action: 'add-schema', schema: 'x' }]), 400, 'BadRequestException', /schema must be an object/)
})

t.test('spec, sort order, uuid, format version, location and property updates', async t => {
  const { c, created } = await setup(t)
  const uuid = created.json.metadata['table-uuid']
  const spec = await commit(c, [
    { action: 'add-spec', spec: { 'spec-id': 5, fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'bucket[16]' }] } },
    { action: 'set-default-spec', 'spec-id': -1 },
    { action: 'add-sort-order', 'sort-order': { 'order-id': 9, fields: [{ 'source-id': 2, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] } },
    { action: 'set-default-sort-order', 'sort-order-id': -1 }
  ])
  t.equal(spec.status, 200)
  let md = spec.json.metadata
  t.same(md['partition-specs'][1], { 'spec-id': 1, fields: [{ name: 'id_bucket', transform: 'bucket[16]', 'source-id': 1, 'field-id': 1000 }] })
  t.equal(md['default-spec-id'], 1)
  t.equal(md['last-partition-id'], 1000)
  t.same(md['sort-orders'][1], { 'order-id': 1, fields: [{ transform: 'identity', 'source-id': 2, direction: 'asc', 'null-order': 'nulls-first' }] })
  t.equal(md['default-sort-order-id'], 1)
  failsWith(t, await commit(c, [{ action: 'set-default-spec', 'spec-id': -1 }]), 400, 'ValidationException')
  failsWith(t, await commit(c, [{ action: 'set-default-spec', 'spec-id': 8 }]), 400, 'IllegalArgumentException')
  failsWith(t, await commit(c, [{ action: 'set-default-sort-order', 'sort-order-id': -1 }]), 400, 'ValidationException')
  failsWith(t, await commit(c, [{ action: 'set-default-sort-order', 'sort-order-id': 8 }]), 400, 'IllegalArgumentException')
  const back = await commit(c, [{ action: 'set-default-spec', 'spec-id': 0 }, { action: 'remove-partition-specs', 'spec-ids': [1] }])
  t.same(back.json.metadata['partition-specs'].map((s: any) => s['spec-id']), [0])
  failsWith(t, await commit(c, [{ action: 'remove-partition-specs', 'spec-ids': [0] }]), 400, 'ValidationException', /default partition spec/)
  // Partition field ids only grow (last-partition-id), and v2 reuses the id of a field that has
  // the same source and transform in a spec still present.
  const again = await commit(c, [{ action: 'add-spec', spec: { fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'bucket[16]' }] } }])
  t.equal(again.json.metadata['partition-specs'][1].fields[0]['field-id'], 1001)
  const wider = await commit(c, [{ action: 'add-spec', spec: { fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'bucket[16]' }, { 'source-id': 2, name: 'name', transform: 'identity' }] } }])
  t.same(wider.json.metadata['partition-specs'][2].fields.map((f: any) => f['field-id']), [1001, 1002])
  t.equal(wider.json.metadata['last-partition-id'], 1002)
  const sameSpec = await commit(c, [{ action: 'add-spec', spec: { fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'bucket[16]' }] } }])
  t.equal(sameSpec.json['metadata-location'], wider.json['metadata-location'], 'an equal spec is reused, nothing changes')

  const addSchema = await commit(c, [{ action: 'add-schema', schema: { type: 'struct', fields: [schema.fields[0]] } }])
  const removed = await commit(c, [{ action: 'remove-schemas', 'schema-ids': [1] }])
  t.same(removed.json.metadata.schemas.map((s: any) => s['schema-id']), [0])
  t.equal(addSchema.json.metadata.schemas.length, 2)
  failsWith(t, await commit(c, [{ action: 'remove-schemas', 'schema-ids': [0] }]), 400, 'ValidationException', /current schema/)

  const same = await commit(c, [{ action: 'assign-uuid', uuid }])
  t.equal(same.json['metadata-location'], removed.json['metadata-location'], 'assigning the same uuid changes nothing')
  // Java's TableMetadata.Builder (and iceberg-rust's) sets another uuid as given; assert-table-uuid guards identity.
  const reassigned = await commit(c, [{ action: 'assign-uuid', uuid: '11111111-1111-1111-1111-111111111111' }])
  t.equal(reassigned.json.metadata['table-uuid'], '11111111-1111-1111-1111-111111111111')

  md = (await commit(c, [{ action: 'set-location', location: 'file:///elsewhere/t' }])).json.metadata
  t.equal(md.location, 'file:///elsewhere/t')

  md = (await commit(c, [{ action: 'set-properties', updates: { a: '1', b: '2' } }, { action: 'set-properties', updated: { c: '3' } }])).json.metadata
  t.same(md.properties, { 'write.parquet.compression-codec': 'zstd', a: '1', b: '2', c: '3' }, 'legacy `updated` is read too (beside the codec every new table gets)')
  md = (await commit(c, [{ action: 'remove-properties', removals: ['a'] }, { action: 'remove-properties', removed: ['b', 'zz'] }])).json.metadata
  t.same(md.properties, { 'write.parquet.compression-codec': 'zstd', c: '3' }, 'legacy `removed` is read too')
  failsWith(t, await commit(c, [{ action: 'set-properties', updates: { x: 1 } }]), 400, 'BadRequestException')

  const v3 = await commit(c, [{ action: 'upgrade-format-version', 'format-version': 3 }])
  t.equal(v3.json.metadata['format-version'], 3)
  t.equal(v3.json.metadata['next-row-id'], 0)
  failsWith(t, await commit(c, [{ action: 'upgrade-format-version', 'format-version': 2 }]), 400, 'IllegalArgumentException', /Cannot downgrade v3 table to v2/)
  failsWith(t, await commit(c, [{ action: 'upgrade-format-version', 'format-version': 4 }]), 400, 'IllegalArgumentException', /unsupported format version/)

  const enc = await commit(c, [{ action: 'add-encryption-key', 'encryption-key': { 'key-id': 'k1', 'encrypted-key-metadata': 'AAAA' } }])
  t.same(enc.json.metadata['encryption-keys'], [{ 'key-id': 'k1', 'encrypted-key-metadata': 'AAAA' }])
  const noEnc = await commit(c, [{ action: 'remove-encryption-key', 'key-id': 'k1' }])
  t.same(noEnc.json.metadata['encryption-keys'], [])

  failsWith(t, await commit(c, [{ action: 'frobnicate' }]), 400, 'BadRequestException', /unknown update action: frobnicate/)
  failsWith(t, await commit(c, [{ action: 'add-view-version', 'view-version': {} }]), 400, 'BadRequestException')
  failsWith(t, await commit(c, [{ nope: true }]), 400, 'BadRequestException')
  failsWith(t, await call(c, 'POST', TABLE, { requirements: {}, updates: [] }), 400, 'BadRequestException')
  // Java reads actions case-insensitively.
  t.equal((await commit(c, [{ action: 'SET-PROPERTIES', updates: { up: 'per' } }])).json.metadata.properties.up, 'per')
})

t.test('snapshots, refs, statistics; sequence numbers, snapshot-log and metadata-log', async t => {
  const { c, created } = await setup(t)
  const r1 = await commit(c, [{ action: 'add-snapshot', snapshot: snapshot(1, null, 1) }, { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 1 }])
  let md = r1.json.metadata
  t.equal(md['current-snapshot-id'], 1)
  t.equal(md['last-sequence-number'], 1)
  t.equal(md['last-updated-ms'], 1700000000001, 'last-updated-ms is the new snapshot time')
  t.same(md['snapshot-log'], [{ 'timestamp-ms': 1700000000001, 'snapshot-id': 1 }])
  t.same(md.refs, { main: { 'snapshot-id': 1, type: 'branch' } })
  t.same(md['metadata-log'], [{ 'timestamp-ms': created.json.metadata['last-updated-ms'], 'metadata-file': created.json['metadata-location'] }])

  const r2 = await commit(c, [
    { action: 'add-snapshot', snapshot: snapshot(2, 1, 2) },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 2 },
    { action: 'set-snapshot-ref', 'ref-name': 'audit', type: 'branch', 'snapshot-id': 1, 'min-snapshots-to-keep': 3, 'max-ref-age-ms': 1000 },
    { action: 'set-statistics', statistics: { 'snapshot-id': 1, 'statistics-path': 'file:///s/1.puffin', 'file-size-in-bytes': 10, 'file-footer-size-in-bytes': 2, 'blob-metadata': [] } },
    { action: 'set-partition-statistics', 'partition-statistics': { 'snapshot-id': 2, 'statistics-path': 'file:///s/2.parquet', 'file-size-in-bytes': 5 } }
  ])
  md = r2.json.metadata
  t.equal(md['current-snapshot-id'], 2)
  t.equal(md.snapshots.length, 2)
  t.same(md.refs.audit, { 'snapshot-id': 1, type: 'branch', 'min-snapshots-to-keep': 3, 'max-ref-age-ms': 1000 })
  t.same(md['snapshot-log'].map((e: any) => e['snapshot-id']), [1, 2])
  t.equal(md.statistics.length, 1)
  t.equal(md['partition-statistics'].length, 1)
  t.equal(md['metadata-log'].length, 2)
  t.equal(md['metadata-log'][1]['metadata-file'], r1.json['metadata-location'])

  failsWith(t, await commit(c, [{ action: 'add-snapshot', snapshot: snapshot(2, 1, 3) }]), 400, 'ValidationException', /Snapshot already exists for id: 2/)
  failsWith(t, await commit(c, [{ action: 'add-snapshot', snapshot: snapshot(3, 2, 2) }]), 409, 'CommitFailedException', /older than last sequence number 2/)
  failsWith(t, await commit(c, [{ action: 'set-snapshot-ref', 'ref-name': 'x', type: 'branch', 'snapshot-id': 77 }]), 400, 'ValidationException', /unknown snapshot: 77/)
  failsWith(t, await commit(c, [{ action: 'set-snapshot-ref', 'ref-name': 'x', type: 'tag', 'snapshot-id': 1, 'min-snapshots-to-keep': 1 }]), 400, 'IllegalArgumentException')
  failsWith(t, await commit(c, [{ action: 'set-snapshot-ref', 'ref-name': 'x', type: 'leaf', 'snapshot-id': 1 }]), 400, 'BadRequestException')

  md = (await commit(c, [{ action: 'remove-statistics', 'snapshot-id': 1 }, { action: 'remove-partition-statistics', 'snapshot-id': 2 }])).json.metadata
  t.same([md.statistics, md['partition-statistics']], [[], []])

  md = (await commit(c, [{ action: 'remove-snapshot-ref', 'ref-name': 'audit' }])).json.metadata
  t.same(Object.keys(md.refs), ['main'])
  // Removing a snapshot removes the refs that point at it and the log before it.
  md = (await commit(c, [{ action: 'set-snapshot-ref', 'ref-name': 'old', type: 'tag', 'snapshot-id': 1 }, { action: 'remove-snapshots', 'snapshot-ids': [1] }])).json.metadata
  t.same(md.snapshots.map((s: any) => s['snapshot-id']), [2])
  t.same(Object.keys(md.refs), ['main'])
  t.same(md['snapshot-log'].map((e: any) => e['snapshot-id']), [2])
  md = (await commit(c, [{ action: 'remove-snapshot-ref', 'ref-name': 'main' }])).json.metadata
  t.equal(md['current-snapshot-id'], -1, 'no main branch: no current snapshot')

  // A commit that changes nothing writes no metadata file.
  const before = (await load(c))['metadata-location']
  const noop = await commit(c, [{ action: 'set-properties', updates: {} }, { action: 'remove-snapshot-ref', 'ref-name': 'ghost' }])
  t.equal(noop.status, 200)
  t.equal(noop.json['metadata-location'], before)
  t.equal((await load(c))['metadata-location'], before, 'loading an unchanged table gives the same metadata-location')
})

t.test('v3 snapshots need first-row-id and advance next-row-id', async t => {
  const { c } = await setup(t, {}, { properties: { 'format-version': '3' } })
  const r = await commit(c, [{ action: 'add-snapshot', snapshot: snapshot(1, null, 1, { 'first-row-id': 0, 'added-rows': 25 }) }])
  t.equal(r.json.metadata['next-row-id'], 25)
  failsWith(t, await commit(c, [{ action: 'add-snapshot', snapshot: snapshot(2, 1, 2) }]), 400, 'IllegalArgumentException', /first-row-id is null/)
  failsWith(t, await commit(c, [{ action: 'add-snapshot', snapshot: snapshot(2, 1, 2, { 'first-row-id': 10, 'added-rows': 1 }) }]), 409, 'CommitFailedException', /behind table next-row-id/)
})

t.test('a 64-bit snapshot id round-trips exactly through add-snapshot, set-snapshot-ref and load', async t => {
  const { c } = await setup(t)
  const body = `{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}],"updates":[
    {"action":"add-snapshot","snapshot":{"snapshot-id":${BIG},"sequence-number":1,"timestamp-ms":1700000000000,"manifest-list":"file:///m.avro","summary":{"operation":"append"}}},
    {"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":${BIG}}]}`
  const res = await call(c, 'POST', TABLE, body)
  t.equal(res.status, 200)
  t.ok(res.text.includes(`"current-snapshot-id":${BIG}`), 'commit response keeps every digit')
  const loaded = await request(`${c.url}${TABLE}`)
  const text = await loaded.body.text()
  t.notOk(text.includes('3055729675574597000'), 'never rounded')
  const md = (parse(text) as any).metadata
  t.ok(isLosslessNumber(md['current-snapshot-id']))
  t.equal(String(md['current-snapshot-id']), BIG)
  t.equal(String(md.refs.main['snapshot-id']), BIG)
  t.equal(String(md.snapshots[0]['snapshot-id']), BIG)
  t.equal(String(md['snapshot-log'][0]['snapshot-id']), BIG)
  // Requirements compare exact values: an id one off (same double!) is a different snapshot.
  t.equal(Number('3055729675574597005'), Number(BIG), 'both ids round to the same double')
  const exact = await call(c, 'POST', TABLE, '{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":3055729675574597005}],"updates":[]}')
  failsWith(t, exact, 409, 'CommitFailedException', new RegExp(`expected id 3055729675574597005 != ${BIG}`))
  const match = await call(c, 'POST', TABLE, `{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":${BIG}}],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`)
  t.equal(match.status, 200)
})

t.test('transactions/commit is atomic across tables: all or nothing', async t => {
  const { c } = await setup(t)
  t.equal((await call(c, 'POST', '/v1/namespaces/db/tables', { name: 'u', schema })).status, 200)
  const before = { t: (await load(c))['metadata-location'], u: (await load(c, '/v1/namespaces/db/tables/u'))['metadata-location'] }
  const change = (name: string, updates: unknown[], requirements: unknown[] = []): object => ({ identifier: { namespace: ['db'], name }, requirements, updates })

  const failing = await call(c, 'POST', '/v1/transactions/commit', {
    'table-changes': [
      change('t', [{ action: 'set-properties', updates: { tx: '1' } }]),
      change('u', [{ action: 'set-properties', updates: { tx: '1' } }], [{ type: 'assert-current-schema-id', 'current-schema-id': 9 }])
    ]
  })
  failsWith(t, failing, 409, 'CommitFailedException')
  t.equal((await load(c))['metadata-location'], before.t, 'first table untouched when the second fails')
  t.equal((await load(c, '/v1/namespaces/db/tables/u'))['metadata-location'], before.u)

  const badUpdate = await call(c, 'POST', '/v1/transactions/commit', { 'table-changes': [change('t', [{ action: 'set-properties', updates: { tx: '1' } }]), change('u', [{ action: 'set-current-schema', 'schema-id': 5 }])] })
  failsWith(t, badUpdate, 400, 'IllegalArgumentException')
  t.equal((await load(c))['metadata-location'], before.t)
  failsWith(t, await call(c, 'POST', '/v1/transactions/commit', { 'table-changes': [{ requirements: [], updates: [] }] }), 400, 'BadRequestException', /identifier is required/)
  failsWith(t, await call(c, 'POST', '/v1/transactions/commit', { 'table-changes': [] }), 400, 'BadRequestException')
  failsWith(t, await call(c, 'POST', '/v1/transactions/commit', { 'table-changes': [change('nope', [])] }), 404, 'NoSuchTableException')

  const ok = await call(c, 'POST', '/v1/transactions/commit', {
    'table-changes': [
      change('t', [{ action: 'set-properties', updates: { tx: '1' } }]),
      change('u', [{ action: 'set-properties', updates: { tx: '2' } }]),
      change('t', [{ action: 'set-properties', updates: { again: 'yes' } }], [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }])
    ]
  })
  t.equal(ok.status, 204)
  t.equal(ok.text, '')
  const tm = await load(c)
  t.same(tm.metadata.properties, { 'write.parquet.compression-codec': 'zstd', tx: '1', again: 'yes' }, 'two changes to one table apply in order')
  t.same(tm.metadata['metadata-log'].map((e: any) => e['metadata-file']), [before.t], 'one new file for the table, one log entry')
  t.same((await load(c, '/v1/namespaces/db/tables/u')).metadata.properties, { 'write.parquet.compression-codec': 'zstd', tx: '2' })
})

t.test('concurrent commits to one table are serialized and lose no update', async t => {
  const { c, created } = await setup(t)
  const results = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
    await commit(c, [{ action: 'set-properties', updates: { [`k${i}`]: String(i) } }])))
  t.ok(results.every(r => r.status === 200), 'all 20 commits succeed')
  const md = (await load(c)).metadata
  t.same(Object.keys(md.properties).filter(k => k.startsWith('k')).sort(), Array.from({ length: 20 }, (_, i) => `k${i}`).sort(), 'all 20 properties present')
  t.equal(md['metadata-log'].length, 20, 'every commit wrote its own metadata file')
  t.equal(md['metadata-log'][0]['metadata-file'], created.json['metadata-location'])
  t.equal(new Set(results.map(r => r.json['metadata-location'])).size, 20)

  // With the Java client's requirement, racing commits conflict instead of overwriting.
  const racing = await Promise.all(Array.from({ length: 5 }, async (_, i) =>
    await commit(c, [{ action: 'add-schema', schema: { type: 'struct', fields: [...schema.fields, { id: 3 + i, name: `c${i}`, required: false, type: 'int' }] } }, { action: 'set-current-schema', 'schema-id': -1 }],
      [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }])))
  t.equal(racing.filter(r => r.status === 200).length, 1, 'exactly one wins')
  t.equal(racing.filter(r => r.status === 409).length, 4, 'the others get 409 CommitFailedException')

  // Transactions over the same tables in opposite orders do not deadlock.
  t.equal((await call(c, 'POST', '/v1/namespaces/db/tables', { name: 'u', schema })).status, 200)
  const tx = (a: string, b: string, v: string): Promise<Res> => call(c, 'POST', '/v1/transactions/commit', {
    'table-changes': [a, b].map(name => ({ identifier: { namespace: ['db'], name }, requirements: [], updates: [{ action: 'set-properties', updates: { [`tx${v}`]: v } }] }))
  })
  const txs = await Promise.all(Array.from({ length: 10 }, async (_, i) => await (i % 2 === 0 ? tx('t', 'u', String(i)) : tx('u', 't', String(i)))))
  t.ok(txs.every(r => r.status === 204))
  t.equal(Object.keys((await load(c, '/v1/namespaces/db/tables/u')).metadata.properties).filter(k => k.startsWith('tx')).length, 10)
})

t.test('stage-create stores nothing until the assert-create commit', async t => {
  const c = await start(t)
  t.equal((await call(c, 'POST', '/v1/namespaces', { namespace: ['db'] })).status, 200)
  const staged = await call(c, 'POST', '/v1/namespaces/db/tables', { name: 's', schema, 'stage-create': true, properties: { p: '1' } })
  t.equal(staged.status, 200)
  t.equal(staged.json['metadata-location'], null)
  const md = staged.json.metadata
  t.equal((await call(c, 'HEAD', '/v1/namespaces/db/tables/s')).status, 404, 'a staged table does not exist yet')
  t.same((await call(c, 'GET', '/v1/namespaces/db/tables')).json.identifiers, [])

  // What the Java client sends for a create transaction (RESTSessionCatalog createChanges).
  const createChanges = [
    { action: 'assign-uuid', uuid: md['table-uuid'] },
    { action: 'upgrade-format-version', 'format-version': 2 },
    { action: 'add-schema', schema: md.schemas[0], 'last-column-id': md['last-column-id'] },
    { action: 'set-current-schema', 'schema-id': -1 },
    { action: 'add-spec', spec: md['partition-specs'][0] },
    { action: 'set-default-spec', 'spec-id': -1 },
    { action: 'add-sort-order', 'sort-order': md['sort-orders'][0] },
    { action: 'set-default-sort-order', 'sort-order-id': -1 },
    { action: 'set-location', location: md.location },
    { action: 'set-properties', updates: md.properties },
    { action: 'add-snapshot', snapshot: snapshot(1, null, 1) },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 1 }
  ]
  failsWith(t, await commit(c, createChanges, [{ type: 'assert-create' }, { type: 'assert-current-schema-id', 'current-schema-id': 0 }], '/v1/namespaces/db/tables/s'), 400, 'BadRequestException', /assert-create must be the only requirement/)
  failsWith(t, await commit(c, createChanges, [], '/v1/namespaces/db/tables/s'), 404, 'NoSuchTableException')
  const done = await commit(c, createChanges, [{ type: 'assert-create' }], '/v1/namespaces/db/tables/s')
  t.equal(done.status, 200)
  t.match(done.json['metadata-location'], /\/db\/s\/metadata\/00000-.*\.metadata\.json$/)
  const created = done.json.metadata
  t.equal(created['table-uuid'], md['table-uuid'])
  t.same(created.schemas, md.schemas)
  t.equal(created['current-snapshot-id'], 1)
  t.same(created.properties, { 'write.parquet.compression-codec': 'zstd', 'created-at': staged.json.metadata.properties['created-at'], p: '1' }, 'the staged properties, with the time it was staged')
  t.match(staged.json.metadata.properties['created-at'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'a staged table carries created-at (CatalogHandlers.stageTableCreate)')
  t.same(created['metadata-log'], [])
  t.equal((await load(c, '/v1/namespaces/db/tables/s'))['metadata-location'], done.json['metadata-location'])
  failsWith(t, await commit(c, createChanges, [{ type: 'assert-create' }], '/v1/namespaces/db/tables/s'), 409, 'CommitFailedException', /table already exists/)
  failsWith(t, await call(c, 'POST', '/v1/namespaces/db/tables', { name: 's', schema, 'stage-create': true }), 409, 'AlreadyExistsException')
  failsWith(t, await commit(c, createChanges, [{ type: 'assert-create' }], '/v1/namespaces/nope/tables/s'), 404, 'NoSuchNamespaceException')
  // Creating through the commit route without a schema is a bad request, not a broken table.
  failsWith(t, await commit(c, [{ action: 'set-properties', updates: {} }], [{ type: 'assert-create' }], '/v1/namespaces/db/tables/empty'), 400, 'ValidationException')
})

t.test('a warehouse folder survives a restart; files are laid out as the spec describes', async t => {
  const warehouse = await mkdtemp(path.join(os.tmpdir(), 'iceguard-catalog-test-'))
  t.teardown(() => rm(warehouse, { recursive: true, force: true }))
  const first = await startEmbeddedCatalog({ warehouse })
  t.equal(first.warehouse, warehouse)
  await call(first, 'POST', '/v1/namespaces', { namespace: ['db'], properties: { owner: 'me' } })
  await call(first, 'POST', '/v1/namespaces', { namespace: ['db', 'sub'] })
  const created = await call(first, 'POST', '/v1/namespaces/db%1Fsub/tables', { name: 'my t', schema })
  t.equal(created.status, 200)
  const committed = await call(first, 'POST', '/v1/namespaces/db%1Fsub/tables/my+t', `{"requirements":[],"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":${BIG},"sequence-number":1,"timestamp-ms":1,"manifest-list":"file:///m.avro","summary":{"operation":"append"}}},{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":${BIG}}]}`)
  t.equal(committed.status, 200)
  const location = committed.text.match(/"metadata-location":"([^"]+)"/)?.[1] as string
  t.equal(location, `file://${warehouse}/db/sub/my t/metadata/${path.basename(location)}`)
  t.match(path.basename(location), /^00001-[0-9a-f-]{36}\.metadata\.json$/)
  const files = readdirSync(path.join(warehouse, 'db', 'sub', 'my t', 'metadata')).sort()
  t.equal(files.length, 2)
  const onDisk = readFileSync(location.slice('file://'.length), 'utf8')
  t.ok(onDisk.includes(`"current-snapshot-id":${BIG}`), 'the file keeps the 64-bit id exactly')
  t.same(readdirSync(warehouse).filter(f => f.endsWith('.tmp')), [], 'no temp files left behind')
  await first.close()

  const second = await startEmbeddedCatalog({ warehouse })
  t.teardown(() => second.close())
  t.same((await call(second, 'GET', '/v1/namespaces/db')).json.properties, { owner: 'me' })
  t.same((await call(second, 'GET', '/v1/namespaces?parent=db')).json.namespaces, [['db', 'sub']])
  const reloaded = await request(`${second.url}/v1/namespaces/db%1Fsub/tables/my%20t`)
  const text = await reloaded.body.text()
  t.equal(reloaded.statusCode, 200)
  t.equal(text.match(/"metadata-location":"([^"]+)"/)?.[1], location, 'same current metadata after restart')
  t.ok(text.includes(`"current-snapshot-id":${BIG}`))
  const next = await call(second, 'POST', '/v1/namespaces/db%1Fsub/tables/my+t', { requirements: [], updates: [{ action: 'set-properties', updates: { after: 'restart' } }] })
  t.match(path.basename(next.json['metadata-location']), /^00002-/)
  t.equal(next.json.metadata['metadata-log'].length, 2)

  // register: a metadata file by path and by file:// URI.
  const regPath = await call(second, 'POST', '/v1/namespaces/db/register', { name: 'copy', 'metadata-location': location.slice('file://'.length) })
  t.equal(regPath.status, 200)
  t.equal(regPath.json['metadata-location'], location.slice('file://'.length))
  t.equal(String(regPath.json.metadata['table-uuid']), created.json.metadata['table-uuid'])
  failsWith(t, await call(second, 'POST', '/v1/namespaces/db/register', { name: 'copy', 'metadata-location': location }), 409, 'AlreadyExistsException')
  const regUri = await call(second, 'POST', '/v1/namespaces/db/register', { name: 'copy', 'metadata-location': location, overwrite: true })
  t.equal(regUri.status, 200)
  t.equal((await load(second, '/v1/namespaces/db/tables/copy'))['metadata-location'], location)
  failsWith(t, await call(second, 'POST', '/v1/namespaces/db/register', { name: 'x', 'metadata-location': `file://${warehouse}/missing.metadata.json` }), 404, 'NotFoundException')
  const notMetadata = path.join(warehouse, 'plain.json')
  await writeFile(notMetadata, '{"hello":"world"}')
  failsWith(t, await call(second, 'POST', '/v1/namespaces/db/register', { name: 'x', 'metadata-location': notMetadata }), 400, 'BadRequestException')

  // A location outside the warehouse never makes the catalog write there.
  t.equal((await call(second, 'POST', '/v1/namespaces/db/tables', { name: 'away', schema })).status, 200)
  const outside = path.join(os.tmpdir(), `iceguard-outside-${process.pid}-${Date.now()}`)
  const moved = await commit(second, [{ action: 'set-location', location: `file://${outside}` }], [], '/v1/namespaces/db/tables/away')
  t.equal(moved.json.metadata.location, `file://${outside}`)
  t.match(moved.json['metadata-location'], new RegExp(`^file://${warehouse}/db/away/metadata/00001-`))
  t.notOk(existsSync(outside), 'nothing written outside the warehouse')
  t.equal((await call(second, 'DELETE', '/v1/namespaces/db/tables/away?purgeRequested=true')).status, 204)
  t.notOk(existsSync(moved.json['metadata-location'].slice('file://'.length)), 'purge removed its metadata files')

  // drop without purge keeps files; with purgeRequested they go.
  t.equal((await call(second, 'DELETE', '/v1/namespaces/db/tables/copy')).status, 204)
  t.ok(existsSync(location.slice('file://'.length)), 'drop without purge keeps the files')
  t.equal((await call(second, 'DELETE', '/v1/namespaces/db%1Fsub/tables/my+t?purgeRequested=true')).status, 204)
  t.notOk(existsSync(path.join(warehouse, 'db', 'sub', 'my t')), 'purge removed the table folder')
  t.ok(existsSync(warehouse), 'the warehouse itself stays')
  t.equal((await call(second, 'HEAD', '/v1/namespaces/db%1Fsub/tables/my+t')).status, 404)
})

t.test('memory mode writes nothing to disk', async t => {
  const warehouse = await mkdtemp(path.join(os.tmpdir(), 'iceguard-catalog-mem-'))
  t.teardown(() => rm(warehouse, { recursive: true, force: true }))
  const c = await start(t, { memory: true, warehouse })
  t.equal(c.warehouse, undefined)
  await call(c, 'POST', '/v1/namespaces', { namespace: ['db'] })
  const created = await call(c, 'POST', '/v1/namespaces/db/tables', { name: 't', schema })
  t.match(created.json['metadata-location'], new RegExp(`^file://${warehouse}/db/t/metadata/`))
  t.same(readdirSync(warehouse), [])
})

t.test('in memory, a table keeps only the metadata files its metadata-log names', async t => {
  const { c } = await setup(t, {}, { properties: { 'write.metadata.previous-versions-max': '2' } })
  const locations: string[] = [(await load(c))['metadata-location']]
  for (let i = 0; i < 4; i++) {
    const res = await commit(c, [{ action: 'set-properties', updates: { step: String(i) } }])
    t.equal(res.status, 200)
    locations.push(res.json['metadata-location'])
  }
  const current = await call(c, 'GET', TABLE)
  t.equal(current.json['metadata-location'], locations[4])
  t.same(current.json.metadata['metadata-log'].map((e: { 'metadata-file': string }) => e['metadata-file']), locations.slice(2, 4),
    'the log holds the last two previous files')
  // A file still in the log can be read (registered under another name); one that left it is gone.
  const kept = await call(c, 'POST', '/v1/namespaces/db/register', { name: 'kept', 'metadata-location': locations[3] })
  t.equal(kept.status, 200, 'a file in the log is still there')
  const dropped = await call(c, 'POST', '/v1/namespaces/db/register', { name: 'dropped', 'metadata-location': locations[0] })
  t.equal(dropped.status, 404, 'a file that left the log was freed')
})
