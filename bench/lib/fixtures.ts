/**
 * Deterministic Iceberg REST payloads for the benchmark: the tables the stub serves and the
 * commit bodies the load generator sends. The same options always give the same bytes, so a
 * forwarded response can be compared with the stub's byte for byte.
 *
 * Snapshot ids are real 63-bit longs (beyond 2^53), as Iceberg writers produce them, so a proxy
 * that re-encodes through `JSON.parse` would change them and fail the byte comparison.
 */
import { createHash } from 'node:crypto'
import { stringify } from 'lossless-json'

const EPOCH_MS = 1_764_000_000_000
const PRIMITIVES = ['long', 'string', 'int', 'double', 'boolean', 'date', 'timestamptz', 'decimal(18,4)', 'binary', 'float']

type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

/** A stable UUID-shaped string derived from `seed`. */
export function stableUuid (seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** The i-th snapshot id of a table: a long above 2^53, like 3055729675574597004. */
export function snapshotId (table: string, i: number): bigint {
  const h = createHash('sha256').update(`${table}/snapshot/${i}`).digest()
  return h.readBigUInt64BE(0) & 0x3fffffffffffffffn | 0x2000000000000000n
}

/**
 * The top-level columns of a table: `columns` of them, every 10th nested (struct, list, map)
 * so that field ids below the top level are exercised too.
 */
export function buildColumns (columns: number): { fields: JsonObject[], lastColumnId: number } {
  const fields: JsonObject[] = []
  let id = 0
  for (let i = 0; i < columns; i++) {
    const fieldId = ++id
    let type: Json
    const slot = i % 10
    if (i > 0 && slot === 7) {
      type = { type: 'struct', fields: [{ id: ++id, name: 'city', required: false, type: 'string' }, { id: ++id, name: 'postcode', required: false, type: 'string' }] }
    } else if (i > 0 && slot === 8) {
      type = { type: 'list', 'element-id': ++id, element: 'string', 'element-required': false }
    } else if (i > 0 && slot === 9) {
      const keyId = ++id
      type = { type: 'map', 'key-id': keyId, key: 'string', 'value-id': ++id, value: 'long', 'value-required': false }
    } else {
      type = i === 0 ? 'long' : PRIMITIVES[i % PRIMITIVES.length] ?? 'string'
    }
    const field: JsonObject = { id: fieldId, name: i === 0 ? 'id' : `column_${i}`, required: i === 0, type }
    if (i % 4 === 1) field.doc = `column ${i} of the benchmark table`
    fields.push(field)
  }
  return { fields, lastColumnId: id }
}

function snapshot (table: string, i: number, schemaId: number, summaryPadding = 0): JsonObject {
  const summary: JsonObject = {
    operation: 'append',
    'added-data-files': String(1 + i % 9),
    'added-records': String(10_000 * (1 + i % 7)),
    'added-files-size': String(1_048_576 * (1 + i % 5)),
    'changed-partition-count': '1',
    'total-records': String(10_000 * (i + 1)),
    'total-files-size': String(1_048_576 * (i + 1)),
    'total-data-files': String(i + 1),
    'total-delete-files': '0',
    'total-position-deletes': '0',
    'total-equality-deletes': '0'
  }
  // Engines add their own keys to the summary (Spark's app id, Flink's job id, …): that is
  // what makes a real append commit a few kilobytes.
  for (let k = 0; k < summaryPadding; k++) summary[`engine.property-${k}`] = `value-${k}-${'v'.repeat(40)}`
  const s: JsonObject = {
    'snapshot-id': snapshotId(table, i),
    'sequence-number': i + 1,
    'timestamp-ms': EPOCH_MS + i * 60_000,
    'manifest-list': `s3://warehouse/bench/${table}/metadata/snap-${snapshotId(table, i)}-1-${stableUuid(`${table}/ml/${i}`)}.avro`,
    summary,
    'schema-id': schemaId
  }
  if (i > 0) s['parent-snapshot-id'] = snapshotId(table, i - 1)
  return s
}

export interface TableOptions {
  table: string
  columns: number
  snapshots: number
  /** Number of schemas in the history; the current one is the last and has `columns` columns. */
  schemas?: number
  /** Keep only the snapshots that refs point to, as `snapshots=refs` asks. */
  refsOnly?: boolean
}

/** A format-version 2 TableMetadata object. */
export function buildTableMetadata (o: TableOptions): JsonObject {
  const schemaCount = o.schemas ?? 1
  const schemas: JsonObject[] = []
  let lastColumnId = 0
  for (let s = 0; s < schemaCount; s++) {
    // Each older schema has one column fewer: the history of a table that grew a column at a time.
    const cols = buildColumns(o.columns - (schemaCount - 1 - s))
    lastColumnId = Math.max(lastColumnId, cols.lastColumnId)
    schemas.push({ type: 'struct', 'schema-id': s, 'identifier-field-ids': [1], fields: cols.fields })
  }
  const currentSchemaId = schemaCount - 1
  const all: JsonObject[] = []
  for (let i = 0; i < o.snapshots; i++) all.push(snapshot(o.table, i, currentSchemaId))
  const current = o.snapshots > 0 ? snapshotId(o.table, o.snapshots - 1) : -1
  const kept = o.refsOnly ? all.slice(-1) : all
  return {
    'format-version': 2,
    'table-uuid': stableUuid(`bench.${o.table}`),
    location: `s3://warehouse/bench/${o.table}`,
    'last-sequence-number': o.snapshots,
    'last-updated-ms': EPOCH_MS + o.snapshots * 60_000,
    'last-column-id': lastColumnId,
    'current-schema-id': currentSchemaId,
    schemas,
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [{ name: 'id_bucket', transform: 'bucket[16]', 'source-id': 1, 'field-id': 1000 }] }],
    'last-partition-id': 1000,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: { 'write.format.default': 'parquet', 'write.parquet.compression-codec': 'zstd', owner: 'bench' },
    'current-snapshot-id': current,
    refs: current === -1 ? {} : { main: { 'snapshot-id': current, type: 'branch' } },
    snapshots: kept,
    statistics: [],
    'snapshot-log': kept.map(s => ({ 'timestamp-ms': s['timestamp-ms'] ?? null, 'snapshot-id': s['snapshot-id'] ?? null })),
    'metadata-log': kept.map((s, i) => ({
      'timestamp-ms': s['timestamp-ms'] ?? null,
      'metadata-file': `s3://warehouse/bench/${o.table}/metadata/${String(i).padStart(5, '0')}-${stableUuid(`${o.table}/md/${i}`)}.metadata.json`
    }))
  }
}

