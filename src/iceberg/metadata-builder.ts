/**
 * The table metadata builder: applies the spec's update actions to table metadata in order, as
 * Iceberg Java's `TableMetadata.Builder` does when the REST reference server runs
 * `update.applyTo(builder)` (`CatalogHandlers`), and iceberg-rust's `TableMetadataBuilder`. The
 * gate applies a commit with it to judge what the catalog would store; the embedded catalog
 * applies it to store exactly that.
 *
 * Problems never throw: each becomes an issue with the path of its update, the Java exception a
 * catalog answers with and, where a spec rule owns it, the rule id. The base is never changed, and
 * the result shares every schema, spec, snapshot and log entry it did not change with the base.
 *
 * Metadata read without its data parts (`TableMetadata.data` absent: the gate) gets the same
 * application to the parts it holds; what needs snapshots (add-snapshot, remove-snapshots,
 * statistics, encryption keys, a ref's target) is checked for shape only.
 *
 * Deliberately absent: evolution rules (type promotion, field id reuse, required columns).
 * Catalogs accept such changes; judging them is the rules' job.
 */
import { isObject, own, toInt, toLongText, type JsonObject } from './json-values.js'
import { longValue } from './json-text.js'
import { parsePartitionSpec, parseSchemaShape, parseSortOrder, plainRecord } from './parse.js'
import { lastAssignedPartitionId } from './requirements.js'
import { MAIN, REF_RETENTION, TableDataBuilder } from './table-data-builder.js'
import { fieldValue, readUpdate, type ReadUpdate, type UpdateTarget } from './table-update.js'
import { schemaCompatibilityProblems } from './schema-compatibility.js'
import { findSameSchema } from './schema-fingerprint.js'
import { parseViewVersion } from './view-metadata.js'
import type {
  ApplyIssue, IcebergType, PartitionField, PartitionSpec, Schema, SortField, SortOrder, TableData, TableMetadata,
  WholeTableMetadata, WireObject
} from './types.js'

export type { ApplyIssue } from './types.js'

export interface ApplyResult {
  readonly proposed: TableMetadata
  /** Schemas this commit really adds (an add equal to an existing schema adds nothing). */
  readonly addedSchemas: Schema[]
  readonly currentSchemaChanged: boolean
  readonly specChanged: boolean
  readonly sortOrderChanged: boolean
  readonly issues: ApplyIssue[]
  readonly lastAddedSchemaId?: number
}

const CURRENT_SCHEMA_KNOWN = 'CURRENT_SCHEMA_KNOWN'
const CURRENT_SCHEMA_NOT_REMOVED = 'CURRENT_SCHEMA_NOT_REMOVED'

/** Highest format version this engine understands. */
const SUPPORTED_FORMAT_VERSION = 3
/** Java `PARTITION_DATA_ID_START - 1`: the first partition field id assigned is 1000. */
const INITIAL_PARTITION_ID = 999
const PREVIOUS_VERSIONS_MAX = 'write.metadata.previous-versions-max'
const PREVIOUS_VERSIONS_MAX_DEFAULT = 100

/** What a finished build needs from outside. */
interface BuildContext {
  /** Location of the metadata file the base was read from; it enters `metadata-log`. */
  readonly previousFile?: string
  /** A fresh uuid, used when the table has none yet. */
  readonly newUuid: () => string
}

interface BuilderOptions {
  /** Epoch milliseconds of this change (`last-updated-ms`, log entries); default the clock's. */
  readonly now?: number
}

type BuildOutcome =
  | { readonly ok: true, readonly metadata: WholeTableMetadata | undefined }
  | { readonly ok: false, readonly issues: ApplyIssue[] }

/** An empty table as a create starts from (Java `TableMetadata.buildFromEmpty`). */
function emptyTable (formatVersion: 1 | 2 | 3 = 2): TableMetadata {
  return {
    formatVersion,
    lastColumnId: 0,
    schemas: [],
    currentSchemaId: -1,
    partitionSpecs: [],
    defaultSpecId: -1,
    lastPartitionId: INITIAL_PARTITION_ID,
    sortOrders: [],
    defaultSortOrderId: -1,
    properties: plainRecord<string>(),
    refs: plainRecord<string>()
  }
}

