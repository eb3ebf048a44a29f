/**
 * Whole table metadata ↔ its metadata file (spec "Table Metadata Fields", Appendix C), for a
 * catalog that stores it. The rule-relevant parts are `parse.ts`'s (`parseTableMetadata`); the
 * rest is read here into `TableData`, wire objects kept as they are.
 *
 * Writing is done once per version and mostly not at all: a schema, snapshot or log entry is
 * written to text once in its life and the text is reused by every later version that still holds
 * it, so a commit writes what it changed and copies the rest. Keys come in Java's order
 * (`TableMetadataParser.toJson`) and the shape follows the format version: v1 also carries the
 * current `schema` and `partition-spec`, v2+ `last-sequence-number`, v3 `next-row-id`.
 */
import { longValue, writeJson } from './json-text.js'
import { isObject, own, toLongText, type JsonObject } from './json-values.js'
import { parseTableMetadata, plainRecord } from './parse.js'
import { typeToJson } from './print.js'
import type { ParseIssue, PartitionField, PartitionSpec, Schema, SortOrder, TableData, WholeTableMetadata, WireObject } from './types.js'

/** The members of a metadata file this model reads; any other is kept as it is, at the end. */
const KNOWN = new Set([
  'format-version', 'table-uuid', 'location', 'last-sequence-number', 'last-updated-ms', 'last-column-id', 'schema',
  'current-schema-id', 'schemas', 'partition-spec', 'default-spec-id', 'partition-specs', 'last-partition-id',
  'default-sort-order-id', 'sort-orders', 'properties', 'current-snapshot-id', 'refs', 'snapshots', 'statistics',
  'partition-statistics', 'snapshot-log', 'metadata-log', 'next-row-id', 'encryption-keys'
])

function objects (json: JsonObject, key: string, issues: ParseIssue[]): WireObject[] {
  const v = own(json, key)
  if (v === undefined || v === null) return []
  if (Array.isArray(v) && v.every(isObject)) return v as WireObject[]
  issues.push({ at: key, message: `Cannot parse table metadata: ${key} must be an array of objects` })
  return []
}

function long (json: JsonObject, key: string, issues: ParseIssue[], fallback: string): string {
  const v = own(json, key)
  if (v === undefined || v === null) return fallback
  const text = typeof v === 'string' ? undefined : toLongText(v)
  if (text === undefined) issues.push({ at: key, message: `Cannot parse table metadata: ${key} must be an integer` })
  return text ?? fallback
}

/**
 * Parses a whole metadata file. Old v1 files lacking `schemas`, `partition-specs`, `sort-orders`
 * or `refs` are read as their legacy members say (`current-snapshot-id` stands for `main`).
 */
export function parseWholeTableMetadata (json: unknown): { metadata?: WholeTableMetadata, issues: ParseIssue[] } {
  const { metadata, issues } = parseTableMetadata(json)
  if (!isObject(json)) return { issues }
  const currentSnapshotId = long(json, 'current-snapshot-id', issues, '-1')
  const rawRefs = own(json, 'refs')
  const refs = plainRecord<WireObject>()
  if (isObject(rawRefs)) {
    for (const name of Object.keys(rawRefs)) {
      const ref = rawRefs[name]
      if (isObject(ref)) refs[name] = ref
    }
  } else if (currentSnapshotId !== '-1') {
    refs.main = { 'snapshot-id': longValue(currentSnapshotId), type: 'branch' }
  }
  const rawKeys = own(json, 'encryption-keys')
  const data: TableData = {
    lastSequenceNumber: long(json, 'last-sequence-number', issues, '0'),
    lastUpdatedMs: long(json, 'last-updated-ms', issues, '0'),
    nextRowId: long(json, 'next-row-id', issues, '0'),
    currentSnapshotId,
    refs,
    snapshots: objects(json, 'snapshots', issues),
    statistics: objects(json, 'statistics', issues),
    partitionStatistics: objects(json, 'partition-statistics', issues),
    snapshotLog: objects(json, 'snapshot-log', issues),
    metadataLog: objects(json, 'metadata-log', issues),
    ...(rawKeys === undefined || rawKeys === null ? {} : { encryptionKeys: objects(json, 'encryption-keys', issues) }),
    extra: Object.keys(json).filter(k => !KNOWN.has(k)).map(k => [k, json[k]] as const)
  }
  if (issues.length > 0 || metadata === undefined) return { issues }
  if (metadata.location === undefined) return { issues: [{ at: 'location', message: 'Cannot parse table metadata: missing location' }] }
  return { metadata: { ...metadata, data }, issues }
}

// A value's text is written once and reused by every version that holds the value: values are
// never changed, so the text cannot go stale, and it goes when the value goes. A schema's text is
// kept as UTF-8 bytes, handed on as it is (a file or an answer is a list of chunks, not one string
// copied whole per version); small wire objects are kept as strings and joined into few chunks.
const schemaBytes = new WeakMap<Schema, Buffer>()
const wireTexts = new WeakMap<object, string>()
const COMMA = Buffer.from(',')

function schemaBuffer (schema: Schema): Buffer {
  let bytes = schemaBytes.get(schema)
  if (bytes === undefined) {
    const fields = (typeToJson(schema.struct) as { fields: unknown[] }).fields
    bytes = Buffer.from(writeJson({
      type: 'struct',
      'schema-id': schema.schemaId ?? 0,
      ...(schema.identifierFieldIds.length > 0 ? { 'identifier-field-ids': schema.identifierFieldIds } : {}),
      fields
    }), 'utf8')
    schemaBytes.set(schema, bytes)
  }
  return bytes
}

