/**
 * Commit requirements (spec TableRequirement and ViewRequirement, Java `UpdateRequirement.validate`).
 * A failed requirement means the client's base is stale: a conflict (409), never a rule violation.
 * Messages follow Java's so clients and logs read the same either way. The gate and the embedded
 * catalog both check requirements here.
 */
import { isObject, own, toInt, toLongText, type JsonObject } from './json-values.js'
import type { ParseIssue, TableMetadata } from './types.js'

export interface RequirementConflict {
  /** The requirement `type`, e.g. `assert-current-schema-id`. */
  readonly type: string
  readonly message: string
}

type Field = 'int' | 'string' | 'long-or-null'
const REQUIREMENTS: Readonly<Record<string, Readonly<Record<string, Field>>>> = {
  'assert-create': {},
  'assert-table-uuid': { uuid: 'string' },
  'assert-view-uuid': { uuid: 'string' },
  'assert-ref-snapshot-id': { ref: 'string', 'snapshot-id': 'long-or-null' },
  'assert-last-assigned-field-id': { 'last-assigned-field-id': 'int' },
  'assert-current-schema-id': { 'current-schema-id': 'int' },
  'assert-last-assigned-partition-id': { 'last-assigned-partition-id': 'int' },
  'assert-default-spec-id': { 'default-spec-id': 'int' },
  'assert-default-sort-order-id': { 'default-sort-order-id': 'int' }
}

/** The only requirement a view commit may carry (spec `ViewRequirement`). */
const VIEW_REQUIREMENT = 'assert-view-uuid'

function fieldProblem (value: unknown, kind: Field): string | undefined {
  if (kind === 'string') return typeof value === 'string' ? undefined : value === undefined ? 'is missing' : value === null ? 'is null (required: a string)' : 'must be a string'
  if (kind === 'int') return toInt(value) !== undefined ? undefined : value === undefined ? 'is missing' : value === null ? 'is null (required: an integer)' : 'must be an integer'
  // "required but nullable": null means "the ref must not exist". Java reads a missing
  // snapshot-id the same way (UpdateRequirementParser: JsonUtil.getLongOrNull), and so does
  // iceberg-rust (`Option<i64>`); PyIceberg always writes it, null included.
  if (value === null || value === undefined) return undefined
  return toLongText(value) !== undefined && typeof value !== 'string' ? undefined : 'must be an integer'
}

/** Each type's fields as a list, so a check walks it without building entries per requirement. */
const REQUIREMENT_FIELDS: ReadonlyMap<string, ReadonlyArray<readonly [string, Field]>> =
  new Map(Object.entries(REQUIREMENTS).map(([type, fields]) => [type, Object.entries(fields)]))

/**
 * Structural problems in a requirements list: unknown types (the spec requires a 400 for them) and
 * missing or mistyped fields. Malformed requirements are skipped by `checkRequirements`. With a
 * `target`, a requirement of the other kind of object is a problem too (Java: "Cannot validate …
 * against a view"); without one, any known type is read.
 */
export function requirementIssues (requirements: unknown, target?: 'table' | 'view'): ParseIssue[] {
  if (requirements === undefined) return []
  if (!Array.isArray(requirements)) return [{ at: 'requirements', message: `Cannot read requirements: ${requirements === null ? 'null (required: an array)' : 'not an array'}` }]
  const issues: ParseIssue[] = []
  for (let i = 0; i < requirements.length; i++) {
    const r: unknown = requirements[i]
    // Paths are spelled only for a problem: a well-formed list builds no strings.
    if (!isObject(r)) { issues.push({ at: `requirements[${i}]`, message: 'Cannot read requirement: expected an object' }); continue }
    const type = own(r, 'type')
    if (typeof type !== 'string') { issues.push({ at: `requirements[${i}].type`, message: `Cannot read requirement: ${type === null ? 'type is null' : type === undefined ? 'missing type' : 'type is not a string'}` }); continue }
    const lower = type.toLowerCase()
    const fields = REQUIREMENT_FIELDS.get(lower)
    if (fields === undefined) { issues.push({ at: `requirements[${i}].type`, message: `Cannot check unknown requirement type: ${type}` }); continue }
    if (target === 'view' && lower !== VIEW_REQUIREMENT) { issues.push({ at: `requirements[${i}].type`, message: `Cannot validate ${lower} against a view: it is a table requirement` }); continue }
    if (target === 'table' && lower === VIEW_REQUIREMENT) { issues.push({ at: `requirements[${i}].type`, message: `Cannot validate ${lower} against a table: it is a view requirement` }); continue }
    for (const [name, kind] of fields) {
      const problem = fieldProblem(own(r, name), kind)
      if (problem !== undefined) issues.push({ at: `requirements[${i}].${name}`, message: `Cannot read requirement ${type}: ${name} ${problem}` })
    }
  }
  return issues
}

/** The requirement has none of the problems `requirementIssues` reports (a known type, every field readable). */
function wellFormed (r: unknown): r is JsonObject {
  if (!isObject(r)) return false
  const type = own(r, 'type')
  if (typeof type !== 'string') return false
  const fields = REQUIREMENT_FIELDS.get(type.toLowerCase())
  if (fields === undefined) return false
  for (const [name, kind] of fields) if (fieldProblem(own(r, name), kind) !== undefined) return false
  return true
}

