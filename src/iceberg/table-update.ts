/**
 * The update actions of the REST spec (`TableUpdate` and `ViewUpdate`): which object each applies
 * to, which fields each needs, and which cannot touch a schema. This table is the only list of
 * actions: the commit scanner's fast path, the gate's application and the embedded catalog's all
 * read it. Reading an update checks its shape only; what it does is `metadata-builder.ts`'s.
 */
import { isObject, own, toInt, toLongText, type JsonObject } from './json-values.js'
import type { ParseIssue } from './types.js'

export type UpdateTarget = 'table' | 'view'

/** What a field must hold. `long` is a 64-bit integer (snapshot ids), never a string. */
type FieldKind = 'int' | 'long' | 'string' | 'object' | 'int[]' | 'long[]' | 'string[]' | 'string-map' | 'ref-type'

interface FieldSpec {
  readonly name: string
  readonly kind: FieldKind
  /** A field that may be absent; JSON `null` reads as absent (Java's serialiser writes nulls). */
  readonly optional?: boolean
  /** An older name Java still reads when `name` is absent. */
  readonly legacy?: string
}

export interface UpdateAction {
  readonly fields: readonly FieldSpec[]
  readonly table: boolean
  readonly view: boolean
  /**
   * Cannot change a schema, partition spec, sort order or format version: a commit made of such
   * actions alone needs no judging (`src/json/commit-scan.ts`).
   */
  readonly dataOnly: boolean
}

const req = (name: string, kind: FieldKind, legacy?: string): FieldSpec => legacy === undefined ? { name, kind } : { name, kind, legacy }
const opt = (name: string, kind: FieldKind): FieldSpec => ({ name, kind, optional: true })
const TABLE = { table: true, view: false }
const VIEW = { table: false, view: true }
const BOTH = { table: true, view: true }

/** Spec `TableUpdate` (and `ViewUpdate`) by action name; Java `MetadataUpdateParser` reads the same fields. */
const UPDATE_ACTIONS: ReadonlyMap<string, UpdateAction> = new Map<string, UpdateAction>([
  ['assign-uuid', { fields: [req('uuid', 'string')], ...BOTH, dataOnly: true }],
  ['upgrade-format-version', { fields: [req('format-version', 'int')], ...BOTH, dataOnly: false }],
  ['add-schema', { fields: [req('schema', 'object'), opt('last-column-id', 'int')], ...BOTH, dataOnly: false }],
  ['set-current-schema', { fields: [req('schema-id', 'int')], ...TABLE, dataOnly: false }],
  ['add-spec', { fields: [req('spec', 'object')], ...TABLE, dataOnly: false }],
  ['set-default-spec', { fields: [req('spec-id', 'int')], ...TABLE, dataOnly: false }],
  ['add-sort-order', { fields: [req('sort-order', 'object')], ...TABLE, dataOnly: false }],
  ['set-default-sort-order', { fields: [req('sort-order-id', 'int')], ...TABLE, dataOnly: false }],
  ['remove-schemas', { fields: [req('schema-ids', 'int[]')], ...TABLE, dataOnly: false }],
  ['remove-partition-specs', { fields: [req('spec-ids', 'int[]')], ...TABLE, dataOnly: false }],
  ['add-snapshot', { fields: [req('snapshot', 'object')], ...TABLE, dataOnly: true }],
  ['set-snapshot-ref', {
    fields: [req('ref-name', 'string'), req('type', 'ref-type'), req('snapshot-id', 'long'),
      opt('min-snapshots-to-keep', 'int'), opt('max-snapshot-age-ms', 'long'), opt('max-ref-age-ms', 'long')],
    ...TABLE,
    dataOnly: true
  }],
  ['remove-snapshots', { fields: [req('snapshot-ids', 'long[]')], ...TABLE, dataOnly: true }],
  ['remove-snapshot-ref', { fields: [req('ref-name', 'string')], ...TABLE, dataOnly: true }],
  ['set-location', { fields: [req('location', 'string')], ...BOTH, dataOnly: true }],
  ['set-properties', { fields: [req('updates', 'string-map', 'updated')], ...BOTH, dataOnly: true }],
  ['remove-properties', { fields: [req('removals', 'string[]', 'removed')], ...BOTH, dataOnly: true }],
  ['set-statistics', { fields: [req('statistics', 'object')], ...TABLE, dataOnly: true }],
  ['remove-statistics', { fields: [req('snapshot-id', 'long')], ...TABLE, dataOnly: true }],
  ['set-partition-statistics', { fields: [req('partition-statistics', 'object')], ...TABLE, dataOnly: true }],
  ['remove-partition-statistics', { fields: [req('snapshot-id', 'long')], ...TABLE, dataOnly: true }],
  ['add-encryption-key', { fields: [req('encryption-key', 'object')], ...TABLE, dataOnly: true }],
  ['remove-encryption-key', { fields: [req('key-id', 'string')], ...TABLE, dataOnly: true }],
  ['add-view-version', { fields: [req('view-version', 'object')], ...VIEW, dataOnly: false }],
  ['set-current-view-version', { fields: [req('view-version-id', 'int')], ...VIEW, dataOnly: false }]
])

/** Table actions that cannot change what the schema rules judge. */
export const DATA_ACTIONS: ReadonlySet<string> = new Set([...UPDATE_ACTIONS].filter(([, a]) => a.table && a.dataOnly).map(([name]) => name))