/** The data parts of a table that has none yet. */
function emptyTableData (): TableData {
  return {
    lastSequenceNumber: '0',
    lastUpdatedMs: '0',
    nextRowId: '0',
    currentSnapshotId: '-1',
    refs: plainRecord<WireObject>(),
    snapshots: [],
    statistics: [],
    partitionStatistics: [],
    snapshotLog: [],
    metadataLog: [],
    extra: []
  }
}

/** The format version a create starts from: the first `upgrade-format-version` of its updates, else 2. */
export function initialFormatVersion (updates: readonly unknown[]): 1 | 2 | 3 {
  // Java's create path builds from empty with the version the first upgrade-format-version names.
  for (const u of updates) {
    if (isObject(u) && String(own(u, 'action')).toLowerCase() === 'upgrade-format-version') {
      const v = toInt(own(u, 'format-version'))
      if (v === 1 || v === 2 || v === 3) return v
    }
  }
  return 2
}

/** Highest field id anywhere in a type tree (struct fields, list elements, map keys and values). */
function highestFieldId (root: IcebergType): number {
  let max = 0
  const stack: IcebergType[] = [root]
  while (stack.length > 0) {
    const t = stack.pop() as IcebergType
    if (t.kind === 'struct') {
      for (const f of t.fields) {
        if (f.id > max) max = f.id
        stack.push(f.type)
      }
    } else if (t.kind === 'list') {
      if (t.elementId > max) max = t.elementId
      stack.push(t.element)
    } else if (t.kind === 'map') {
      if (t.keyId > max) max = t.keyId
      if (t.valueId > max) max = t.valueId
      stack.push(t.key, t.value)
    }
  }
  return max
}

const sameIds = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/** Java `PartitionSpec.compatibleWith`: the same source ids, transforms and names, in order. */
function compatibleSpec (a: readonly PartitionField[], b: readonly PartitionField[]): boolean {
  return a.length === b.length && a.every((f, i) => {
    const g = b[i] as PartitionField
    return f.name === g.name && f.transform === g.transform && sameIds(f.sourceIds, g.sourceIds)
  })
}

/** Java `SortOrder.sameOrder`. */
function sameOrder (a: readonly SortField[], b: readonly SortField[]): boolean {
  return a.length === b.length && a.every((f, i) => {
    const g = b[i] as SortField
    return f.transform === g.transform && f.direction === g.direction && f.nullOrder === g.nullOrder && sameIds(f.sourceIds, g.sourceIds)
  })
}

export class TableMetadataBuilder {
  readonly issues: ApplyIssue[] = []
  private readonly start: TableMetadata
  private formatVersion: 1 | 2 | 3
  private tableUuid: string | undefined
  private location: string | undefined
  private lastColumnId: number
  // The base's lists until an update changes them: a version shares what it did not change.
  private schemas: readonly Schema[]
  private currentSchemaId: number
  private partitionSpecs: readonly PartitionSpec[]
  private defaultSpecId: number
  private lastPartitionId: number
  private sortOrders: readonly SortOrder[]
  private defaultSortOrderId: number
  // Copied on the first update that writes them: most commits touch neither, and the base's own
  // records are never changed.
  private properties: Record<string, string> | undefined
  private refs: Record<string, string> | undefined
  private refTypes: Record<string, 'branch' | 'tag'> | undefined
  private readonly data: TableDataBuilder | undefined
  private readonly now: number

  private changed: boolean
  private readonly addedSchemas: Schema[] = []
  private readonly addedSchemaIds = new Set<number>()
  private readonly addedSpecIds = new Set<number>()
  private readonly addedOrderIds = new Set<number>()
  private lastAddedSchemaId: number | undefined
  private lastAddedSpecId: number | undefined
  private lastAddedOrderId: number | undefined
  // After an add-schema that could not be read, "-1" has nothing to point at; the add's own issue says why.
  private failedAdd = false
  private specChanged = false
  private sortOrderChanged = false

