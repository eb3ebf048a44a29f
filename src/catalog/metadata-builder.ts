import { randomUUID } from 'node:crypto'
import { badRequest, commitFailed, validationFailed } from './errors.js'
import { cloneJson, defineOwn, fromBig, idKey, isObject, jsonEqual, toBig, type JsonObject } from './json.js'
import { highestFieldId, normalizeSchema, sameSchema, stringList, stringMap } from './schema.js'
import type { Update } from './table-updates.js'

/**
 * Applies table updates to a copy of the metadata, as Java `TableMetadata.Builder` does
 * (reached from `MetadataUpdate.applyTo`). The base is never touched: a failed update leaves
 * nothing behind, and `build()` reports whether anything changed at all.
 *
 * Deliberately absent: evolution rules (type promotion, field id reuse, partition or sort sources
 * still present). Real catalogs accept such changes; rejecting them is the gate's job.
 */

export const SUPPORTED_FORMAT_VERSION = 3
export const INITIAL_PARTITION_ID = 999 // Java PARTITION_DATA_ID_START - 1
const PREVIOUS_VERSIONS_MAX = 'write.metadata.previous-versions-max'

type Metadata = JsonObject

const list = (m: Metadata, key: string): JsonObject[] => {
  if (!Array.isArray(m[key])) m[key] = []
  return m[key] as JsonObject[]
}
const intOf = (v: unknown, fallback: number): number => typeof v === 'number' ? v : fallback
const maxId = (items: JsonObject[], key: string): number => items.reduce((max, x) => Math.max(max, intOf(x[key], -1)), -1)

export class MetadataBuilder {
  readonly m: Metadata
  #changed = false
  #lastAddedSchemaId: number | undefined
  #lastAddedSpecId: number | undefined
  #lastAddedOrderId: number | undefined
  readonly #addedSchemas = new Set<number>()
  readonly #addedSpecs = new Set<number>()
  readonly #addedOrders = new Set<number>()
  readonly #addedSnapshots = new Set<string>()
  #lastUpdatedMs: unknown

  private constructor (m: Metadata) {
    this.m = m
  }

  /** Builder for a table that does not exist yet (`TableMetadata.buildFromEmpty`). */
  static fromEmpty (formatVersion: number): MetadataBuilder {
    checkFormatVersion(formatVersion)
    const m: Metadata = {
      'format-version': formatVersion,
      'last-column-id': 0,
      'current-schema-id': -1,
      schemas: [],
      'default-spec-id': -1,
      'partition-specs': [],
      'last-partition-id': INITIAL_PARTITION_ID,
      'default-sort-order-id': -1,
      'sort-orders': [],
      properties: Object.create(null)
    }
    const b = new MetadataBuilder(m)
    b.#changed = true
    return b
  }

  static from (base: Metadata): MetadataBuilder {
    return new MetadataBuilder(cloneJson(base))
  }

  get formatVersion (): number {
    return intOf(this.m['format-version'], 1)
  }

  apply (u: Update): void {
    const action = ACTIONS[u.action]
    if (action === undefined) throw badRequest(`Unknown table update action: ${u.action}`)
    action(this, u)
  }

