import { badRequest, commitFailed } from './errors.js'
import { idKey, isObject, type JsonObject } from './json.js'

/**
 * Table requirements (spec `TableRequirement`, yaml ~3664), checked against the base metadata
 * as the reference server's `UpdateRequirement.validate` does. A failure is a 409
 * CommitFailedException with Java's message, so clients that retry on 409 do so.
 */
export type Requirement = JsonObject & { type: string }

const INT_FIELDS: Record<string, [field: string, metadataKey: string, what: string]> = {
  'assert-last-assigned-field-id': ['last-assigned-field-id', 'last-column-id', 'last assigned field id changed'],
  'assert-current-schema-id': ['current-schema-id', 'current-schema-id', 'current schema changed'],
  'assert-last-assigned-partition-id': ['last-assigned-partition-id', 'last-partition-id', 'last assigned partition id changed'],
  'assert-default-spec-id': ['default-spec-id', 'default-spec-id', 'default partition spec changed'],
  'assert-default-sort-order-id': ['default-sort-order-id', 'default-sort-order-id', 'default sort order changed']
}

/** Every table requirement type; sent with a view commit they are a 400 (Java: "Cannot validate ... against a view"). */
export const TABLE_REQUIREMENT_TYPES: ReadonlySet<string> = new Set([
  ...Object.keys(INT_FIELDS), 'assert-create', 'assert-table-uuid', 'assert-ref-snapshot-id'
])

/** Checks each requirement's shape; unknown types are a 400 (spec: servers must reject them). */
export function parseRequirements (raw: unknown): Requirement[] {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) throw badRequest('Invalid commit: requirements must be an array')
  return raw.map((r, i) => {
    if (!isObject(r) || typeof r.type !== 'string') throw badRequest(`Invalid requirement ${i}: missing type`)
    const type = r.type.toLowerCase()
    const spec = INT_FIELDS[type]
    if (spec !== undefined) {
      const v = r[spec[0]]
      if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`Invalid requirement ${type}: ${spec[0]} must be an integer`)
    } else if (type === 'assert-table-uuid') {
      if (typeof r.uuid !== 'string') throw badRequest('Invalid requirement assert-table-uuid: uuid must be a string')
    } else if (type === 'assert-ref-snapshot-id') {
      if (typeof r.ref !== 'string') throw badRequest('Invalid requirement assert-ref-snapshot-id: ref must be a string')
      // Required but nullable: null means "the ref must not exist".
      if (r['snapshot-id'] !== null && idKey(r['snapshot-id']) === undefined) {
        throw badRequest('Invalid requirement assert-ref-snapshot-id: snapshot-id must be an integer or null')
      }
    } else if (type === 'assert-view-uuid') {
      throw badRequest('Cannot validate assert-view-uuid against a table: it is a view requirement')
    } else if (type !== 'assert-create') {
      throw badRequest(`Unknown requirement type: ${r.type}`)
    }
    return { ...r, type }
  })
}

/** Validates requirements against the table's current metadata (the base for a create is absent). */
export function checkRequirements (requirements: readonly Requirement[], base: JsonObject): void {
  for (const r of requirements) {
    const spec = INT_FIELDS[r.type]
    if (spec !== undefined) {
      const [field, key, what] = spec
      const actual = base[key]
      if (actual !== r[field]) throw commitFailed(`Requirement failed: ${what}: expected id ${r[field] as number} != ${String(actual)}`)
      continue
    }
    switch (r.type) {
      case 'assert-create':
        throw commitFailed('Requirement failed: table already exists')
      case 'assert-table-uuid': {
        const uuid = base['table-uuid']
        if (typeof uuid !== 'string' || uuid.toLowerCase() !== (r.uuid as string).toLowerCase()) {
          throw commitFailed(`Requirement failed: UUID does not match: expected ${r.uuid as string} != ${String(uuid)}`)
        }
        break
      }
      case 'assert-ref-snapshot-id': {
        const refs = (base.refs ?? {}) as Record<string, JsonObject>
        const name = r.ref as string
        const ref = Object.hasOwn(refs, name) ? refs[name] : undefined
        const expected = r['snapshot-id'] === null ? undefined : idKey(r['snapshot-id'])
        if (ref !== undefined) {
          const type = String(ref.type ?? 'branch')
          const actual = idKey(ref['snapshot-id'])
          if (expected === undefined) throw commitFailed(`Requirement failed: ${type} ${name} was created concurrently`)
          if (expected !== actual) throw commitFailed(`Requirement failed: ${type} ${name} has changed: expected id ${expected} != ${String(actual)}`)
        } else if (expected !== undefined) {
          throw commitFailed(`Requirement failed: branch or tag ${name} is missing, expected ${expected}`)
        }
        break
      }
    }
  }
}