  private constructor (start: TableMetadata, isNew: boolean, opts: BuilderOptions) {
    this.start = start
    this.changed = isNew
    this.formatVersion = start.formatVersion
    this.tableUuid = start.tableUuid
    this.location = start.location
    this.lastColumnId = start.lastColumnId
    this.schemas = start.schemas
    this.currentSchemaId = start.currentSchemaId
    this.partitionSpecs = start.partitionSpecs
    this.defaultSpecId = start.defaultSpecId
    this.lastPartitionId = lastAssignedPartitionId(start)
    this.sortOrders = start.sortOrders
    this.defaultSortOrderId = start.defaultSortOrderId
    this.now = opts.now ?? Date.now()
    this.data = start.data === undefined ? undefined : new TableDataBuilder(start.data, this.now, (at, message, extra) => this.issue(at, message, extra))
  }

  /**
   * A builder for a table that does not exist yet (Java `TableMetadata.buildFromEmpty`); with
   * `data`, the whole metadata of a new table is built (a catalog's create).
   */
  static fromEmpty (formatVersion: 1 | 2 | 3, opts: BuilderOptions & { data: boolean }): TableMetadataBuilder {
    const start = emptyTable(formatVersion)
    return new TableMetadataBuilder(opts.data ? { ...start, data: emptyTableData() } : start, true, opts)
  }

  /** A builder over existing metadata (Java `TableMetadata.buildFrom`). */
  static from (base: TableMetadata, opts: BuilderOptions = {}): TableMetadataBuilder {
    return new TableMetadataBuilder(base, false, opts)
  }

  /** The current format version, as updates so far left it. */
  get version (): 1 | 2 | 3 {
    return this.formatVersion
  }

  private issue (at: string, message: string, extra: { rule?: string, exception?: ApplyIssue['exception'] } = {}): void {
    this.issues.push({ at, message, exception: 'IllegalArgumentException', ...extra })
  }

  /** Applies every update of a commit in order (`target` view: the gate's structural view check). */
  applyAll (updates: unknown, target: UpdateTarget = 'table'): void {
    if (updates === undefined || updates === null) return
    if (!Array.isArray(updates)) { this.issue('updates', 'Cannot read commit: updates must be an array'); return }
    for (let i = 0; i < updates.length; i++) this.apply(updates[i], i, target)
  }

  /** Applies update `i` of a commit. */
  apply (u: unknown, i: number, target: UpdateTarget = 'table'): void {
    const read = readUpdate(u, i, target, this.issues)
    if (read === undefined) {
      if (isObject(u) && String(own(u, 'action')).toLowerCase() === 'add-schema') { this.failedAdd = true; this.lastAddedSchemaId = undefined }
      return
    }
    this.applyRead(read, i, target)
  }

