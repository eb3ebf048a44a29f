/**
 * Applies a commit's updates to table metadata in order, as the reference server does
 * (`TableMetadata.Builder`, see reference §3.2 and §2.6), so the rules judge exactly what the
 * catalog would store. Problems never throw: each becomes an issue with the path of the update.
 */
import { isObject, own, toInt, toLongText, type JsonObject } from './json-values.js'
import { parsePartitionSpec, parseSchemaShape, parseSortOrder, plainRecord } from './parse.js'
import { lastAssignedPartitionId } from './requirements.js'
import { indexSchema } from './schema-index.js'
import { sameSchema } from './type-equality.js'
import type { ParseIssue, PartitionSpec, Schema, SortOrder, TableMetadata } from './types.js'

export { checkRequirements, requirementIssues, type RequirementConflict } from './requirements.js'

/** An issue found while applying; `rule` names the spec rule that owns it (default REQUEST_WELL_FORMED). */
export interface ApplyIssue extends ParseIssue {
  readonly rule?: string
}

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

export const CURRENT_SCHEMA_KNOWN = 'CURRENT_SCHEMA_KNOWN'
export const CURRENT_SCHEMA_NOT_REMOVED = 'CURRENT_SCHEMA_NOT_REMOVED'

/** Actions that touch nothing the rules read; they pass through after a shape check. */
const PASS_THROUGH: Readonly<Record<string, Readonly<Record<string, 'object' | 'array' | 'int' | 'long' | 'string'>>>> = {
  'add-snapshot': { snapshot: 'object' },
  'remove-snapshots': { 'snapshot-ids': 'array' },
  'set-statistics': { statistics: 'object' },
  'remove-statistics': { 'snapshot-id': 'long' },
  'set-partition-statistics': { 'partition-statistics': 'object' },
  'remove-partition-statistics': { 'snapshot-id': 'long' },
  'add-encryption-key': { 'encryption-key': 'object' },
  'remove-encryption-key': { 'key-id': 'string' },
  'add-view-version': { 'view-version': 'object' },
  'set-current-view-version': { 'view-version-id': 'int' }
}

const VIEW_ACTIONS = new Set(['assign-uuid', 'upgrade-format-version', 'add-schema', 'set-location', 'set-properties',
  'remove-properties', 'add-view-version', 'set-current-view-version'])
const VIEW_ONLY_ACTIONS = new Set(['add-view-version', 'set-current-view-version'])
const KNOWN_ACTIONS = new Set([...Object.keys(PASS_THROUGH), ...VIEW_ACTIONS, 'set-current-schema', 'add-spec',
  'set-default-spec', 'add-sort-order', 'set-default-sort-order', 'remove-schemas', 'remove-partition-specs',
  'set-snapshot-ref', 'remove-snapshot-ref'])

/** Highest format version this engine understands. */
export const SUPPORTED_FORMAT_VERSION = 3

function sameSpecFields (a: PartitionSpec, b: PartitionSpec): boolean {
  return a.fields.length === b.fields.length && a.fields.every((f, i) => {
    const g = b.fields[i]
    return g !== undefined && f.name === g.name && f.transform === g.transform &&
      f.sourceIds.length === g.sourceIds.length && f.sourceIds.every((s, j) => s === g.sourceIds[j]) &&
      (f.fieldId === undefined || g.fieldId === undefined || f.fieldId === g.fieldId)
  })
}

function sameOrderFields (a: SortOrder, b: SortOrder): boolean {
  return a.fields.length === b.fields.length && a.fields.every((f, i) => {
    const g = b.fields[i]
    return g !== undefined && f.transform === g.transform && f.direction === g.direction && f.nullOrder === g.nullOrder &&
      f.sourceIds.length === g.sourceIds.length && f.sourceIds.every((s, j) => s === g.sourceIds[j])
  })
}