export function metadataLocation (table: string, version: number): string {
  return `s3://warehouse/bench/${table}/metadata/${String(version).padStart(5, '0')}-${stableUuid(`${table}/v${version}`)}.metadata.json`
}

/** LoadTableResult (also the shape of CommitTableResponse, without `config`). */
export function loadTableResult (o: TableOptions): string {
  return stringify({ 'metadata-location': metadataLocation(o.table, o.snapshots), metadata: buildTableMetadata(o), config: {} }) ?? ''
}

/** CommitTableResponse: `metadata-location` and `metadata` (REST spec), after the commit. */
export function commitTableResponse (o: TableOptions): string {
  return stringify({ 'metadata-location': metadataLocation(o.table, o.snapshots + 1), metadata: buildTableMetadata(o) }) ?? ''
}

/** Grows the snapshot count until the LoadTableResult reaches `bytes`. */
export function sizedTable (table: string, columns: number, bytes: number): TableOptions {
  const one = Buffer.byteLength(loadTableResult({ table, columns, snapshots: 1 }))
  const ten = Buffer.byteLength(loadTableResult({ table, columns, snapshots: 11 }))
  let n = Math.max(1, Math.ceil((bytes - one) / ((ten - one) / 10)))
  while (Buffer.byteLength(loadTableResult({ table, columns, snapshots: n })) < bytes) n += 5
  return { table, columns, snapshots: n }
}

/**
 * A data commit (the fast path): add-snapshot + set-snapshot-ref guarded by assert-ref-snapshot-id,
 * with the summary grown to about `bytes`.
 */
export function dataCommit (base: TableOptions, bytes: number): string {
  const build = (pad: number): string => {
    const next = snapshot(base.table, base.snapshots, base.schemas === undefined ? 0 : base.schemas - 1, pad)
    return stringify({
      identifier: { namespace: ['bench'], name: base.table },
      requirements: [
        { type: 'assert-table-uuid', uuid: stableUuid(`bench.${base.table}`) },
        { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': snapshotId(base.table, base.snapshots - 1) }
      ],
      updates: [
        { action: 'add-snapshot', snapshot: next },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId(base.table, base.snapshots) }
      ]
    }) ?? ''
  }
  let pad = 0
  while (Buffer.byteLength(build(pad)) < bytes) pad++
  return build(pad)
}

/**
 * A schema commit as Java and pyiceberg send it: assert-current-schema-id, add-schema with the
 * current columns plus `change`, set-current-schema -1 (the schema just added).
 */
export function schemaCommit (base: TableOptions, change: 'add-optional-column' | 'long-to-int'): string {
  const cols = buildColumns(base.columns)
  const fields = cols.fields.map(f => ({ ...f }))
  let lastColumnId = cols.lastColumnId
  if (change === 'add-optional-column') {
    fields.push({ id: ++lastColumnId, name: 'added_column', required: false, type: 'string' })
  } else {
    // Spec "Schema Evolution": long may not become int (a narrowing), so the gate must refuse it.
    const first = fields[0]
    if (first !== undefined) first.type = 'int'
  }
  const currentSchemaId = (base.schemas ?? 1) - 1
  return stringify({
    identifier: { namespace: ['bench'], name: base.table },
    requirements: [
      { type: 'assert-table-uuid', uuid: stableUuid(`bench.${base.table}`) },
      { type: 'assert-current-schema-id', 'current-schema-id': currentSchemaId }
    ],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': currentSchemaId + 1, 'identifier-field-ids': [1], fields }, 'last-column-id': lastColumnId },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  }) ?? ''
}

/** The metadata after `schemaCommit(base, 'add-optional-column')`: what the stub answers. */
export function afterSchemaCommit (base: TableOptions): TableOptions {
  return { ...base, columns: base.columns + 1, schemas: (base.schemas ?? 1) + 1 }
}

/** The catalog config the stub serves at /v1/config. */
export function catalogConfig (): string {
  return JSON.stringify({
    defaults: {},
    overrides: {},
    endpoints: [
      'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
      'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
      'POST /v1/{prefix}/transactions/commit'
    ]
  })
}