  private applyRead ({ action, spec, update: u }: ReadUpdate, i: number, target: UpdateTarget): void {
    const at = `updates[${i}]`
    const field = (name: string): unknown => {
      const f = spec.fields.find(x => x.name === name)
      return f === undefined ? undefined : fieldValue(u, f)
    }
    switch (action) {
      case 'assign-uuid': this.assignUuid(field('uuid') as string); return
      case 'set-location': this.setLocation(field('location') as string, `${at}.location`); return
      case 'upgrade-format-version':
        // A view's format version is the view's own (view metadata v1), not a table's.
        if (target === 'table') this.upgradeFormatVersion(toInt(field('format-version')) as number, `${at}.format-version`)
        return
      case 'add-schema': {
        const schema = parseSchemaShape(field('schema'), `${at}.schema`, this.issues)
        if (schema === undefined) { this.failedAdd = true; this.lastAddedSchemaId = undefined; return }
        this.addSchema(schema)
        return
      }
      case 'set-current-schema': this.setCurrentSchema(toInt(field('schema-id')) as number, `${at}.schema-id`); return
      case 'remove-schemas': this.removeSchemas((field('schema-ids') as unknown[]).map(x => toInt(x) as number), `${at}.schema-ids`); return
      case 'add-spec': {
        const parsed = parsePartitionSpec(field('spec'), `${at}.spec`, this.issues)
        if (parsed !== undefined) this.addSpec(parsed.fields, `${at}.spec`)
        return
      }
      case 'set-default-spec': this.setDefaultSpec(toInt(field('spec-id')) as number, `${at}.spec-id`); return
      case 'remove-partition-specs': this.removeSpecs((field('spec-ids') as unknown[]).map(x => toInt(x) as number), `${at}.spec-ids`); return
      case 'add-sort-order': {
        const parsed = parseSortOrder(field('sort-order'), `${at}.sort-order`, this.issues)
        if (parsed !== undefined) this.addSortOrder(parsed.fields, `${at}.sort-order`)
        return
      }
      case 'set-default-sort-order': this.setDefaultSortOrder(toInt(field('sort-order-id')) as number, `${at}.sort-order-id`); return
      case 'set-properties': this.setProperties(field('updates') as Readonly<Record<string, string>>); return
      case 'remove-properties': this.removeProperties(field('removals') as string[]); return
      case 'add-snapshot': this.addSnapshot(field('snapshot') as WireObject, `${at}.snapshot`); return
      case 'set-snapshot-ref': {
        const retention: Record<string, unknown> = {}
        for (const key of REF_RETENTION) {
          const v = field(key)
          if (v !== undefined) retention[key] = v
        }
        this.setRef(field('ref-name') as string, (field('type') as string).toLowerCase() as 'branch' | 'tag', field('snapshot-id'), retention, at)
        return
      }
      case 'remove-snapshot-ref': this.removeRef(field('ref-name') as string); return
      case 'remove-snapshots': this.removeSnapshots(field('snapshot-ids') as unknown[]); return
      case 'set-statistics': this.setStatistics('statistics', field('statistics') as WireObject, `${at}.statistics`); return
      case 'set-partition-statistics': this.setStatistics('partitionStatistics', field('partition-statistics') as WireObject, `${at}.partition-statistics`); return
      case 'remove-statistics': this.removeStatistics('statistics', toLongText(field('snapshot-id')) as string); return
      case 'remove-partition-statistics': this.removeStatistics('partitionStatistics', toLongText(field('snapshot-id')) as string); return
      case 'add-encryption-key': this.addEncryptionKey(field('encryption-key') as WireObject, `${at}.encryption-key`); return
      case 'remove-encryption-key': this.removeEncryptionKey(field('key-id') as string); return
      case 'add-view-version': {
        // The gate's view check: a view's current schema is the one its new version names; -1 is
        // the schema added by this commit. The view itself is `view-metadata-builder.ts`'s.
        const vv = field('view-version') as JsonObject
        // Java's ViewVersionParser refuses a malformed version before anything is applied.
        if (parseViewVersion(vv, `${at}.view-version`, this.issues) === undefined) return
        const sid = toInt(own(vv, 'schema-id'))
        if (sid === undefined) { this.issue(`${at}.view-version.schema-id`, 'Cannot apply add-view-version: view-version.schema-id must be an integer'); return }
        const id = sid === -1 ? this.lastAddedSchemaId : sid
        const known = id !== undefined && this.schemas.some(s => s.schemaId === id)
        // The gate checks a view commit without the view (judge-write.ts), so a version may name a
        // schema the view already has (ALTER VIEW with the same columns sends no add-schema): only
        // the catalog can resolve that id (Java ViewMetadata.Builder.addVersion), and the schema was
        // checked when it was added. -1 must name a schema of this commit.
        if (!known && (sid === -1 || this.start.schemas.length > 0)) {
          this.issue(`${at}.view-version.schema-id`, `Cannot add view version: unknown schema ${sid}`, { rule: CURRENT_SCHEMA_KNOWN })
          return
        }
        if (known) this.currentSchemaId = id
        break
      }
      case 'set-current-view-version':
    }
  }

  // Each method below is one `TableMetadata.Builder` method; `at` locates its issues.

  /** Java and iceberg-rust set the uuid as given; `assert-table-uuid` is what guards a table's identity. */
  assignUuid (uuid: string): void {
    if (uuid === this.tableUuid) return
    this.tableUuid = uuid
    this.changed = true
  }