function initialFormatVersion (updates: readonly unknown[]): 1 | 2 | 3 {
  // Java's create path builds from empty with the version the first upgrade-format-version names.
  for (const u of updates) {
    if (isObject(u) && String(own(u, 'action')).toLowerCase() === 'upgrade-format-version') {
      const v = toInt(own(u, 'format-version'))
      if (v === 1 || v === 2 || v === 3) return v
    }
  }
  return 2
}

/** An empty table as a create starts from (Java `TableMetadata.buildFromEmpty`). */
export function emptyTable (formatVersion: 1 | 2 | 3 = 2): TableMetadata {
  return {
    formatVersion,
    lastColumnId: 0,
    schemas: [],
    currentSchemaId: -1,
    partitionSpecs: [],
    defaultSpecId: -1,
    lastPartitionId: 999,
    sortOrders: [],
    defaultSortOrderId: -1,
    properties: plainRecord<string>(),
    refs: plainRecord<string>()
  }
}

/**
 * Applies `updates` to `base` (undefined: a create or staged create, starting empty).
 * add-schema reuses the id of an equal existing schema and ignores the client's `schema-id` and
 * deprecated `last-column-id`; `set-current-schema -1` means the schema added by this commit.
 */
export function applyUpdates (base: TableMetadata | undefined, updates: unknown[], target: 'table' | 'view' = 'table'): ApplyResult {
  const issues: ApplyIssue[] = []
  const list: readonly unknown[] = Array.isArray(updates) ? updates : []
  if (!Array.isArray(updates)) issues.push({ at: 'updates', message: 'Cannot apply updates: not an array' })
  const start = base ?? emptyTable(initialFormatVersion(list))

  let formatVersion = start.formatVersion
  let tableUuid = start.tableUuid
  let location = start.location
  let lastColumnId = start.lastColumnId
  let schemas: Schema[] = [...start.schemas]
  let currentSchemaId = start.currentSchemaId
  let partitionSpecs: PartitionSpec[] = [...start.partitionSpecs]
  let defaultSpecId = start.defaultSpecId
  let lastPartitionId = lastAssignedPartitionId(start)
  const sortOrders: SortOrder[] = [...start.sortOrders]
  let defaultSortOrderId = start.defaultSortOrderId
  // Copied on the first update that writes them: most commits touch neither properties nor refs,
  // and the base's own records are never mutated.
  let properties: Record<string, string> | undefined
  let refs: Record<string, string> | undefined
  let refTypes: Record<string, 'branch' | 'tag'> | undefined

  const addedSchemas: Schema[] = []
  const addedSchemaIds = new Set<number>()
  const addedSpecIds = new Set<number>()
  const addedOrderIds = new Set<number>()
  let lastAddedSchemaId: number | undefined
  let lastAddedSpecId: number | undefined
  let lastAddedOrderId: number | undefined
  // After an add-schema that could not be read, "-1" has nothing to point at; the add's own issue says why.
  let failedAdd = false
  let specChanged = false
  let sortOrderChanged = false

  list.forEach((u, i) => {
    if (!isObject(u)) { issues.push({ at: `updates[${i}]`, message: 'Cannot apply update: expected an object' }); return }
    const rawAction = own(u, 'action')
    if (typeof rawAction !== 'string') { issues.push({ at: `updates[${i}].action`, message: 'Cannot apply update: missing action' }); return }
    // Java reads the action case-insensitively (MetadataUpdateParser.fromJson).
    const action = rawAction.toLowerCase()
    if (!KNOWN_ACTIONS.has(action)) { issues.push({ at: `updates[${i}].action`, message: `Cannot apply unknown update action: ${rawAction}` }); return }
    if (target === 'view' && !VIEW_ACTIONS.has(action)) { issues.push({ at: `updates[${i}].action`, message: `Cannot apply update ${action} to a view` }); return }
    if (target === 'table' && VIEW_ONLY_ACTIONS.has(action)) { issues.push({ at: `updates[${i}].action`, message: `Cannot apply update ${action} to a table` }); return }

    const read = new UpdateReader(u, i, action, issues)
    switch (action) {
      case 'assign-uuid': { const v = read.str('uuid'); if (v !== undefined) tableUuid = v; return }
      case 'set-location': { const v = read.str('location'); if (v !== undefined) location = v; return }
      case 'upgrade-format-version': {
        const v = read.int('format-version')
        if (v === undefined) return
        if (target === 'view') return
        if (v > SUPPORTED_FORMAT_VERSION || v < 1) read.bad('format-version', `names unsupported format version v${v} (supported: v1 to v${SUPPORTED_FORMAT_VERSION})`)
        else if (v < formatVersion) issues.push({ at: `${read.at}.format-version`, message: `Cannot downgrade v${formatVersion} table to v${v}` })
        else formatVersion = v as 1 | 2 | 3
        return
      }
      case 'add-schema': {
        const raw = own(u, 'schema')
        if (raw === undefined || raw === null) { read.bad('schema', problemOf(raw, 'an object')); failedAdd = true; return }
        const lc = own(u, 'last-column-id')
        // Deprecated and ignored (reference §2.6; Java's readAddSchema never reads it); only its
        // shape is checked, and a JSON null is absent.
        if (lc !== undefined && lc !== null && toInt(lc) === undefined) read.bad('last-column-id', 'must be an integer')
        const parsed = parseSchemaShape(raw, `${read.at}.schema`, issues)
        if (parsed === undefined) { failedAdd = true; lastAddedSchemaId = undefined; return }
        const existing = schemas.find(s => sameSchema(s, parsed))
        if (existing?.schemaId !== undefined) {
          // Java: an add equal to a pre-existing schema leaves "last added" unset.
          lastAddedSchemaId = addedSchemaIds.has(existing.schemaId) ? existing.schemaId : undefined
          return
        }
        let id = 0
        for (const s of schemas) if (s.schemaId !== undefined && s.schemaId >= id) id = s.schemaId + 1
        const schema: Schema = { ...parsed, schemaId: id }
        lastColumnId = Math.max(lastColumnId, indexSchema(schema).highestId)
        schemas.push(schema)
        addedSchemas.push(schema)
        addedSchemaIds.add(id)
        lastAddedSchemaId = id
        return
      }
      case 'set-current-schema': {
        let id = read.int('schema-id')
        if (id === undefined) return
        if (id === -1) {
          if (lastAddedSchemaId === undefined) {
            if (failedAdd) return
            issues.push({ at: `${read.at}.schema-id`, rule: CURRENT_SCHEMA_KNOWN, message: 'Cannot set last added schema: no schema has been added' })
            return
          }
          id = lastAddedSchemaId
        }
        if (!schemas.some(s => s.schemaId === id)) {
          issues.push({ at: `${read.at}.schema-id`, rule: CURRENT_SCHEMA_KNOWN, message: `Cannot set current schema to unknown schema: ${id}` })
          return
        }
        currentSchemaId = id
        return
      }
      case 'remove-schemas': {
        const ids = read.ints('schema-ids')
        if (ids === undefined) return
        if (ids.includes(currentSchemaId)) {
          issues.push({ at: `${read.at}.schema-ids`, rule: CURRENT_SCHEMA_NOT_REMOVED, message: `Cannot remove current schema: ${currentSchemaId}` })
        }
        const drop = new Set(ids.filter(id => id !== currentSchemaId))
        schemas = schemas.filter(s => s.schemaId === undefined || !drop.has(s.schemaId))
        return
      }
      case 'add-spec': {
        const parsed = parsePartitionSpec(own(u, 'spec'), `${read.at}.spec`, issues)
        if (parsed === undefined) return
        const candidate: PartitionSpec = { specId: 0, fields: parsed.fields }
        const existing = partitionSpecs.find(s => sameSpecFields(s, candidate))
        if (existing !== undefined) {
          lastAddedSpecId = addedSpecIds.has(existing.specId) ? existing.specId : undefined
          return
        }
        let id = 0
        for (const s of partitionSpecs) if (s.specId >= id) id = s.specId + 1
        const fields = parsed.fields.map(f => {
          // v1 specs may omit field ids; they are assigned from the last partition id (spec "Partitioning").
          const fieldId = f.fieldId ?? ++lastPartitionId
          if (fieldId > lastPartitionId) lastPartitionId = fieldId
          return { ...f, fieldId }
        })
        partitionSpecs.push({ specId: id, fields })
        addedSpecIds.add(id)
        lastAddedSpecId = id
        specChanged = true
        return
      }
      case 'set-default-spec': {
        let id = read.int('spec-id')
        if (id === undefined) return
        if (id === -1) {
          if (lastAddedSpecId === undefined) { issues.push({ at: `${read.at}.spec-id`, message: 'Cannot set last added spec: no spec has been added' }); return }
          id = lastAddedSpecId
        }
        if (!partitionSpecs.some(s => s.specId === id)) { issues.push({ at: `${read.at}.spec-id`, message: `Cannot set default partition spec to unknown spec: ${id}` }); return }
        if (id !== defaultSpecId) specChanged = true
        defaultSpecId = id
        return
      }
      case 'remove-partition-specs': {
        const ids = read.ints('spec-ids')
        if (ids === undefined) return
        if (ids.includes(defaultSpecId)) issues.push({ at: `${read.at}.spec-ids`, message: `Cannot remove the default partition spec: ${defaultSpecId}` })
        const drop = new Set(ids.filter(id => id !== defaultSpecId))
        const before = partitionSpecs.length
        partitionSpecs = partitionSpecs.filter(s => !drop.has(s.specId))
        if (partitionSpecs.length !== before) specChanged = true
        return
      }
      case 'add-sort-order': {
        const parsed = parseSortOrder(own(u, 'sort-order'), `${read.at}.sort-order`, issues)
        if (parsed === undefined) return
        const candidate: SortOrder = { orderId: 0, fields: parsed.fields }
        const existing = sortOrders.find(o => sameOrderFields(o, candidate))
        if (existing !== undefined) {
          lastAddedOrderId = addedOrderIds.has(existing.orderId) ? existing.orderId : undefined
          return
        }
        // Java: the unsorted order is always id 0; sorted orders start at 1.
        let id = parsed.fields.length === 0 ? 0 : 1
        if (id !== 0) for (const o of sortOrders) if (o.orderId >= id) id = o.orderId + 1
        sortOrders.push({ orderId: id, fields: parsed.fields })
        addedOrderIds.add(id)
        lastAddedOrderId = id
        sortOrderChanged = true
        return
      }
      case 'set-default-sort-order': {
        let id = read.int('sort-order-id')
        if (id === undefined) return
        if (id === -1) {
          if (lastAddedOrderId === undefined) { issues.push({ at: `${read.at}.sort-order-id`, message: 'Cannot set last added sort order: no sort order has been added' }); return }
          id = lastAddedOrderId
        }
        if (!sortOrders.some(o => o.orderId === id)) { issues.push({ at: `${read.at}.sort-order-id`, message: `Cannot set default sort order to unknown order: ${id}` }); return }
        if (id !== defaultSortOrderId) sortOrderChanged = true
        defaultSortOrderId = id
        return
      }
      case 'set-properties': {
        // Java also reads the legacy `updated` key.
        const key = own(u, 'updates') !== undefined ? 'updates' : own(u, 'updated') !== undefined ? 'updated' : 'updates'
        const v = own(u, key)
        if (!isObject(v)) { read.bad(key, problemOf(v, 'an object of strings')); return }
        const bad = Object.keys(v).find(k => typeof v[k] !== 'string')
        if (bad !== undefined) { read.bad(`${key}.${bad}`, problemOf(v[bad], 'a string')); return }
        properties ??= Object.assign(plainRecord<string>(), start.properties)
        for (const [k, x] of Object.entries(v)) properties[k] = x as string
        return
      }
      case 'remove-properties': {
        const key = own(u, 'removals') !== undefined ? 'removals' : own(u, 'removed') !== undefined ? 'removed' : 'removals'
        const v = own(u, key)
        if (!Array.isArray(v)) { read.bad(key, problemOf(v, 'an array of strings')); return }
        if (v.some(x => typeof x !== 'string')) { read.bad(key, 'must be an array of strings'); return }
        properties ??= Object.assign(plainRecord<string>(), start.properties)
        for (const k of v as string[]) delete properties[k]
        return
      }
      case 'set-snapshot-ref': {
        const name = read.str('ref-name')
        const id = toLongText(own(u, 'snapshot-id'))
        if (id === undefined || typeof own(u, 'snapshot-id') === 'string') read.bad('snapshot-id', 'must be an integer')
        const type = own(u, 'type')
        if (type !== 'branch' && type !== 'tag') read.bad('type', 'must be "branch" or "tag"')
        if (name === undefined || id === undefined || (type !== 'branch' && type !== 'tag')) return
        refs ??= Object.assign(plainRecord<string>(), start.refs)
        refTypes ??= Object.assign(plainRecord<'branch' | 'tag'>(), start.refTypes ?? {})
        refs[name] = id
        refTypes[name] = type
        return
      }
      case 'remove-snapshot-ref': {
        const name = read.str('ref-name')
        if (name !== undefined) {
          refs ??= Object.assign(plainRecord<string>(), start.refs)
          refTypes ??= Object.assign(plainRecord<'branch' | 'tag'>(), start.refTypes ?? {})
          delete refs[name]
          delete refTypes[name]
        }
        return
      }
      case 'add-view-version': {
        const vv = own(u, 'view-version')
        if (!isObject(vv)) { read.bad('view-version', problemOf(vv, 'an object')); return }
        const before = issues.length
        issues.push(...viewVersionIssues(vv, `${read.at}.view-version`))
        if (issues.length > before) return
        // A view's current schema is the one its current version names; -1 = added in this commit.
        const sid = toInt(own(vv, 'schema-id'))
        if (sid === undefined) { read.bad('view-version.schema-id', 'must be an integer'); return }
        const id = sid === -1 ? lastAddedSchemaId : sid
        if (id === undefined || !schemas.some(s => s.schemaId === id)) {
          issues.push({ at: `${read.at}.view-version.schema-id`, rule: CURRENT_SCHEMA_KNOWN, message: `Cannot add view version: unknown schema ${sid}` })
          return
        }
        currentSchemaId = id
        return
      }
      default: {
        const shape = PASS_THROUGH[action] ?? {}
        for (const [field, kind] of Object.entries(shape)) checkShape(u, field, kind, read)
      }
    }
  })

  const proposed: TableMetadata = {
    formatVersion,
    ...(tableUuid === undefined ? {} : { tableUuid }),
    ...(location === undefined ? {} : { location }),
    lastColumnId,
    schemas,
    currentSchemaId,
    partitionSpecs,
    defaultSpecId,
    lastPartitionId,
    sortOrders,
    defaultSortOrderId,
    properties: properties ?? start.properties,
    refs: refs ?? start.refs,
    refTypes: refTypes ?? start.refTypes ?? plainRecord<'branch' | 'tag'>()
  }
  return {
    proposed,
    addedSchemas,
    currentSchemaChanged: currentSchemaId !== start.currentSchemaId,
    specChanged,
    sortOrderChanged,
    issues,
    ...(lastAddedSchemaId === undefined ? {} : { lastAddedSchemaId })
  }
}

