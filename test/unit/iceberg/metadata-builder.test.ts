/**
 * The one metadata builder on whole metadata (what the embedded catalog stores): versions share
 * what they did not change, a file round-trips through its reader and writer, 64-bit numbers keep
 * every digit, and a no-op commit builds nothing.
 */
import { LosslessNumber } from 'lossless-json'
import t from 'tap'
import { parseJsonText, writeJson } from '../../../src/iceberg/json-text.js'
import { TableMetadataBuilder } from '../../../src/iceberg/metadata-builder.js'
import { newTableMetadata } from '../../../src/iceberg/new-table.js'
import { parseWholeTableMetadata, tableMetadataChunks, tableMetadataText } from '../../../src/iceberg/table-metadata.js'
import type { WholeTableMetadata } from '../../../src/iceberg/types.js'

const BIG = '3055729675574597004'
const fields = [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'name', required: false, type: 'string' }
]

function created (properties: Record<string, string> = {}): WholeTableMetadata {
  const { metadata, issues } = newTableMetadata({ schema: { type: 'struct', fields }, location: 'file:///w/t', properties }, { uuid: 'u-1', now: 1000 })
  if (metadata === undefined) throw new Error(JSON.stringify(issues))
  return metadata
}

function commit (base: WholeTableMetadata, updates: unknown[], previousFile = 'file:///w/t/metadata/prev.json', now = 2000): WholeTableMetadata | undefined {
  const b = TableMetadataBuilder.from(base, { now })
  b.applyAll(updates)
  const built = b.build({ newUuid: () => 'fresh', previousFile })
  if (!built.ok) throw new Error(built.issues.map(i => i.message).join('; '))
  return built.metadata
}

t.test('writeJson keeps 64-bit numbers and never unquotes a string of the data', async t => {
  t.equal(writeJson({ id: new LosslessNumber(BIG), n: 1 }), `{"id":${BIG},"n":1}`)
  // A string holding the marker character and digits, beside a lossless number: the slow writer takes over.
  const tricky = { s: '\u0001123', id: new LosslessNumber(BIG) }
  t.equal(writeJson(tricky), `{"s":"\\u0001123","id":${BIG}}`)
  t.same(parseJsonText(writeJson(tricky)), { s: '\u0001123', id: new LosslessNumber(BIG) })
  t.equal(writeJson({ s: '\u0001' }), '{"s":"\\u0001"}')
})

t.test('a new version shares every part it did not change', async t => {
  const v0 = created()
  const v1 = commit(v0, [
    { action: 'add-snapshot', snapshot: { 'snapshot-id': new LosslessNumber(BIG), 'sequence-number': 1, 'timestamp-ms': 1500, 'manifest-list': 'm', summary: { operation: 'append' } } },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': new LosslessNumber(BIG) }
  ]) as WholeTableMetadata
  const v2 = commit(v1, [{ action: 'add-schema', schema: { type: 'struct', fields: [...fields, { id: 3, name: 'q', required: false, type: 'int' }] } }, { action: 'set-current-schema', 'schema-id': -1 }]) as WholeTableMetadata
  t.equal(v2.schemas[0], v1.schemas[0], 'the old schema is the same object')
  t.equal(v2.data.snapshots, v1.data.snapshots, 'untouched snapshots are the same list')
  t.equal(v2.data.snapshotLog, v1.data.snapshotLog)
  t.equal(v1.schemas, v0.schemas, 'a data commit shares the schema list')
  t.not(v2.schemas, v1.schemas)
  t.equal(v1.data.currentSnapshotId, BIG)
  t.equal(v1.data.lastUpdatedMs, '1500', 'last-updated-ms is the new snapshot\'s time')
  t.same(v2.data.metadataLog.map(e => e['metadata-file']), ['file:///w/t/metadata/prev.json', 'file:///w/t/metadata/prev.json'])
  t.equal(v0.schemas.length, 1, 'the base is never changed')

  const text = tableMetadataText(v2)
  t.ok(text.includes(`"current-snapshot-id":${BIG}`), 'written with every digit')
  t.ok(tableMetadataChunks(v2).length > 1, 'a schema is handed on as its own chunk')
  const reread = parseWholeTableMetadata(parseJsonText(text))
  t.same(reread.issues, [])
  t.equal(tableMetadataText(reread.metadata as WholeTableMetadata), text, 'the file round-trips byte for byte')

  t.equal(commit(v2, [{ action: 'set-properties', updates: {} }, { action: 'remove-snapshot-ref', 'ref-name': 'ghost' }, { action: 'add-schema', schema: { type: 'struct', fields } }]), undefined,
    'a commit that changes nothing builds no new version')
})

t.test('metadata-log keeps write.metadata.previous-versions-max files', async t => {
  let m = created({ 'write.metadata.previous-versions-max': '2' })
  for (let i = 0; i < 4; i++) m = commit(m, [{ action: 'set-properties', updates: { step: String(i) } }], `file:///w/t/metadata/${i}.json`, 3000 + i) as WholeTableMetadata
  t.same(m.data.metadataLog.map(e => e['metadata-file']), ['file:///w/t/metadata/2.json', 'file:///w/t/metadata/3.json'])
  t.same(m.data.metadataLog.map(e => e['timestamp-ms']), [3001, 3002], 'each entry dates the file it names')
})

t.test('an old v1 file is read as its legacy members say and written in the v1 shape', async t => {
  const v1 = {
    'format-version': 1,
    'table-uuid': 'u',
    location: 'file:///w/old',
    'last-updated-ms': 5,
    'last-column-id': 2,
    schema: { type: 'struct', fields },
    'partition-spec': [{ name: 'id_b', transform: 'bucket[4]', 'source-id': 1, 'field-id': 1000 }],
    properties: { a: 'b' },
    'current-snapshot-id': new LosslessNumber(BIG),
    snapshots: [{ 'snapshot-id': new LosslessNumber(BIG), 'timestamp-ms': 4, 'manifest-list': 'm' }],
    'x-vendor': { kept: true }
  }
  const { metadata, issues } = parseWholeTableMetadata(v1)
  t.same(issues, [])
  const m = metadata as WholeTableMetadata
  t.equal(m.refs.main, BIG, 'current-snapshot-id stands for main')
  t.same(Object.keys(m.data.refs), ['main'])
  const out = parseJsonText(tableMetadataText(m)) as Record<string, unknown>
  t.same(out.schema, out.schemas === undefined ? undefined : (out.schemas as unknown[])[0], 'v1 carries the current schema')
  t.same(out['partition-spec'], v1['partition-spec'])
  t.notOk('last-sequence-number' in out)
  t.same(out['x-vendor'], { kept: true }, 'an unknown member is kept')
  const next = commit(m, [{ action: 'set-properties', updates: { c: 'd' } }]) as WholeTableMetadata
  t.equal(next.data.lastUpdatedMs, '2000')
  t.same({ ...next.properties }, { a: 'b', c: 'd' })
})