  upgradeFormatVersion (version: number, at = 'format-version'): void {
    if (version > SUPPORTED_FORMAT_VERSION) {
      this.issue(at, `Cannot upgrade table to unsupported format version: v${version} (supported: v${SUPPORTED_FORMAT_VERSION})`)
      return
    }
    if (version < this.formatVersion) { this.issue(at, `Cannot downgrade v${this.formatVersion} table to v${version}`); return }
    if (version === this.formatVersion) return
    this.formatVersion = version as 1 | 2 | 3
    this.changed = true
  }

  /**
   * Java `addSchema` (`addSchemaInternal`, `reuseOrCreateNewSchemaId`): an equal schema keeps its
   * id and adds nothing; otherwise the id is the highest + 1 and last-column-id rises to the
   * schema's highest field id. The client's schema-id and deprecated last-column-id are not used.
   */
  addSchema (schema: Schema): number {
    const existing = findSameSchema(this.schemas, schema)
    if (existing?.schemaId !== undefined) {
      // An add equal to a schema that was there before this commit is not "last added".
      this.lastAddedSchemaId = this.addedSchemaIds.has(existing.schemaId) ? existing.schemaId : undefined
      return existing.schemaId
    }
    let id = Math.max(this.currentSchemaId, 0)
    for (const s of this.schemas) if (s.schemaId !== undefined && s.schemaId >= id) id = s.schemaId + 1
    const added: Schema = schema.schemaId === id ? schema : { ...schema, schemaId: id }
    this.lastColumnId = Math.max(this.lastColumnId, highestFieldId(added.struct))
    this.schemas = [...this.schemas, added]
    this.addedSchemas.push(added)
    this.addedSchemaIds.add(id)
    this.lastAddedSchemaId = id
    this.changed = true
    return id
  }

  setCurrentSchema (schemaId: number, at = 'schema-id'): void {
    let id = schemaId
    if (id === -1) {
      if (this.lastAddedSchemaId === undefined) {
        if (!this.failedAdd) this.issue(at, 'Cannot set last added schema: no schema has been added', { rule: CURRENT_SCHEMA_KNOWN, exception: 'ValidationException' })
        return
      }
      id = this.lastAddedSchemaId
    }
    if (id === this.currentSchemaId) return
    if (!this.schemas.some(s => s.schemaId === id)) {
      this.issue(at, `Cannot set current schema to unknown schema: ${id}`, { rule: CURRENT_SCHEMA_KNOWN })
      return
    }
    this.currentSchemaId = id
    this.changed = true
  }

  removeSchemas (ids: readonly number[], at = 'schema-ids'): void {
    if (ids.includes(this.currentSchemaId)) {
      this.issue(at, `Cannot remove current schema: ${this.currentSchemaId}`, { rule: CURRENT_SCHEMA_NOT_REMOVED, exception: 'ValidationException' })
    }
    const drop = new Set(ids.filter(id => id !== this.currentSchemaId))
    const kept = this.schemas.filter(s => s.schemaId === undefined || !drop.has(s.schemaId))
    if (kept.length === this.schemas.length) return
    this.schemas = kept
    this.changed = true
  }

  /**
   * Java `addPartitionSpec`: a spec compatible with an existing one reuses its id; otherwise the id
   * is the highest + 1. A field without an id gets, from v2 on, the id of a field with the same
   * source and transform in any spec (iceberg-rust `TableMetadataBuilder::reuse_partition_field_ids`), else
   * the next after `last-partition-id`, which only grows.
   */
  addSpec (given: readonly PartitionField[], at = 'spec'): number | undefined {
    const fields: PartitionField[] = []
    for (let i = 0; i < given.length; i++) {
      const f = given[i] as PartitionField
      if (f.name === '') { this.issue(`${at}.fields[${i}].name`, 'Cannot add partition field: name must not be empty'); return undefined }
      fields.push({ ...f, transform: f.transform.toLowerCase() })
    }
    const existing = this.partitionSpecs.find(s => compatibleSpec(s.fields, fields))
    if (existing !== undefined) {
      this.lastAddedSpecId = this.addedSpecIds.has(existing.specId) ? existing.specId : undefined
      return existing.specId
    }
    let last = Math.max(this.lastPartitionId, INITIAL_PARTITION_ID)
    const assigned = fields.map(f => {
      let fieldId = f.fieldId
      if (fieldId === undefined) {
        const match = this.formatVersion > 1 ? this.partitionSpecs.flatMap(s => s.fields).find(k => k.fieldId !== undefined && k.transform === f.transform && sameIds(k.sourceIds, f.sourceIds)) : undefined
        fieldId = match?.fieldId ?? last + 1
      }
      if (fieldId > last) last = fieldId
      return { ...f, fieldId }
    })
    let id = 0
    for (const s of this.partitionSpecs) if (s.specId >= id) id = s.specId + 1
    this.partitionSpecs = [...this.partitionSpecs, { specId: id, fields: assigned }]
    this.lastPartitionId = last
    this.addedSpecIds.add(id)
    this.lastAddedSpecId = id
    this.specChanged = true
    this.changed = true
    return id
  }