const KIND_NAMES: Readonly<Record<FieldKind, string>> = {
  int: 'an integer',
  long: 'an integer',
  string: 'a string',
  object: 'an object',
  'int[]': 'an array of integers',
  'long[]': 'an array of integers',
  'string[]': 'an array of strings',
  'string-map': 'an object of strings',
  'ref-type': '"branch" or "tag"'
}

/** Why `v` is not of `kind`, or undefined when it is. */
function kindProblem (v: unknown, kind: FieldKind): string | undefined {
  switch (kind) {
    case 'int': return toInt(v) !== undefined ? undefined : 'must be an integer'
    case 'long': return typeof v !== 'string' && toLongText(v) !== undefined ? undefined : 'must be an integer'
    case 'string': return typeof v === 'string' ? undefined : 'must be a string'
    case 'object': return isObject(v) ? undefined : 'must be an object'
    case 'int[]': return Array.isArray(v) && v.every(x => toInt(x) !== undefined) ? undefined : 'must be an array of integers'
    case 'long[]': return Array.isArray(v) && v.every(x => typeof x !== 'string' && toLongText(x) !== undefined) ? undefined : 'must be an array of integers'
    case 'string[]': return Array.isArray(v) && v.every(x => typeof x === 'string') ? undefined : 'must be an array of strings'
    case 'string-map': return isObject(v) && Object.values(v).every(x => typeof x === 'string') ? undefined : 'must be an object of strings'
    // Java reads the ref type case-insensitively (`SnapshotRefType.valueOf(toUpperCase)`).
    case 'ref-type': return typeof v === 'string' && /^(branch|tag)$/i.test(v) ? undefined : 'must be "branch" or "tag"'
  }
}

/** The value of a field of a well-formed update (its legacy name read when the name is absent); null reads as absent. */
export function fieldValue (u: JsonObject, field: FieldSpec): unknown {
  let v = own(u, field.name)
  if ((v === undefined || v === null) && field.legacy !== undefined) v = own(u, field.legacy)
  return v === null ? undefined : v
}

/** A well-formed update: its action (lower case), the rule for it and the update itself. */
export interface ReadUpdate {
  readonly action: string
  readonly spec: UpdateAction
  readonly update: JsonObject
}

/**
 * Reads the shape of update `i` (`updates[i]`) for `target`: an object, a known action for that
 * target, every required field present and of its kind. Problems go to `issues`; the update is
 * returned only when it has none. The action is read case-insensitively (Java
 * `MetadataUpdateParser.fromJson`).
 */
export function readUpdate (u: unknown, i: number, target: UpdateTarget, issues: ParseIssue[]): ReadUpdate | undefined {
  if (!isObject(u)) { issues.push({ at: `updates[${i}]`, message: 'Cannot apply update: expected an object' }); return undefined }
  const rawAction = own(u, 'action')
  if (typeof rawAction !== 'string') { issues.push({ at: `updates[${i}].action`, message: 'Cannot apply update: missing action' }); return undefined }
  const action = rawAction.toLowerCase()
  const spec = UPDATE_ACTIONS.get(action)
  if (spec === undefined) { issues.push({ at: `updates[${i}].action`, message: `Cannot apply unknown update action: ${rawAction}` }); return undefined }
  if (!spec[target]) { issues.push({ at: `updates[${i}].action`, message: `Cannot apply update ${action} to a ${target}` }); return undefined }
  let ok = true
  for (const field of spec.fields) {
    const v = fieldValue(u, field)
    if (v === undefined) {
      if (field.optional === true) continue
      // Java's parsers refuse a JSON null in every required member (JsonUtil.getString, getInt,
      // get), so a null is named as such rather than read as absent.
      const problem = own(u, field.name) === null ? `is null (required: ${KIND_NAMES[field.kind]})` : 'is missing'
      issues.push({ at: `updates[${i}].${field.name}`, message: `Cannot apply ${action}: ${field.name} ${problem}` })
      ok = false
      continue
    }
    const name = own(u, field.name) === undefined && field.legacy !== undefined ? field.legacy : field.name
    // A string map names the entry that is not a string (JsonUtil.getStringMap reads each value).
    const badKey = field.kind === 'string-map' && isObject(v) ? Object.keys(v).find(k => typeof v[k] !== 'string') : undefined
    if (badKey !== undefined) {
      const entry = (v as JsonObject)[badKey]
      issues.push({ at: `updates[${i}].${name}.${badKey}`, message: `Cannot apply ${action}: ${name}.${badKey} ${entry === null ? 'is null (required: a string)' : 'must be a string'}` })
      ok = false
      continue
    }
    const problem = kindProblem(v, field.kind)
    if (problem !== undefined) {
      issues.push({ at: `updates[${i}].${name}`, message: `Cannot apply ${action}: ${field.name} ${problem}` })
      ok = false
    }
  }
  return ok ? { action, spec, update: u } : undefined
}

/** Every shape problem of an update list (`updates` of a commit); none for an absent list. */
export function updateIssues (updates: unknown, target: UpdateTarget): ParseIssue[] {
  const issues: ParseIssue[] = []
  if (updates === undefined || updates === null) return issues
  if (!Array.isArray(updates)) return [{ at: 'updates', message: 'Cannot read commit: updates must be an array' }]
  for (let i = 0; i < updates.length; i++) readUpdate(updates[i], i, target, issues)
  return issues
}
