import { badRequest } from './errors.js'
import { idKey, isObject, type JsonObject } from './json.js'

/**
 * The table update actions of the spec (`TableUpdate`, yaml ~3231) and the fields each needs.
 * The whole update list is checked before any requirement or update is applied, as the Java
 * server parses the request first: a malformed or unknown update is a 400 whatever else is wrong.
 */
export type Update = JsonObject & { action: string }

export type Kind = 'int' | 'long' | 'string' | 'object' | 'int[]' | 'long[]' | 'string[]'
/** The fields each action needs, and the kind of each. */
export type ActionFields = Readonly<Record<string, Readonly<Record<string, Kind>>>>

export const TABLE_UPDATE_FIELDS: ActionFields = {
  'assign-uuid': { uuid: 'string' },
  'upgrade-format-version': { 'format-version': 'int' },
  'add-schema': { schema: 'object' },
  'set-current-schema': { 'schema-id': 'int' },
  'add-spec': { spec: 'object' },
  'set-default-spec': { 'spec-id': 'int' },
  'add-sort-order': { 'sort-order': 'object' },
  'set-default-sort-order': { 'sort-order-id': 'int' },
  'add-snapshot': { snapshot: 'object' },
  'set-snapshot-ref': { 'ref-name': 'string', type: 'string', 'snapshot-id': 'long' },
  'remove-snapshots': { 'snapshot-ids': 'long[]' },
  'remove-snapshot-ref': { 'ref-name': 'string' },
  'set-location': { location: 'string' },
  'set-properties': {},
  'remove-properties': {},
  'set-statistics': { statistics: 'object' },
  'remove-statistics': { 'snapshot-id': 'long' },
  'set-partition-statistics': { 'partition-statistics': 'object' },
  'remove-partition-statistics': { 'snapshot-id': 'long' },
  'remove-partition-specs': { 'spec-ids': 'int[]' },
  'remove-schemas': { 'schema-ids': 'int[]' },
  'add-encryption-key': { 'encryption-key': 'object' },
  'remove-encryption-key': { 'key-id': 'string' }
}

/** Actions the spec defines only for views; sent to a table they are a bad request. */
export const VIEW_ONLY_ACTIONS: ReadonlySet<string> = new Set(['add-view-version', 'set-current-view-version'])

const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v)

function hasKind (v: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'int': return isInt(v)
    case 'long': return idKey(v) !== undefined
    case 'string': return typeof v === 'string'
    case 'object': return isObject(v)
    case 'int[]': return Array.isArray(v) && v.every(isInt)
    case 'long[]': return Array.isArray(v) && v.every(x => idKey(x) !== undefined)
    case 'string[]': return Array.isArray(v) && v.every(x => typeof x === 'string')
  }
}

const KIND_TEXT: Record<Kind, string> = {
  int: 'an integer', long: 'an integer', string: 'a string', object: 'an object',
  'int[]': 'an array of integers', 'long[]': 'an array of integers', 'string[]': 'an array of strings'
}

export function parseUpdates (raw: unknown): Update[] {
  return parseActions(raw, 'table', TABLE_UPDATE_FIELDS, VIEW_ONLY_ACTIONS)
}

/**
 * Checks an update list against the actions of its target (`fields`); an action that belongs to
 * the other kind of object (`foreign`) gets its own message, any other unknown action a 400.
 */
export function parseActions (raw: unknown, target: 'table' | 'view', known: ActionFields, foreign: ReadonlySet<string>): Update[] {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) throw badRequest('Invalid commit: updates must be an array')
  return raw.map((u, i) => {
    if (!isObject(u) || typeof u.action !== 'string') throw badRequest(`Invalid update ${i}: missing action`)
    // Java MetadataUpdateParser reads the action case-insensitively.
    const action = u.action.toLowerCase()
    if (foreign.has(action)) throw badRequest(`Cannot apply update ${action} to a ${target}: it is a ${target === 'table' ? 'view' : 'table'} update`)
    const fields = Object.hasOwn(known, action) ? known[action] : undefined
    if (fields === undefined) throw badRequest(`Unknown ${target} update action: ${u.action}`)
    for (const [field, kind] of Object.entries(fields)) {
      if (!hasKind(u[field], kind)) throw badRequest(`Invalid update ${action}: ${field} must be ${KIND_TEXT[kind]}`)
    }
    // Java also reads the legacy names `updated` and `removed`.
    if (action === 'set-properties' && !isObject(u.updates ?? u.updated)) {
      throw badRequest('Invalid update set-properties: updates must be an object of strings')
    }
    if (action === 'remove-properties' && !hasKind(u.removals ?? u.removed, 'string[]')) {
      throw badRequest('Invalid update remove-properties: removals must be an array of strings')
    }
    return { ...u, action }
  })
}