  setDefaultSpec (specId: number, at = 'spec-id'): void {
    let id = specId
    if (id === -1) {
      if (this.lastAddedSpecId === undefined) { this.issue(at, 'Cannot set last added spec: no spec has been added', { exception: 'ValidationException' }); return }
      id = this.lastAddedSpecId
    }
    if (id === this.defaultSpecId) return
    if (!this.partitionSpecs.some(s => s.specId === id)) { this.issue(at, `Cannot set default partition spec to unknown spec: ${id}`); return }
    this.defaultSpecId = id
    this.specChanged = true
    this.changed = true
  }

  removeSpecs (ids: readonly number[], at = 'spec-ids'): void {
    if (ids.includes(this.defaultSpecId)) this.issue(at, `Cannot remove the default partition spec: ${this.defaultSpecId}`, { exception: 'ValidationException' })
    const drop = new Set(ids.filter(id => id !== this.defaultSpecId))
    const kept = this.partitionSpecs.filter(s => !drop.has(s.specId))
    if (kept.length === this.partitionSpecs.length) return
    this.partitionSpecs = kept
    this.specChanged = true
    this.changed = true
  }

  /** Java `addSortOrder` (`reuseOrCreateNewSortOrderId`): the unsorted order is id 0, sorted orders start at 1. */
  addSortOrder (given: readonly SortField[], at = 'sort-order'): number | undefined {
    const fields: SortField[] = []
    for (let i = 0; i < given.length; i++) {
      const f = given[i] as SortField
      const direction = f.direction.toLowerCase()
      const nullOrder = f.nullOrder.toLowerCase()
      if (direction !== 'asc' && direction !== 'desc') { this.issue(`${at}.fields[${i}].direction`, 'Cannot add sort field: direction must be asc or desc'); return undefined }
      if (nullOrder !== 'nulls-first' && nullOrder !== 'nulls-last') { this.issue(`${at}.fields[${i}].null-order`, 'Cannot add sort field: null-order must be nulls-first or nulls-last'); return undefined }
      fields.push({ sourceIds: f.sourceIds, transform: f.transform.toLowerCase(), direction, nullOrder })
    }
    const existing = this.sortOrders.find(o => sameOrder(o.fields, fields))
    if (existing !== undefined) {
      this.lastAddedOrderId = this.addedOrderIds.has(existing.orderId) ? existing.orderId : undefined
      return existing.orderId
    }
    let id = fields.length === 0 ? 0 : 1
    if (id !== 0) for (const o of this.sortOrders) if (o.orderId >= id) id = o.orderId + 1
    this.sortOrders = [...this.sortOrders, { orderId: id, fields }]
    this.addedOrderIds.add(id)
    this.lastAddedOrderId = id
    this.sortOrderChanged = true
    this.changed = true
    return id
  }

  setDefaultSortOrder (orderId: number, at = 'sort-order-id'): void {
    let id = orderId
    if (id === -1) {
      if (this.lastAddedOrderId === undefined) { this.issue(at, 'Cannot set last added sort order: no sort order has been added', { exception: 'ValidationException' }); return }
      id = this.lastAddedOrderId
    }
    if (id === this.defaultSortOrderId) return
    if (!this.sortOrders.some(o => o.orderId === id)) { this.issue(at, `Cannot set default sort order to unknown sort order: ${id}`); return }
    this.defaultSortOrderId = id
    this.sortOrderChanged = true
    this.changed = true
  }