/**
 * Reads the fields of one update; each problem becomes an issue at `updates[i].<field>`. One
 * object per update instead of a closure per reader, and the path is spelled only for a problem.
 */
class UpdateReader {
  constructor (private readonly u: JsonObject, private readonly i: number, private readonly action: string, private readonly issues: ApplyIssue[]) {}

  get at (): string { return `updates[${this.i}]` }

  bad (field: string, problem: string): void {
    this.issues.push({ at: `${this.at}.${field}`, message: `Cannot apply ${this.action}: ${field} ${problem}` })
  }

  int (field: string): number | undefined {
    const v = toInt(own(this.u, field))
    if (v === undefined) this.bad(field, problemOf(own(this.u, field), 'an integer'))
    return v
  }

  str (field: string): string | undefined {
    const v = own(this.u, field)
    if (typeof v !== 'string') { this.bad(field, problemOf(v, 'a string')); return undefined }
    return v
  }

  ints (field: string): number[] | undefined {
    const v = own(this.u, field)
    const out = Array.isArray(v) ? v.map(toInt) : undefined
    if (out === undefined || out.some(x => x === undefined)) { this.bad(field, 'must be an array of integers'); return undefined }
    return out as number[]
  }
}

/** ViewVersion's required members and their kinds (OpenAPI ViewVersion; Java ViewVersionParser). */
const VIEW_VERSION_MEMBERS: ReadonlyArray<readonly [string, 'int' | 'long' | 'object' | 'array']> = [
  ['version-id', 'int'], ['timestamp-ms', 'long'], ['schema-id', 'int'], ['summary', 'object'],
  ['representations', 'array'], ['default-namespace', 'array']
]

