import { badRequest, commitFailed } from './errors.js'
import { isObject, type JsonObject } from './json.js'
import { TABLE_REQUIREMENT_TYPES } from './requirements.js'
import { type ActionFields, parseActions, TABLE_UPDATE_FIELDS, type Update } from './table-updates.js'

/**
 * The body of a view commit (spec `CommitViewRequest`, yaml ~4086): `ViewRequirement`s (only
 * `assert-view-uuid`) and `ViewUpdate`s. As for tables, the whole request is checked before
 * anything is applied, so a malformed or unknown entry is a 400 whatever else is wrong.
 */

export const VIEW_UPDATE_FIELDS: ActionFields = {
  'assign-uuid': { uuid: 'string' },
  'upgrade-format-version': { 'format-version': 'int' },
  'add-schema': { schema: 'object' },
  'set-location': { location: 'string' },
  'set-properties': {},
  'remove-properties': {},
  'add-view-version': { 'view-version': 'object' },
  'set-current-view-version': { 'view-version-id': 'int' }
}

/** Table-only actions: Java's `MetadataUpdate.applyTo(ViewMetadata.Builder)` refuses them. */
const TABLE_ONLY_ACTIONS: ReadonlySet<string> = new Set(Object.keys(TABLE_UPDATE_FIELDS).filter(a => !Object.hasOwn(VIEW_UPDATE_FIELDS, a)))

export function parseViewUpdates (raw: unknown): Update[] {
  return parseActions(raw, 'view', VIEW_UPDATE_FIELDS, TABLE_ONLY_ACTIONS)
}

export type ViewRequirement = JsonObject & { type: 'assert-view-uuid', uuid: string }

export function parseViewRequirements (raw: unknown): ViewRequirement[] {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) throw badRequest('Invalid commit: requirements must be an array')
  return raw.map((r, i) => {
    if (!isObject(r) || typeof r.type !== 'string') throw badRequest(`Invalid requirement ${i}: missing type`)
    const type = r.type.toLowerCase()
    if (type === 'assert-view-uuid') {
      if (typeof r.uuid !== 'string') throw badRequest('Invalid requirement assert-view-uuid: uuid must be a string')
      return { ...r, type, uuid: r.uuid }
    }
    // Java UpdateRequirement.validate(ViewMetadata): "Cannot validate %s against a view".
    if (TABLE_REQUIREMENT_TYPES.has(type)) throw badRequest(`Cannot validate ${type} against a view: it is a table requirement`)
    throw badRequest(`Unknown requirement type: ${r.type}`)
  })
}

/** Java `AssertViewUUID.validate`: case-insensitive; a mismatch is a 409 CommitFailedException. */
export function checkViewRequirements (requirements: readonly ViewRequirement[], base: JsonObject): void {
  for (const r of requirements) {
    const uuid = base['view-uuid']
    if (typeof uuid !== 'string' || uuid.toLowerCase() !== r.uuid.toLowerCase()) {
      throw commitFailed(`Requirement failed: view UUID does not match: expected ${r.uuid} != ${String(uuid)}`)
    }
  }
}
