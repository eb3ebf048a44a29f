/**
 * View metadata ↔ its metadata file (spec "View Metadata"), and view versions as Java's
 * `ViewVersionParser` reads them. Schemas go through the same reader as a table's (`parse.ts`), so
 * a view accepts exactly the types a table does.
 */
import { writeJson } from './json-text.js'
import { isObject, jsonEquals, own, readStringMap, toInt, toLongText, type JsonObject } from './json-values.js'
import { parseSchemaShape } from './parse.js'
import { JsonChunks, wireText } from './table-metadata.js'
import type { ParseIssue, Schema, ViewMetadata, WireObject } from './types.js'

/** The only view format version the spec defines. */
export const SUPPORTED_VIEW_FORMAT_VERSION = 1

const KNOWN = new Set(['view-uuid', 'format-version', 'location', 'properties', 'schemas', 'current-version-id', 'versions', 'version-log'])

/** A string → string map, or undefined with an issue naming `what` when `raw` is not one. */
function stringMap (raw: unknown, at: string, what: string, issues: ParseIssue[]): Record<string, string> | undefined {
  const map = readStringMap(raw)
  if (map === undefined) issues.push({ at, message: `Cannot read ${what}: must be an object of strings` })
  return map
}

/**
 * Reads a view version: version-id, timestamp-ms, schema-id, summary, representations,
 * default-namespace, and default-catalog when given. Java reads every representation type but can
 * write back only `sql` (an unknown one fails when the metadata is saved), so any other is refused
 * up front. Returns the version in the order Java writes it.
 */
export function parseViewVersion (raw: unknown, at: string, issues: ParseIssue[]): WireObject | undefined {
  const before = issues.length
  const bad = (field: string, problem: string): undefined => { issues.push({ at: `${at}.${field}`, message: `Cannot read view version: ${at}.${field} ${problem}` }); return undefined }
  if (!isObject(raw)) { issues.push({ at, message: `Cannot read view version: ${at} must be an object` }); return undefined }
  const versionId = toInt(own(raw, 'version-id'))
  if (versionId === undefined) bad('version-id', 'must be an integer')
  const timestamp = own(raw, 'timestamp-ms')
  if (typeof timestamp === 'string' || toLongText(timestamp) === undefined) bad('timestamp-ms', 'must be an integer')
  const schemaId = toInt(own(raw, 'schema-id'))
  if (schemaId === undefined) bad('schema-id', 'must be an integer')
  const summary = isObject(own(raw, 'summary')) ? stringMap(own(raw, 'summary'), `${at}.summary`, `view version: ${at}.summary`, issues) : bad('summary', 'must be an object of strings')
  const catalog = own(raw, 'default-catalog')
  if (catalog !== undefined && catalog !== null && typeof catalog !== 'string') bad('default-catalog', 'must be a string')
  const ns = own(raw, 'default-namespace')
  // An empty namespace is allowed: the view then resolves names against the engine's current one.
  if (!Array.isArray(ns) || !ns.every(level => typeof level === 'string')) bad('default-namespace', 'must be an array of strings')
  const reps = own(raw, 'representations')
  const representations: WireObject[] = []
  if (!Array.isArray(reps)) bad('representations', 'must be an array')
  else {
    reps.forEach((r, i) => {
      const rat = `representations[${i}]`
      if (!isObject(r) || typeof own(r, 'type') !== 'string') { bad(`${rat}.type`, 'must be a string'); return }
      const type = (own(r, 'type') as string).toLowerCase()
      if (type !== 'sql') { issues.push({ at: `${at}.${rat}.type`, message: `Cannot read view version: ${at}.${rat}: unsupported view representation type ${JSON.stringify(own(r, 'type'))}` }); return }
      if (typeof own(r, 'sql') !== 'string') { bad(`${rat}.sql`, 'must be a string'); return }
      if (typeof own(r, 'dialect') !== 'string') { bad(`${rat}.dialect`, 'must be a string'); return }
      representations.push({ type, sql: own(r, 'sql'), dialect: own(r, 'dialect') })
    })
  }
  if (issues.length > before) return undefined
  return {
    'version-id': versionId,
    'timestamp-ms': timestamp,
    'schema-id': schemaId,
    summary,
    ...(typeof catalog === 'string' ? { 'default-catalog': catalog } : {}),
    'default-namespace': ns,
    representations
  }
}

/**
 * Java `ViewMetadata.Builder.sameViewVersion`: versions that behave the same, ignoring the id and
 * the timestamp. Such a version is not added twice; its id is reused.
 */