/** Highest partition field id: `last-partition-id`, else derived from the specs (1000 is the first). */
export function lastAssignedPartitionId (m: TableMetadata): number {
  if (m.lastPartitionId !== undefined) return m.lastPartitionId
  let max = 999
  for (const spec of m.partitionSpecs) for (const f of spec.fields) if (f.fieldId !== undefined && f.fieldId > max) max = f.fieldId
  return max
}

/** Checks every well-formed requirement against the base; returns one conflict per failure. */
export function checkRequirements (base: TableMetadata | undefined, requirements: unknown[]): RequirementConflict[] {
  const conflicts: RequirementConflict[] = []
  if (!Array.isArray(requirements)) return conflicts
  for (let i = 0; i < requirements.length; i++) {
    const r: unknown = requirements[i]
    // A malformed requirement is requirementIssues' to report, not a conflict.
    if (!wellFormed(r)) continue
    const type = (own(r, 'type') as string).toLowerCase()
    const message = conflictOf(base, r, type)
    if (message !== undefined) conflicts.push({ type, message: `Requirement failed: ${message}` })
  }
  return conflicts
}

/** Why the well-formed requirement `r` of `type` fails against `base`, or undefined when it holds. */
function conflictOf (base: TableMetadata | undefined, r: JsonObject, type: string): string | undefined {
  if (type === 'assert-create') return base !== undefined ? 'table already exists' : undefined
  if (base === undefined) return type === 'assert-view-uuid' ? 'view does not exist' : 'table does not exist'
  switch (type) {
    case 'assert-table-uuid':
    case 'assert-view-uuid': {
      const uuid = own(r, 'uuid') as string
      if (base.tableUuid === undefined || base.tableUuid.toLowerCase() !== uuid.toLowerCase()) {
        return `${type === VIEW_REQUIREMENT ? 'view ' : ''}UUID does not match: expected ${base.tableUuid ?? 'none'} != ${uuid}`
      }
      return undefined
    }
    case 'assert-ref-snapshot-id': {
      const name = own(r, 'ref') as string
      const raw = own(r, 'snapshot-id')
      const expected = raw === null || raw === undefined ? undefined : toLongText(raw)
      const actual = Object.hasOwn(base.refs, name) ? base.refs[name] : undefined
      const kind = base.refTypes !== undefined && Object.hasOwn(base.refTypes, name) ? base.refTypes[name] : 'branch'
      // 64-bit ids compare as decimal text: no rounding.
      if (actual !== undefined) {
        if (expected === undefined) return `${kind} ${name} was created concurrently`
        if (expected !== actual) return `${kind} ${name} has changed: expected id ${expected} != ${actual}`
      } else if (expected !== undefined) {
        return `branch or tag ${name} is missing, expected ${expected}`
      }
      return undefined
    }
    case 'assert-last-assigned-field-id': {
      const expected = toInt(own(r, 'last-assigned-field-id')) as number
      return expected !== base.lastColumnId ? `last assigned field id changed: expected id ${expected} != ${base.lastColumnId}` : undefined
    }
    case 'assert-current-schema-id': {
      const expected = toInt(own(r, 'current-schema-id')) as number
      return expected !== base.currentSchemaId ? `current schema changed: expected id ${expected} != ${base.currentSchemaId}` : undefined
    }
    case 'assert-last-assigned-partition-id': {
      const expected = toInt(own(r, 'last-assigned-partition-id')) as number
      const actual = lastAssignedPartitionId(base)
      return expected !== actual ? `last assigned partition id changed: expected id ${expected} != ${actual}` : undefined
    }
    case 'assert-default-spec-id': {
      const expected = toInt(own(r, 'default-spec-id')) as number
      return expected !== base.defaultSpecId ? `default partition spec changed: expected id ${expected} != ${base.defaultSpecId}` : undefined
    }
    case 'assert-default-sort-order-id': {
      const expected = toInt(own(r, 'default-sort-order-id')) as number
      return expected !== base.defaultSortOrderId ? `default sort order changed: expected id ${expected} != ${base.defaultSortOrderId}` : undefined
    }
  }
  return undefined
}

/**
 * Checks a view commit's requirements against the view's uuid (Java `AssertViewUUID.validate`:
 * case-insensitive). Table requirements are `requirementIssues(…, 'view')`'s to report.
 */
export function checkViewRequirements (viewUuid: string | undefined, requirements: readonly unknown[]): RequirementConflict[] {
  const conflicts: RequirementConflict[] = []
  for (const r of requirements) {
    if (!wellFormed(r) || (own(r, 'type') as string).toLowerCase() !== VIEW_REQUIREMENT) continue
    const uuid = own(r, 'uuid') as string
    if (viewUuid === undefined || viewUuid.toLowerCase() !== uuid.toLowerCase()) {
      conflicts.push({ type: VIEW_REQUIREMENT, message: `Requirement failed: view UUID does not match: expected ${viewUuid ?? 'none'} != ${uuid}` })
    }
  }
  return conflicts
}
