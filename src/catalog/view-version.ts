import { badRequest } from './errors.js'
import { isObject, jsonEqual, type JsonObject, toBig } from './json.js'
import { stringMap } from './schema.js'

/**
 * A view version (spec `ViewVersion`: version-id, timestamp-ms, schema-id, summary,
 * representations, default-namespace; optional default-catalog), checked as Java's
 * `ViewVersionParser` reads it and written back in the order Java writes it.
 */

const int = (v: unknown, at: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`Invalid view version: ${at} must be an integer`)
  return v
}

/**
 * Java reads every representation type but can write back only `sql` (an unknown one fails
 * when the metadata is saved), so anything else is refused up front.
 */
function representation (raw: unknown, at: string): JsonObject {
  if (!isObject(raw) || typeof raw.type !== 'string') throw badRequest(`Invalid view version: ${at}.type must be a string`)
  const type = raw.type.toLowerCase()
  if (type !== 'sql') throw badRequest(`Invalid view version: ${at}: unsupported view representation type ${JSON.stringify(raw.type)}`)
  if (typeof raw.sql !== 'string') throw badRequest(`Invalid view version: ${at}.sql must be a string`)
  if (typeof raw.dialect !== 'string') throw badRequest(`Invalid view version: ${at}.dialect must be a string`)
  return { type, sql: raw.sql, dialect: raw.dialect }
}

export function parseViewVersion (raw: unknown, at = 'view-version'): JsonObject {
  if (!isObject(raw)) throw badRequest(`Invalid view version: ${at} must be an object`)
  const out: JsonObject = {
    'version-id': int(raw['version-id'], `${at}.version-id`),
    'timestamp-ms': raw['timestamp-ms'],
    'schema-id': int(raw['schema-id'], `${at}.schema-id`)
  }
  if (toBig(raw['timestamp-ms']) === undefined) throw badRequest(`Invalid view version: ${at}.timestamp-ms must be an integer`)
  if (!isObject(raw.summary)) throw badRequest(`Invalid view version: ${at}.summary must be an object of strings`)
  out.summary = stringMap(raw.summary, `view version ${at}.summary`)
  if (raw['default-catalog'] !== undefined && raw['default-catalog'] !== null) {
    if (typeof raw['default-catalog'] !== 'string') throw badRequest(`Invalid view version: ${at}.default-catalog must be a string`)
    out['default-catalog'] = raw['default-catalog']
  }
  const ns = raw['default-namespace']
  // An empty namespace is allowed: the view then resolves names against the engine's current one.
  if (!Array.isArray(ns) || !ns.every(level => typeof level === 'string')) {
    throw badRequest(`Invalid view version: ${at}.default-namespace must be an array of strings`)
  }
  out['default-namespace'] = ns
  if (!Array.isArray(raw.representations)) throw badRequest(`Invalid view version: ${at}.representations must be an array`)
  out.representations = raw.representations.map((r, i) => representation(r, `${at}.representations[${i}]`))
  return out
}

/**
 * Java `ViewMetadata.Builder.sameViewVersion`: versions that behave the same, ignoring the id and
 * the timestamp. Such a version is not added twice; its id is reused.
 */
export function sameViewVersion (a: JsonObject, b: JsonObject): boolean {
  return jsonEqual(a.summary, b.summary) &&
    jsonEqual(a.representations, b.representations) &&
    (a['default-catalog'] ?? null) === (b['default-catalog'] ?? null) &&
    jsonEqual(a['default-namespace'], b['default-namespace']) &&
    a['schema-id'] === b['schema-id']
}

/** The SQL dialects of a version, lower-cased (Java compares dialects case-insensitively). */
export function sqlDialects (version: JsonObject): string[] {
  return ((version.representations ?? []) as JsonObject[])
    .filter(r => r.type === 'sql' && typeof r.dialect === 'string')
    .map(r => (r.dialect as string).toLowerCase())
}