export function sameViewVersion (a: WireObject, b: WireObject): boolean {
  return jsonEquals(own(a, 'summary'), own(b, 'summary')) &&
    jsonEquals(own(a, 'representations'), own(b, 'representations')) &&
    (own(a, 'default-catalog') ?? null) === (own(b, 'default-catalog') ?? null) &&
    jsonEquals(own(a, 'default-namespace'), own(b, 'default-namespace')) &&
    own(a, 'schema-id') === own(b, 'schema-id')
}

/** The SQL dialects of a version, lower-cased (Java compares dialects case-insensitively). */
export function sqlDialects (version: WireObject): string[] {
  const reps = own(version, 'representations')
  return (Array.isArray(reps) ? reps : [])
    .filter((r): r is JsonObject => isObject(r) && own(r, 'type') === 'sql' && typeof own(r, 'dialect') === 'string')
    .map(r => (own(r, 'dialect') as string).toLowerCase())
}

/** Parses a view metadata file: the members every view has (spec `ViewMetadata` required list). */
export function parseViewMetadata (json: unknown): { metadata?: ViewMetadata, issues: ParseIssue[] } {
  const issues: ParseIssue[] = []
  const fail = (at: string, message: string): { issues: ParseIssue[] } => ({ issues: [...issues, { at, message: `Cannot parse view metadata: ${message}` }] })
  if (!isObject(json)) return fail('', 'expected an object')
  const uuid = own(json, 'view-uuid')
  if (typeof uuid !== 'string') return fail('view-uuid', 'missing view-uuid (is it a table metadata file?)')
  const version = own(json, 'format-version')
  if (version !== SUPPORTED_VIEW_FORMAT_VERSION) return fail('format-version', `unsupported format-version ${String(version)}`)
  const location = own(json, 'location')
  if (typeof location !== 'string') return fail('location', 'missing location')
  for (const key of ['schemas', 'versions', 'version-log']) if (!Array.isArray(own(json, key))) return fail(key, `missing ${key}`)
  const schemas: Schema[] = []
  ;(own(json, 'schemas') as unknown[]).forEach((s, i) => {
    const schema = parseSchemaShape(s, `schemas[${i}]`, issues)
    if (schema !== undefined) schemas.push(schema.schemaId === undefined ? { ...schema, schemaId: 0 } : schema)
  })
  const versions = own(json, 'versions') as unknown[]
  const versionLog = own(json, 'version-log') as unknown[]
  if (!versions.every(isObject) || !versionLog.every(isObject)) return fail('versions', 'versions and version-log must be arrays of objects')
  const wireVersions = versions as WireObject[]
  const current = toInt(own(json, 'current-version-id'))
  if (current === undefined || !wireVersions.some(v => own(v, 'version-id') === current)) return fail('current-version-id', `current-version-id ${String(own(json, 'current-version-id'))} names no version`)
  const properties = stringMap(own(json, 'properties'), 'properties', 'view properties', issues)
  if (issues.length > 0 || properties === undefined) return { issues }
  return {
    metadata: {
      formatVersion: version,
      viewUuid: uuid,
      location,
      properties,
      schemas,
      currentVersionId: current,
      versions: wireVersions,
      versionLog: versionLog as WireObject[],
      extra: Object.keys(json).filter(k => !KNOWN.has(k)).map(k => [k, json[k]] as const)
    },
    issues
  }
}

/** Writes the view metadata file into `out`, in Java's key order (`ViewMetadataParser.toJson`); `properties` is always written. */
function writeViewMetadata (m: ViewMetadata, out: JsonChunks): void {
  let first = true
  const key = (k: string): JsonChunks => {
    out.text(`${first ? '{' : ','}${JSON.stringify(k)}:`)
    first = false
    return out
  }
  if (m.viewUuid !== undefined) key('view-uuid').text(JSON.stringify(m.viewUuid))
  key('format-version').text(String(m.formatVersion))
  if (m.location !== undefined) key('location').text(JSON.stringify(m.location))
  key('properties').text(JSON.stringify(m.properties))
  key('schemas').schemas(m.schemas)
  key('current-version-id').text(String(m.currentVersionId))
  key('versions').text(`[${m.versions.map(wireText).join(',')}]`)
  key('version-log').text(`[${m.versionLog.map(wireText).join(',')}]`)
  for (const [k, value] of m.extra) key(k).text(writeJson(value))
  out.text('}')
}

/** The view metadata file as UTF-8 chunks. */
export function viewMetadataChunks (m: ViewMetadata): Buffer[] {
  const out = new JsonChunks()
  writeViewMetadata(m, out)
  return out.done()
}