  #change (): void {
    this.#changed = true
  }

  assignUuid (uuid: string): void {
    const current = this.m['table-uuid']
    if (current === uuid) return
    if (typeof current === 'string') throw validationFailed(`Cannot reassign uuid: ${current} -> ${uuid}`)
    this.m['table-uuid'] = uuid
    this.#change()
  }

  upgradeFormatVersion (version: number): void {
    const current = this.formatVersion
    if (version === current) return
    if (version > SUPPORTED_FORMAT_VERSION) {
      throw badRequest(`Cannot upgrade table to unsupported format version: v${version} (supported: v${SUPPORTED_FORMAT_VERSION})`)
    }
    if (version < current) throw badRequest(`Cannot downgrade v${current} table to v${version}`)
    this.m['format-version'] = version
    this.#change()
  }

  /** Java `addSchema`: reuse the id of an identical schema; the client's schema-id and last-column-id are not trusted. */
  addSchema (raw: unknown): void {
    const schemas = list(this.m, 'schemas')
    const candidate = normalizeSchema(raw, 0, 'add-schema.schema')
    const lastColumnId = intOf(this.m['last-column-id'], 0)
    const newLastColumnId = Math.max(lastColumnId, highestFieldId(candidate))
    const existing = schemas.find(s => sameSchema(s, candidate))
    if (existing !== undefined) {
      const id = existing['schema-id'] as number
      // An equal pre-existing schema does not count as "added": a later set-current-schema -1 fails.
      this.#lastAddedSchemaId = this.#addedSchemas.has(id) ? id : undefined
      return
    }
    // Java reuseOrCreateNewSchemaId: max(current id, highest id + 1).
    const id = Math.max(intOf(this.m['current-schema-id'], -1), maxId(schemas, 'schema-id') + 1, 0)
    candidate['schema-id'] = id
    schemas.push(candidate)
    this.m['last-column-id'] = newLastColumnId
    this.#addedSchemas.add(id)
    this.#lastAddedSchemaId = id
    this.#change()
  }

  setCurrentSchema (schemaId: number): void {
    let id = schemaId
    if (id === -1) {
      if (this.#lastAddedSchemaId === undefined) throw validationFailed('Cannot set last added schema: no schema has been added')
      id = this.#lastAddedSchemaId
    }
    if (this.m['current-schema-id'] === id) return
    if (!list(this.m, 'schemas').some(s => s['schema-id'] === id)) {
      throw badRequest(`Cannot set current schema to unknown schema: ${id}`)
    }
    this.m['current-schema-id'] = id
    this.#change()
  }

  addSpec (raw: JsonObject): void {
    if (!Array.isArray(raw.fields)) throw badRequest('Invalid partition spec: fields must be an array')
    const specs = list(this.m, 'partition-specs')
    const fields = raw.fields.map((f, i) => partitionField(f, i))
    // Java PartitionSpec.compatibleWith: same source ids, transforms and names, in order.
    const same = (s: JsonObject): boolean => {
      const other = (s.fields ?? []) as JsonObject[]
      return other.length === fields.length && other.every((o, i) => {
        const f = fields[i] as JsonObject
        return jsonEqual(sourceIds(o), sourceIds(f)) && o.transform === f.transform && o.name === f.name
      })
    }
    const existing = specs.find(same)
    if (existing !== undefined) {
      const id = existing['spec-id'] as number
      this.#lastAddedSpecId = this.#addedSpecs.has(id) ? id : undefined
      return
    }
    let last = Math.max(intOf(this.m['last-partition-id'], INITIAL_PARTITION_ID), INITIAL_PARTITION_ID)
    const known = specs.flatMap(s => (s.fields ?? []) as JsonObject[])
    for (const f of fields) {
      if (typeof f['field-id'] !== 'number') {
        // v2+ keeps a partition field's id when the same source and transform come back.
        const match = this.formatVersion > 1
          ? known.find(k => jsonEqual(sourceIds(k), sourceIds(f)) && k.transform === f.transform)
          : undefined
        f['field-id'] = typeof match?.['field-id'] === 'number' ? match['field-id'] : ++last
      }
      last = Math.max(last, f['field-id'] as number)
    }
    const id = maxId(specs, 'spec-id') + 1
    specs.push({ 'spec-id': id, fields })
    this.m['last-partition-id'] = last
    this.#addedSpecs.add(id)
    this.#lastAddedSpecId = id
    this.#change()
  }

  setDefaultSpec (specId: number): void {
    let id = specId
    if (id === -1) {
      if (this.#lastAddedSpecId === undefined) throw validationFailed('Cannot set last added spec: no spec has been added')
      id = this.#lastAddedSpecId
    }
    if (this.m['default-spec-id'] === id) return
    if (!list(this.m, 'partition-specs').some(s => s['spec-id'] === id)) {
      throw badRequest(`Cannot set default partition spec to unknown spec: ${id}`)
    }
    this.m['default-spec-id'] = id
    this.#change()
  }

  addSortOrder (raw: JsonObject): void {
    if (!Array.isArray(raw.fields)) throw badRequest('Invalid sort order: fields must be an array')
    const orders = list(this.m, 'sort-orders')
    const fields = raw.fields.map((f, i) => sortField(f, i))
    const existing = orders.find(o => jsonEqual(o.fields ?? [], fields))
    if (existing !== undefined) {
      const id = existing['order-id'] as number
      this.#lastAddedOrderId = this.#addedOrders.has(id) ? id : undefined
      return
    }
    // Java reuseOrCreateNewSortOrderId: 0 is reserved for the unsorted order.
    const id = fields.length === 0 ? 0 : Math.max(1, maxId(orders, 'order-id') + 1)
    orders.push({ 'order-id': id, fields })
    this.#addedOrders.add(id)
    this.#lastAddedOrderId = id
    this.#change()
  }

  setDefaultSortOrder (orderId: number): void {
    let id = orderId
    if (id === -1) {
      if (this.#lastAddedOrderId === undefined) throw validationFailed('Cannot set last added sort order: no sort order has been added')
      id = this.#lastAddedOrderId
    }
    if (this.m['default-sort-order-id'] === id) return
    if (!list(this.m, 'sort-orders').some(o => o['order-id'] === id)) {
      throw badRequest(`Cannot set default sort order to unknown sort order: ${id}`)
    }
    this.m['default-sort-order-id'] = id
    this.#change()
  }

  addSnapshot (raw: JsonObject): void {
    const snapshot = cloneJson(raw)
    const id = idKey(snapshot['snapshot-id'])
    if (id === undefined) throw badRequest('Invalid snapshot: snapshot-id must be an integer')
    if (toBig(snapshot['timestamp-ms']) === undefined) throw badRequest('Invalid snapshot: timestamp-ms must be an integer')
    if (snapshot.summary !== undefined && !isObject(snapshot.summary)) throw badRequest('Invalid snapshot: summary must be an object')
    const snapshots = list(this.m, 'snapshots')
    if (snapshots.some(s => idKey(s['snapshot-id']) === id)) throw validationFailed(`Snapshot already exists for id: ${id}`)
    if (this.formatVersion > 1) {
      const seq = toBig(snapshot['sequence-number'])
      if (seq === undefined) throw badRequest('Invalid snapshot: sequence-number must be an integer')
      const last = toBig(this.m['last-sequence-number']) ?? 0n
      // Java: a stale sequence number is retryable, so the client gets 409 and retries on fresh metadata.
      if (seq <= last && snapshot['parent-snapshot-id'] !== undefined && snapshot['parent-snapshot-id'] !== null) {
        throw commitFailed(`Cannot add snapshot with sequence number ${seq} older than last sequence number ${last}`)
      }
      this.m['last-sequence-number'] = snapshot['sequence-number']
    }
    if (this.formatVersion >= 3) {
      const firstRowId = toBig(snapshot['first-row-id'])
      const addedRows = toBig(snapshot['added-rows'])
      if (firstRowId === undefined) throw badRequest('Cannot add a snapshot: first-row-id is null')
      if (addedRows === undefined) throw badRequest('Cannot add a snapshot: added-rows is null')
      const next = toBig(this.m['next-row-id']) ?? 0n
      if (firstRowId < next) throw commitFailed(`Cannot add a snapshot, first-row-id is behind table next-row-id: ${firstRowId} < ${next}`)
      this.m['next-row-id'] = fromBig(next + addedRows)
    }
    snapshots.push(snapshot)
    this.#addedSnapshots.add(id)
    this.#lastUpdatedMs = snapshot['timestamp-ms']
    this.#change()
  }

  setSnapshotRef (u: JsonObject): void {
    const name = u['ref-name'] as string
    const type = (u.type as string).toLowerCase()
    if (type !== 'branch' && type !== 'tag') throw badRequest(`Invalid snapshot ref type: ${u.type as string}`)
    const ref: JsonObject = { 'snapshot-id': u['snapshot-id'], type }
    for (const key of ['min-snapshots-to-keep', 'max-snapshot-age-ms', 'max-ref-age-ms']) {
      const v = u[key]
      if (v === undefined || v === null) continue
      if (toBig(v) === undefined) throw badRequest(`Invalid snapshot ref ${name}: ${key} must be an integer`)
      if (type === 'tag' && key !== 'max-ref-age-ms') throw badRequest(`Invalid snapshot ref ${name}: tags do not support ${key}`)
      ref[key] = v
    }
    const refs = this.#refs()
    if (Object.hasOwn(refs, name) && jsonEqual(refs[name], ref)) return
    const id = idKey(ref['snapshot-id']) as string
    const snapshot = list(this.m, 'snapshots').find(s => idKey(s['snapshot-id']) === id)
    if (snapshot === undefined) throw validationFailed(`Cannot set ${name} to unknown snapshot: ${id}`)
    if (this.#addedSnapshots.has(id)) this.#lastUpdatedMs = snapshot['timestamp-ms']
    if (name === 'main') {
      this.m['current-snapshot-id'] = ref['snapshot-id']
      this.#lastUpdatedMs ??= Date.now()
      list(this.m, 'snapshot-log').push({ 'timestamp-ms': this.#lastUpdatedMs, 'snapshot-id': ref['snapshot-id'] })
    }
    defineOwn(refs, name, ref)
    this.#change()
  }

  removeSnapshots (ids: unknown[]): void {
    const remove = new Set(ids.map(id => idKey(id)))
    const snapshots = list(this.m, 'snapshots')
    const kept = snapshots.filter(s => !remove.has(idKey(s['snapshot-id'])))
    if (kept.length === snapshots.length) return
    this.m.snapshots = kept
    const alive = new Set(kept.map(s => idKey(s['snapshot-id'])))
    for (const key of ['statistics', 'partition-statistics']) {
      this.m[key] = list(this.m, key).filter(s => alive.has(idKey(s['snapshot-id'])))
    }
    // Java: refs that point at a removed snapshot are removed with it.
    const refs = this.#refs()
    for (const name of Object.keys(refs)) {
      if (!alive.has(idKey((refs[name] as JsonObject)['snapshot-id']))) this.removeSnapshotRef(name)
    }
    // Java updateSnapshotLog: an entry for a missing snapshot drops the history before it.
    const log: JsonObject[] = []
    for (const entry of list(this.m, 'snapshot-log')) {
      if (alive.has(idKey(entry['snapshot-id']))) log.push(entry)
      else log.length = 0
    }
    this.m['snapshot-log'] = log
    this.#change()
  }

  removeSnapshotRef (name: string): void {
    const refs = this.#refs()
    if (name === 'main') this.m['current-snapshot-id'] = -1
    if (!Object.hasOwn(refs, name)) return
    delete refs[name]
    this.#change()
  }

  setLocation (location: string): void {
    if (location.length === 0) throw badRequest('Invalid location: must not be empty')
    if (this.m.location === location) return
    this.m.location = location
    this.#change()
  }

  setProperties (updates: Record<string, string>): void {
    const props = this.#properties()
    for (const key of Object.keys(updates)) {
      if (props[key] === updates[key] && Object.hasOwn(props, key)) continue
      defineOwn(props, key, updates[key])
      this.#change()
    }
  }

  removeProperties (keys: string[]): void {
    const props = this.#properties()
    for (const key of keys) {
      if (!Object.hasOwn(props, key)) continue
      delete props[key]
      this.#change()
    }
  }

  /** Replaces the file of the same snapshot (set-statistics, set-partition-statistics). */
  setSnapshotFile (key: 'statistics' | 'partition-statistics', file: JsonObject): void {
    const id = idKey(file['snapshot-id'])
    if (id === undefined) throw badRequest(`Invalid ${key}: snapshot-id must be an integer`)
    const files = list(this.m, key)
    const at = files.findIndex(f => idKey(f['snapshot-id']) === id)
    if (at >= 0 && jsonEqual(files[at], file)) return
    if (at >= 0) files[at] = cloneJson(file)
    else files.push(cloneJson(file))
    this.#change()
  }

  removeSnapshotFile (key: 'statistics' | 'partition-statistics', snapshotId: unknown): void {
    const id = idKey(snapshotId)
    const files = list(this.m, key)
    const kept = files.filter(f => idKey(f['snapshot-id']) !== id)
    if (kept.length === files.length) return
    this.m[key] = kept
    this.#change()
  }

  removeSpecs (ids: number[]): void {
    if (ids.includes(this.m['default-spec-id'] as number)) throw validationFailed('Cannot remove the default partition spec')
    const specs = list(this.m, 'partition-specs')
    const kept = specs.filter(s => !ids.includes(s['spec-id'] as number))
    if (kept.length === specs.length) return
    this.m['partition-specs'] = kept
    this.#change()
  }

  removeSchemas (ids: number[]): void {
    if (ids.includes(this.m['current-schema-id'] as number)) throw validationFailed(`Cannot remove current schema: ${this.m['current-schema-id'] as number}`)
    const schemas = list(this.m, 'schemas')
    const kept = schemas.filter(s => !ids.includes(s['schema-id'] as number))
    if (kept.length === schemas.length) return
    this.m.schemas = kept
    this.#change()
  }

  addEncryptionKey (key: JsonObject): void {
    if (typeof key['key-id'] !== 'string') throw badRequest('Invalid encryption key: key-id must be a string')
    if (typeof key['encrypted-key-metadata'] !== 'string') throw badRequest('Invalid encryption key: encrypted-key-metadata must be a string')
    const keys = list(this.m, 'encryption-keys')
    const at = keys.findIndex(k => k['key-id'] === key['key-id'])
    if (at >= 0 && jsonEqual(keys[at], key)) return
    if (at >= 0) keys[at] = cloneJson(key)
    else keys.push(cloneJson(key))
    this.#change()
  }

  removeEncryptionKey (keyId: string): void {
    const keys = list(this.m, 'encryption-keys')
    const kept = keys.filter(k => k['key-id'] !== keyId)
    if (kept.length === keys.length) return
    this.m['encryption-keys'] = kept
    this.#change()
  }

  #refs (): Record<string, unknown> {
    if (!isObject(this.m.refs)) this.m.refs = {}
    return this.m.refs as Record<string, unknown>
  }

  #properties (): Record<string, string> {
    if (!isObject(this.m.properties)) this.m.properties = Object.create(null)
    return this.m.properties as Record<string, string>
  }

  /**
   * Finishes the metadata: fills what a new table still lacks, stamps last-updated-ms and
   * appends the previous file to metadata-log. Returns undefined when nothing changed.
   */
  build (previous?: { location: string, lastUpdatedMs: unknown }): Metadata | undefined {
    if (!this.#changed) return undefined
    const m = this.m
    m['table-uuid'] ??= randomUUID()
    if (intOf(m['current-schema-id'], -1) < 0) throw validationFailed('Cannot create a table without a current schema')
    if (list(m, 'partition-specs').length === 0) {
      m['partition-specs'] = [{ 'spec-id': 0, fields: [] }]
      m['default-spec-id'] = 0
    }
    if (list(m, 'sort-orders').length === 0) {
      m['sort-orders'] = [{ 'order-id': 0, fields: [] }]
      m['default-sort-order-id'] = 0
    }
    if (!list(m, 'partition-specs').some(s => s['spec-id'] === m['default-spec-id'])) {
      throw validationFailed(`Cannot find default partition spec: ${String(m['default-spec-id'])}`)
    }
    if (!list(m, 'sort-orders').some(o => o['order-id'] === m['default-sort-order-id'])) {
      throw validationFailed(`Cannot find default sort order: ${String(m['default-sort-order-id'])}`)
    }
    if (typeof m.location !== 'string') throw validationFailed('Cannot build table metadata without a location')
    m['last-updated-ms'] = this.#lastUpdatedMs ?? Date.now()
    if (previous !== undefined) {
      const log = list(m, 'metadata-log')
      log.push({ 'timestamp-ms': previous.lastUpdatedMs, 'metadata-file': previous.location })
      const max = Math.max(1, Number.parseInt(this.#properties()[PREVIOUS_VERSIONS_MAX] ?? '100', 10) || 100)
      if (log.length > max) log.splice(0, log.length - max)
    }
    return canonicalMetadata(m)
  }
}

function checkFormatVersion (v: number): void {
  if (!Number.isInteger(v) || v < 1 || v > SUPPORTED_FORMAT_VERSION) {
    throw badRequest(`Unsupported format version: ${v} (supported: 1 to ${SUPPORTED_FORMAT_VERSION})`)
  }
}

const sourceIds = (f: JsonObject): unknown => f['source-ids'] ?? [f['source-id']]

function sourceOf (f: JsonObject, what: string): JsonObject {
  const single = f['source-id']
  const many = f['source-ids']
  if (typeof single === 'number' && Number.isInteger(single)) return { 'source-id': single }
  if (Array.isArray(many) && many.length > 0 && many.every(x => typeof x === 'number' && Number.isInteger(x))) {
    return many.length === 1 ? { 'source-id': many[0] } : { 'source-ids': many }
  }
  throw badRequest(`Invalid ${what}: source-id must be an integer`)
}

function partitionField (f: unknown, i: number): JsonObject {
  const what = `partition field ${i}`
  if (!isObject(f)) throw badRequest(`Invalid ${what}: must be an object`)
  if (typeof f.name !== 'string' || f.name.length === 0) throw badRequest(`Invalid ${what}: name must be a non-empty string`)
  if (typeof f.transform !== 'string' || f.transform.length === 0) throw badRequest(`Invalid ${what}: transform must be a string`)
  const out: JsonObject = { name: f.name, transform: f.transform.toLowerCase(), ...sourceOf(f, what) }
  if (f['field-id'] !== undefined && f['field-id'] !== null) {
    if (typeof f['field-id'] !== 'number' || !Number.isInteger(f['field-id'])) throw badRequest(`Invalid ${what}: field-id must be an integer`)
    out['field-id'] = f['field-id']
  }
  return out
}

function sortField (f: unknown, i: number): JsonObject {
  const what = `sort field ${i}`
  if (!isObject(f)) throw badRequest(`Invalid ${what}: must be an object`)
  if (typeof f.transform !== 'string' || f.transform.length === 0) throw badRequest(`Invalid ${what}: transform must be a string`)
  const direction = String(f.direction).toLowerCase()
  const nullOrder = String(f['null-order']).toLowerCase()
  if (direction !== 'asc' && direction !== 'desc') throw badRequest(`Invalid ${what}: direction must be asc or desc`)
  if (nullOrder !== 'nulls-first' && nullOrder !== 'nulls-last') throw badRequest(`Invalid ${what}: null-order must be nulls-first or nulls-last`)
  return { transform: f.transform.toLowerCase(), ...sourceOf(f, what), direction, 'null-order': nullOrder }
}

const ACTIONS: Record<string, (b: MetadataBuilder, u: Update) => void> = {
  'assign-uuid': (b, u) => b.assignUuid(u.uuid as string),
  'upgrade-format-version': (b, u) => b.upgradeFormatVersion(u['format-version'] as number),
  'add-schema': (b, u) => b.addSchema(u.schema),
  'set-current-schema': (b, u) => b.setCurrentSchema(u['schema-id'] as number),
  'add-spec': (b, u) => b.addSpec(u.spec as JsonObject),
  'set-default-spec': (b, u) => b.setDefaultSpec(u['spec-id'] as number),
  'add-sort-order': (b, u) => b.addSortOrder(u['sort-order'] as JsonObject),
  'set-default-sort-order': (b, u) => b.setDefaultSortOrder(u['sort-order-id'] as number),
  'add-snapshot': (b, u) => b.addSnapshot(u.snapshot as JsonObject),
  'set-snapshot-ref': (b, u) => b.setSnapshotRef(u),
  'remove-snapshots': (b, u) => b.removeSnapshots(u['snapshot-ids'] as unknown[]),
  'remove-snapshot-ref': (b, u) => b.removeSnapshotRef(u['ref-name'] as string),
  'set-location': (b, u) => b.setLocation(u.location as string),
  'set-properties': (b, u) => b.setProperties(stringMap(u.updates ?? u.updated, 'set-properties updates')),
  'remove-properties': (b, u) => b.removeProperties(stringList(u.removals ?? u.removed, 'remove-properties removals')),
  'set-statistics': (b, u) => b.setSnapshotFile('statistics', u.statistics as JsonObject),
  'remove-statistics': (b, u) => b.removeSnapshotFile('statistics', u['snapshot-id']),
  'set-partition-statistics': (b, u) => b.setSnapshotFile('partition-statistics', u['partition-statistics'] as JsonObject),
  'remove-partition-statistics': (b, u) => b.removeSnapshotFile('partition-statistics', u['snapshot-id']),
  'remove-partition-specs': (b, u) => b.removeSpecs(u['spec-ids'] as number[]),
  'remove-schemas': (b, u) => b.removeSchemas(u['schema-ids'] as number[]),
  'add-encryption-key': (b, u) => b.addEncryptionKey(u['encryption-key'] as JsonObject),
  'remove-encryption-key': (b, u) => b.removeEncryptionKey(u['key-id'] as string)
}

const KEY_ORDER = [
  'format-version', 'table-uuid', 'location', 'last-sequence-number', 'last-updated-ms', 'last-column-id',
  'schema', 'current-schema-id', 'schemas', 'partition-spec', 'default-spec-id', 'partition-specs',
  'last-partition-id', 'default-sort-order-id', 'sort-orders', 'properties', 'current-snapshot-id', 'refs',
  'snapshots', 'statistics', 'partition-statistics', 'snapshot-log', 'metadata-log', 'next-row-id', 'encryption-keys'
]

/**
 * The metadata in the shape of its format version (spec "Table Metadata Fields"): v1 also carries
 * the current `schema` and `partition-spec`; v2+ carries `last-sequence-number`; v3 `next-row-id`.
 * Keys come in Java's order; unknown keys (from a registered file) are kept at the end.
 */
export function canonicalMetadata (m: Metadata): Metadata {
  const v = intOf(m['format-version'], 1)
  const currentSchema = list(m, 'schemas').find(s => s['schema-id'] === m['current-schema-id'])
  const defaultSpec = list(m, 'partition-specs').find(s => s['spec-id'] === m['default-spec-id'])
  const shaped: Metadata = { ...m }
  if (v === 1) {
    shaped.schema = currentSchema
    shaped['partition-spec'] = defaultSpec?.fields ?? []
    delete shaped['last-sequence-number']
  } else {
    delete shaped.schema
    delete shaped['partition-spec']
    shaped['last-sequence-number'] ??= 0
  }
  if (v >= 3) shaped['next-row-id'] ??= 0
  else delete shaped['next-row-id']
  // Older readers require current-snapshot-id; -1 means "no current snapshot" to all clients.
  if (shaped['current-snapshot-id'] === undefined || shaped['current-snapshot-id'] === null) shaped['current-snapshot-id'] = -1
  shaped.refs ??= {}
  for (const key of ['snapshots', 'statistics', 'partition-statistics', 'snapshot-log', 'metadata-log']) shaped[key] ??= []
  const out: Metadata = {}
  for (const key of KEY_ORDER) if (shaped[key] !== undefined) out[key] = shaped[key]
  for (const key of Object.keys(shaped)) if (!Object.hasOwn(out, key) && shaped[key] !== undefined) defineOwn(out, key, shaped[key])
  return out
}