  /** A property set to the value it has is no change (no new metadata file for it). */
  setProperties (updates: Readonly<Record<string, string>>): void {
    for (const key of Object.keys(updates)) {
      const value = updates[key] as string
      const current = this.properties ?? this.start.properties
      if (Object.hasOwn(current, key) && current[key] === value) continue
      this.properties ??= Object.assign(plainRecord<string>(), this.start.properties)
      this.properties[key] = value
      this.changed = true
    }
  }

  removeProperties (keys: readonly string[]): void {
    for (const key of keys) {
      if (!Object.hasOwn(this.properties ?? this.start.properties, key)) continue
      this.properties ??= Object.assign(plainRecord<string>(), this.start.properties)
      delete this.properties[key]
      this.changed = true
    }
  }

  setLocation (location: string, at = 'location'): void {
    if (location === '') { this.issue(at, 'Cannot set location: it is empty'); return }
    if (location === this.location) return
    this.location = location
    this.changed = true
  }

  // What needs snapshots is the data builder's (`table-data-builder.ts`); without data parts (the
  // gate) it was checked for shape by the action table and nothing more is known about it.

  addSnapshot (snapshot: WireObject, at = 'snapshot'): void {
    this.data?.addSnapshot(snapshot, at, { formatVersion: this.formatVersion, hasSchema: this.schemas.length > 0 })
  }

  /**
   * Java `setRef`. A tag keeps no snapshots and `main` is a branch; with data parts the ref must
   * name a known snapshot (and `main` makes it current).
   */
  setRef (name: string, type: 'branch' | 'tag', snapshotId: unknown, retention: Readonly<Record<string, unknown>>, at = 'ref'): void {
    if (type === 'tag') {
      for (const key of ['min-snapshots-to-keep', 'max-snapshot-age-ms']) {
        if (retention[key] !== undefined) { this.issue(`${at}.${key}`, `Cannot set tag ${name}: tags do not support ${key}`); return }
      }
    }
    if (name === MAIN && type !== 'branch') { this.issue(`${at}.type`, 'Cannot set main to a tag, it must be a branch', { exception: 'ValidationException' }); return }
    if (this.data !== undefined && !this.data.setRef(name, type, snapshotId, retention, at)) return
    this.refs ??= Object.assign(plainRecord<string>(), this.start.refs)
    this.refTypes ??= Object.assign(plainRecord<'branch' | 'tag'>(), this.start.refTypes ?? {})
    this.refs[name] = toLongText(snapshotId) as string
    this.refTypes[name] = type
    this.changed = true
  }

  /** Java `removeRef`: removing `main` leaves the table without a current snapshot. */
  removeRef (name: string): void {
    this.data?.removeRef(name)
    if (!Object.hasOwn(this.refs ?? this.start.refs, name)) return
    this.refs ??= Object.assign(plainRecord<string>(), this.start.refs)
    this.refTypes ??= Object.assign(plainRecord<'branch' | 'tag'>(), this.start.refTypes ?? {})
    delete this.refs[name]
    delete this.refTypes[name]
    this.changed = true
  }

  /** Java `removeSnapshots`: refs left pointing at a removed snapshot are removed with it. */
  removeSnapshots (ids: readonly unknown[]): void {
    for (const name of this.data?.removeSnapshots(ids) ?? []) this.removeRef(name)
  }

  setStatistics (key: 'statistics' | 'partitionStatistics', file: WireObject, at: string): void {
    this.data?.setStatistics(key, file, at)
  }

  removeStatistics (key: 'statistics' | 'partitionStatistics', snapshotId: string): void {
    this.data?.removeStatistics(key, snapshotId)
  }

  addEncryptionKey (key: WireObject, at: string): void {
    this.data?.addEncryptionKey(key, at)
  }

  removeEncryptionKey (keyId: string): void {
    this.data?.removeEncryptionKey(keyId)
  }

