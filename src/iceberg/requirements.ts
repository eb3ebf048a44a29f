/**
 * Commit requirements (spec TableRequirement, Java `UpdateRequirement.validate`). A failed
 * requirement means the client's base is stale: a conflict (409), never a rule violation.
 * Messages follow Java's so clients and logs read the same either way.
 */
import { isObject, own, toInt, toLongText } from './json-values.js'
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

function fieldProblem (value: unknown, kind: Field): string | undefined {
  if (kind === 'string') return typeof value === 'string' ? undefined : value === undefined ? 'missing' : 'not a string'
  if (kind === 'int') return toInt(value) !== undefined ? undefined : value === undefined ? 'missing' : 'not an integer'
  // "required but nullable": null means "the ref must not exist".
  if (value === null) return undefined
  return toLongText(value) !== undefined && typeof value !== 'string' ? undefined : value === undefined ? 'missing (use null for "must not exist")' : 'not an integer'
}

/**
 * Structural problems in a requirements list: unknown types (the spec requires a 400 for them) and
 * missing or mistyped fields. Malformed requirements are skipped by `checkRequirements`.
 */
export function requirementIssues (requirements: unknown): ParseIssue[] {
  if (requirements === undefined) return []
  if (!Array.isArray(requirements)) return [{ at: 'requirements', message: 'Cannot read requirements: not an array' }]
  const issues: ParseIssue[] = []
  requirements.forEach((r, i) => {
    const at = `requirements[${i}]`
    if (!isObject(r)) { issues.push({ at, message: 'Cannot read requirement: expected an object' }); return }
    const type = own(r, 'type')
    if (typeof type !== 'string') { issues.push({ at: `${at}.type`, message: 'Cannot read requirement: missing type' }); return }
    const fields = Object.hasOwn(REQUIREMENTS, type.toLowerCase()) ? REQUIREMENTS[type.toLowerCase()] : undefined
    if (fields === undefined) { issues.push({ at: `${at}.type`, message: `Cannot check unknown requirement type: ${type}` }); return }
    for (const [name, kind] of Object.entries(fields)) {
      const problem = fieldProblem(own(r, name), kind)
      if (problem !== undefined) issues.push({ at: `${at}.${name}`, message: `Cannot read requirement ${type}: ${name} ${problem}` })
    }
  })
  return issues
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
  const bad = new Set(requirementIssues(requirements).map(i => /^requirements\[(\d+)\]/.exec(i.at)?.[1]))
  requirements.forEach((r, i) => {
    if (bad.has(String(i)) || !isObject(r)) return
    const type = String(own(r, 'type')).toLowerCase()
    const fail = (message: string): void => { conflicts.push({ type, message: `Requirement failed: ${message}` }) }
    if (type === 'assert-create') {
      if (base !== undefined) fail('table already exists')
      return
    }
    if (base === undefined) {
      fail(type === 'assert-view-uuid' ? 'view does not exist' : 'table does not exist')
      return
    }
    const int = (key: string): number => toInt(own(r, key)) as number
    switch (type) {
      case 'assert-table-uuid':
      case 'assert-view-uuid': {
        const uuid = own(r, 'uuid') as string
        if (base.tableUuid === undefined || base.tableUuid.toLowerCase() !== uuid.toLowerCase()) {
          fail(`${type === 'assert-view-uuid' ? 'view ' : ''}UUID does not match: expected ${base.tableUuid ?? 'none'} != ${uuid}`)
        }
        return
      }
      case 'assert-ref-snapshot-id': {
        const name = own(r, 'ref') as string
        const raw = own(r, 'snapshot-id')
        const expected = raw === null ? undefined : toLongText(raw)
        const actual = Object.hasOwn(base.refs, name) ? base.refs[name] : undefined
        const kind = base.refTypes !== undefined && Object.hasOwn(base.refTypes, name) ? base.refTypes[name] : 'branch'
        // 64-bit ids compare as decimal text: no rounding.
        if (actual !== undefined) {
          if (expected === undefined) fail(`${kind} ${name} was created concurrently`)
          else if (expected !== actual) fail(`${kind} ${name} has changed: expected id ${expected} != ${actual}`)
        } else if (expected !== undefined) {
          fail(`branch or tag ${name} is missing, expected ${expected}`)
        }
        return
      }
      case 'assert-last-assigned-field-id':
        if (int('last-assigned-field-id') !== base.lastColumnId) fail(`last assigned field id changed: expected id ${int('last-assigned-field-id')} != ${base.lastColumnId}`)
        return
      case 'assert-current-schema-id':
        if (int('current-schema-id') !== base.currentSchemaId) fail(`current schema changed: expected id ${int('current-schema-id')} != ${base.currentSchemaId}`)
        return
      case 'assert-last-assigned-partition-id': {
        const actual = lastAssignedPartitionId(base)
        if (int('last-assigned-partition-id') !== actual) fail(`last assigned partition id changed: expected id ${int('last-assigned-partition-id')} != ${actual}`)
        return
      }
      case 'assert-default-spec-id':
        if (int('default-spec-id') !== base.defaultSpecId) fail(`default partition spec changed: expected id ${int('default-spec-id')} != ${base.defaultSpecId}`)
        return
      case 'assert-default-sort-order-id':
        if (int('default-sort-order-id') !== base.defaultSortOrderId) fail(`default sort order changed: expected id ${int('default-sort-order-id')} != ${base.defaultSortOrderId}`)
    }
  })
  return conflicts
}