/**
 * Problems with a ViewVersion's members: each required member present, not null and of its kind,
 * and `default-catalog` a string when not null (Java reads it with getStringOrNull). Java refuses
 * every one of these before it applies anything, so the gate does too, naming the member.
 */
export function viewVersionIssues (vv: JsonObject, at: string): ApplyIssue[] {
  const out: ApplyIssue[] = []
  for (const [member, kind] of VIEW_VERSION_MEMBERS) {
    const v = own(vv, member)
    const ok = kind === 'int' ? toInt(v) !== undefined
      : kind === 'long' ? toLongText(v) !== undefined && typeof v !== 'string'
        : kind === 'object' ? isObject(v) : Array.isArray(v)
    if (!ok) out.push({ at: `${at}.${member}`, message: `Cannot read view version: ${member} ${problemOf(v, kind === 'int' || kind === 'long' ? 'an integer' : kind === 'object' ? 'an object' : 'an array')}` })
  }
  const catalog = own(vv, 'default-catalog')
  if (catalog !== undefined && catalog !== null && typeof catalog !== 'string') out.push({ at: `${at}.default-catalog`, message: 'Cannot read view version: default-catalog must be a string' })
  return out
}

/**
 * What is wrong with a required member: missing, null, or of another kind. The spec requires every
 * member these readers read, and Java's parsers refuse a JSON null in each (JsonUtil.getString,
 * getInt, get), so a null is named as such rather than read as absent.
 */
function problemOf (v: unknown, kind: string): string {
  return v === undefined ? 'is missing' : v === null ? `is null (required: ${kind})` : `must be ${kind}`
}

function checkShape (u: JsonObject, field: string, kind: string, read: UpdateReader): void {
  const v = own(u, field)
  if (v === undefined || v === null) { read.bad(field, problemOf(v, kind === 'int' || kind === 'long' ? 'an integer' : kind === 'object' ? 'an object' : kind === 'array' ? 'an array' : 'a string')); return }
  const ok = kind === 'object' ? isObject(v)
    : kind === 'array' ? Array.isArray(v)
      : kind === 'int' ? toInt(v) !== undefined
        : kind === 'long' ? toLongText(v) !== undefined && typeof v !== 'string'
          : typeof v === 'string'
  if (!ok) read.bad(field, `must be ${kind === 'int' || kind === 'long' ? 'an integer' : kind === 'object' ? 'an object' : kind === 'array' ? 'an array' : 'a string'}`)
}