  /** The metadata as updates so far left it; data parts are carried when the base had them. */
  private proposed (): TableMetadata {
    const s = this.start
    const m: TableMetadata = {
      formatVersion: this.formatVersion,
      ...(this.tableUuid === undefined ? {} : { tableUuid: this.tableUuid }),
      ...(this.location === undefined ? {} : { location: this.location }),
      lastColumnId: this.lastColumnId,
      schemas: this.schemas,
      currentSchemaId: this.currentSchemaId,
      partitionSpecs: this.partitionSpecs,
      defaultSpecId: this.defaultSpecId,
      lastPartitionId: this.lastPartitionId,
      sortOrders: this.sortOrders,
      defaultSortOrderId: this.defaultSortOrderId,
      properties: this.properties ?? s.properties,
      refs: this.refs ?? s.refs,
      refTypes: this.refTypes ?? s.refTypes ?? plainRecord<'branch' | 'tag'>()
    }
    return this.data === undefined ? m : { ...m, data: this.data.result() }
  }

  /** What the updates did, for judging (the gate). */
  result (): ApplyResult {
    const proposed = this.proposed()
    return {
      proposed,
      addedSchemas: this.addedSchemas,
      currentSchemaChanged: this.currentSchemaId !== this.start.currentSchemaId,
      specChanged: this.specChanged,
      sortOrderChanged: this.sortOrderChanged,
      issues: this.issues,
      ...(this.lastAddedSchemaId === undefined ? {} : { lastAddedSchemaId: this.lastAddedSchemaId })
    }
  }

  /**
   * Java `Builder.build()` for whole metadata: the checks a complete table must pass, the
   * defaults a new table still lacks (unpartitioned spec, unsorted order), `last-updated-ms`, and
   * the previous file in `metadata-log` (bounded by `write.metadata.previous-versions-max`).
   * `metadata` is undefined when nothing changed: no new metadata file (Java returns the base).
   */
  build (ctx: BuildContext): BuildOutcome {
    if (this.issues.length > 0) return { ok: false, issues: this.issues }
    if (!this.changed && this.data?.changed !== true) return { ok: true, metadata: undefined }
    const start = this.start
    if (start.data === undefined || this.data === undefined) throw new Error('build() needs whole metadata: start from metadata with its data parts')
    const fail = (message: string): BuildOutcome => ({ ok: false, issues: [{ at: '', message, exception: 'ValidationException' }] })
    if (!this.schemas.some(s => s.schemaId === this.currentSchemaId)) return fail('Cannot create a table without a current schema')
    if (this.partitionSpecs.length === 0) { this.partitionSpecs = [{ specId: 0, fields: [] }]; this.defaultSpecId = 0 }
    if (this.sortOrders.length === 0) { this.sortOrders = [{ orderId: 0, fields: [] }]; this.defaultSortOrderId = 0 }
    if (!this.partitionSpecs.some(s => s.specId === this.defaultSpecId)) return fail(`Cannot find default partition spec: ${this.defaultSpecId}`)
    if (!this.sortOrders.some(o => o.orderId === this.defaultSortOrderId)) return fail(`Cannot find default sort order: ${this.defaultSortOrderId}`)
    if (this.location === undefined) return fail('Cannot build table metadata without a location')
    // Java checks each schema against the format version when it builds (Schema.checkCompatibility).
    const incompatible = this.schemas.flatMap(s => schemaCompatibilityProblems(s, this.formatVersion))
    if (incompatible.length > 0) return { ok: false, issues: incompatible.map(p => ({ at: 'schema', message: p.message, rule: p.rule })) }
    this.tableUuid ??= ctx.newUuid()
    const proposed = this.proposed() as WholeTableMetadata
    let metadataLog = start.data.metadataLog
    if (ctx.previousFile !== undefined) {
      const raw = Number.parseInt(proposed.properties[PREVIOUS_VERSIONS_MAX] ?? '', 10)
      const max = Math.max(1, Number.isNaN(raw) ? PREVIOUS_VERSIONS_MAX_DEFAULT : raw)
      const entry: WireObject = { 'timestamp-ms': longValue(start.data.lastUpdatedMs), 'metadata-file': ctx.previousFile }
      metadataLog = [...metadataLog.slice(Math.max(0, metadataLog.length - max + 1)), entry]
    }
    const data: TableData = { ...proposed.data, lastUpdatedMs: this.data.lastUpdatedMs ?? String(this.now), metadataLog }
    return { ok: true, metadata: { ...proposed, data } }
  }
}