/** The text of a wire object, written once. */
export function wireText (o: WireObject): string {
  let text = wireTexts.get(o)
  if (text === undefined) {
    text = writeJson(o)
    wireTexts.set(o, text)
  }
  return text
}

/**
 * Collects a JSON text as UTF-8 chunks: short text is joined, a schema's bytes are handed on as
 * they are (with one shared buffer for the comma between two of them).
 */
export class JsonChunks {
  readonly chunks: Buffer[] = []
  private pending = ''

  text (s: string): this {
    this.pending += s
    return this
  }

  schemas (list: readonly Schema[]): this {
    this.pending += '['
    for (let i = 0; i < list.length; i++) {
      if (i > 0) {
        if (this.pending === '') this.chunks.push(COMMA)
        else this.pending += ','
      }
      this.bytes(schemaBuffer(list[i] as Schema))
    }
    this.pending += ']'
    return this
  }

  bytes (b: Buffer): this {
    this.flush()
    this.chunks.push(b)
    return this
  }

  /** The chunks so far, pending text included. */
  done (): Buffer[] {
    this.flush()
    return this.chunks
  }

  private flush (): void {
    if (this.pending === '') return
    this.chunks.push(Buffer.from(this.pending, 'utf8'))
    this.pending = ''
  }
}

const sourceJson = (ids: readonly number[]): Record<string, unknown> => ids.length === 1 ? { 'source-id': ids[0] } : { 'source-ids': ids }

function partitionFieldsJson (fields: readonly PartitionField[]): unknown[] {
  return fields.map(f => ({ name: f.name, transform: f.transform, ...sourceJson(f.sourceIds), ...(f.fieldId === undefined ? {} : { 'field-id': f.fieldId }) }))
}

function specJson (s: PartitionSpec): unknown {
  return { 'spec-id': s.specId, fields: partitionFieldsJson(s.fields) }
}

function orderJson (o: SortOrder): unknown {
  return {
    'order-id': o.orderId,
    fields: o.fields.map(f => ({ transform: f.transform, ...sourceJson(f.sourceIds), direction: f.direction, 'null-order': f.nullOrder }))
  }
}

const list = (items: readonly WireObject[]): string => `[${items.map(wireText).join(',')}]`

/** Writes the metadata file into `out`. */
function writeTableMetadata (m: WholeTableMetadata, out: JsonChunks): void {
  const d = m.data
  const v = m.formatVersion
  let first = true
  const key = (k: string): JsonChunks => {
    out.text(`${first ? '{' : ','}${JSON.stringify(k)}:`)
    first = false
    return out
  }
  key('format-version').text(String(v))
  if (m.tableUuid !== undefined) key('table-uuid').text(JSON.stringify(m.tableUuid))
  key('location').text(JSON.stringify(m.location))
  if (v > 1) key('last-sequence-number').text(d.lastSequenceNumber)
  key('last-updated-ms').text(d.lastUpdatedMs)
  key('last-column-id').text(String(m.lastColumnId))
  const current = m.schemas.find(s => s.schemaId === m.currentSchemaId)
  if (v === 1 && current !== undefined) key('schema').bytes(schemaBuffer(current))
  key('current-schema-id').text(String(m.currentSchemaId))
  key('schemas').schemas(m.schemas)
  if (v === 1) key('partition-spec').text(writeJson(partitionFieldsJson(m.partitionSpecs.find(s => s.specId === m.defaultSpecId)?.fields ?? [])))
  key('default-spec-id').text(String(m.defaultSpecId))
  key('partition-specs').text(writeJson(m.partitionSpecs.map(specJson)))
  key('last-partition-id').text(String(m.lastPartitionId ?? 999))
  key('default-sort-order-id').text(String(m.defaultSortOrderId))
  key('sort-orders').text(writeJson(m.sortOrders.map(orderJson)))
  key('properties').text(JSON.stringify(m.properties))
  key('current-snapshot-id').text(d.currentSnapshotId)
  key('refs').text(`{${Object.keys(d.refs).map(name => `${JSON.stringify(name)}:${wireText(d.refs[name] as WireObject)}`).join(',')}}`)
  key('snapshots').text(list(d.snapshots))
  key('statistics').text(list(d.statistics))
  key('partition-statistics').text(list(d.partitionStatistics))
  key('snapshot-log').text(list(d.snapshotLog))
  key('metadata-log').text(list(d.metadataLog))
  if (v >= 3) key('next-row-id').text(d.nextRowId)
  if (d.encryptionKeys !== undefined) key('encryption-keys').text(list(d.encryptionKeys))
  for (const [k, value] of d.extra) key(k).text(writeJson(value))
  out.text('}')
}

/** The metadata file as UTF-8 chunks (what is written and answered). */
export function tableMetadataChunks (m: WholeTableMetadata): Buffer[] {
  const out = new JsonChunks()
  writeTableMetadata(m, out)
  return out.done()
}

/** The metadata file's text. */
export function tableMetadataText (m: WholeTableMetadata): string {
  return Buffer.concat(tableMetadataChunks(m)).toString('utf8')
}

/** The metadata with only the snapshots a branch or tag points at (loadTable `snapshots=refs`, Java `suppressHistoricalSnapshots`). */
export function withRefSnapshotsOnly (m: WholeTableMetadata): WholeTableMetadata {
  const keep = new Set(Object.values(m.data.refs).map(r => toLongText(own(r, 'snapshot-id'))))
  const snapshots = m.data.snapshots.filter(s => keep.has(toLongText(own(s, 'snapshot-id'))))
  return snapshots.length === m.data.snapshots.length ? m : { ...m, data: { ...m.data, snapshots } }
}
