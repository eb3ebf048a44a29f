import { randomUUID } from 'node:crypto'
import { badRequest, validationFailed } from './errors.js'
import { cloneJson, defineOwn, isObject, type JsonObject } from './json.js'
import { normalizeSchema, sameSchema, stringList, stringMap } from './schema.js'
import type { Update } from './table-updates.js'
import { parseViewVersion, sameViewVersion, sqlDialects } from './view-version.js'

/**
 * Applies view updates to a copy of the view metadata, as Java `ViewMetadata.Builder` does
 * (reached from `MetadataUpdate.applyTo`): schema and version ids reused for equal entries or
 * assigned as the highest + 1, `-1` meaning "last added", a version-log entry when the current
 * version changes, old versions expired past `version.history.num-entries`. The base is never
 * touched; `build()` returns undefined when nothing changed (no new metadata file, as Java).
 */

export const SUPPORTED_VIEW_FORMAT_VERSION = 1
const LAST_ADDED = -1
const HISTORY_SIZE = 'version.history.num-entries'
const HISTORY_SIZE_DEFAULT = 10
const DROP_DIALECT_ALLOWED = 'replace.drop-dialect.allowed'
const APPEND_DIALECT_ALLOWED = 'replace.append-dialect.allowed'

type Metadata = JsonObject

const list = (m: Metadata, key: string): JsonObject[] => {
  if (!Array.isArray(m[key])) m[key] = []
  return m[key] as JsonObject[]
}

export class ViewMetadataBuilder {
  readonly m: Metadata
  #changed = false
  #lastAddedSchemaId: number | undefined
  #lastAddedVersionId: number | undefined
  readonly #addedVersions = new Set<number>()
  #historyEntry: JsonObject | undefined
  /** The current version before this change; a replace must keep its SQL dialects. */
  readonly #previous: JsonObject | undefined

  private constructor (m: Metadata, previous: JsonObject | undefined) {
    this.m = m
    this.#previous = previous
  }

  /** Builder for a view that does not exist yet (`ViewMetadata.builder()`). */
  static fromEmpty (): ViewMetadataBuilder {
    const m: Metadata = {
      'format-version': SUPPORTED_VIEW_FORMAT_VERSION,
      properties: Object.create(null),
      schemas: [],
      versions: [],
      'version-log': []
    }
    const b = new ViewMetadataBuilder(m, undefined)
    b.#changed = true
    return b
  }

  static from (base: Metadata): ViewMetadataBuilder {
    const m = cloneJson(base)
    const previous = list(m, 'versions').find(v => v['version-id'] === m['current-version-id'])
    return new ViewMetadataBuilder(m, previous)
  }

  apply (u: Update): void {
    const action = ACTIONS[u.action]
    if (action === undefined) throw badRequest(`Unknown view update action: ${u.action}`)
    action(this, u)
  }

  assignUuid (uuid: string): void {
    const current = this.m['view-uuid']
    if (current === uuid) return
    if (typeof current === 'string') throw badRequest(`Cannot reassign uuid: ${current} -> ${uuid}`)
    this.m['view-uuid'] = uuid
    this.#changed = true
  }

  upgradeFormatVersion (version: number): void {
    const current = this.m['format-version'] as number
    if (version < current) throw badRequest(`Cannot downgrade v${current} view to v${version}`)
    if (version === current) return
    // Java `ViewMetadata.check`: only view format v1 exists.
    throw badRequest(`Unsupported format version: ${version} (supported view format versions: ${SUPPORTED_VIEW_FORMAT_VERSION})`)
  }

  /** Java `addSchemaInternal`: an equal schema keeps its id; the client's schema-id is not trusted. */
  addSchema (raw: unknown): number {
    const schemas = list(this.m, 'schemas')
    const candidate = normalizeSchema(raw, 0, 'add-schema.schema')
    let id = 0
    for (const s of schemas) {
      if (sameSchema(s, candidate)) return s['schema-id'] as number
      if ((s['schema-id'] as number) >= id) id = (s['schema-id'] as number) + 1
    }
    candidate['schema-id'] = id
    schemas.push(candidate)
    this.#lastAddedSchemaId = id
    this.#changed = true
    return id
  }

  setLocation (location: string): void {
    if (location.length === 0) throw badRequest('Invalid location: must not be empty')
    if (this.m.location === location) return
    this.m.location = location
    this.#changed = true
  }

  /** Java records set-properties and remove-properties as changes whenever they are not empty. */
  setProperties (updates: Record<string, string>): void {
    const keys = Object.keys(updates)
    if (keys.length === 0) return
    const props = this.#properties()
    for (const key of keys) defineOwn(props, key, updates[key])
    this.#changed = true
  }

  removeProperties (keys: string[]): void {
    if (keys.length === 0) return
    const props = this.#properties()
    for (const key of keys) delete props[key]
    this.#changed = true
  }

  /**
   * Java `addVersionInternal`: a version equal to an existing one (same summary, representations,
   * default catalog and namespace, schema) reuses its id; otherwise the id is the client's, raised
   * above every existing id. A schema-id of -1 means the schema added last in this commit.
   */
  addVersion (raw: unknown): number {
    let version = parseViewVersion(raw, 'add-view-version.view-version')
    const versions = list(this.m, 'versions')
    let id = version['version-id'] as number
    let same: JsonObject | undefined
    for (const v of versions) {
      if (sameViewVersion(v, version)) {
        same = v
        break
      }
      if ((v['version-id'] as number) >= id) id = (v['version-id'] as number) + 1
    }
    if (same !== undefined) {
      const existing = same['version-id'] as number
      this.#lastAddedVersionId = this.#addedVersions.has(existing) ? existing : undefined
      return existing
    }
    version = { ...version, 'version-id': id }
    if (version['schema-id'] === LAST_ADDED) {
      if (this.#lastAddedSchemaId === undefined) throw validationFailed('Cannot set last added schema: no schema has been added')
      version['schema-id'] = this.#lastAddedSchemaId
    }
    if (!list(this.m, 'schemas').some(s => s['schema-id'] === version['schema-id'])) {
      throw badRequest(`Cannot add version with unknown schema: ${version['schema-id'] as number}`)
    }
    const dialects = new Set<string>()
    for (const dialect of sqlDialects(version)) {
      if (dialects.has(dialect)) throw badRequest(`Invalid view version: Cannot add multiple queries for dialect ${dialect}`)
      dialects.add(dialect)
    }
    versions.push(version)
    this.#addedVersions.add(id)
    this.#lastAddedVersionId = id
    this.#changed = true
    return id
  }

  /** Java `setCurrentVersionId`; the version-log entry takes the version's own timestamp when it was added in this commit. */
  setCurrentVersion (versionId: number): void {
    let id = versionId
    if (id === LAST_ADDED) {
      if (this.#lastAddedVersionId === undefined) throw validationFailed('Cannot set last version id: no current version id has been set')
      id = this.#lastAddedVersionId
    }
    if (this.m['current-version-id'] === id) return
    const version = list(this.m, 'versions').find(v => v['version-id'] === id)
    if (version === undefined) throw badRequest(`Cannot set current version to unknown version: ${id}`)
    this.m['current-version-id'] = id
    this.#historyEntry = {
      'timestamp-ms': this.#addedVersions.has(id) ? version['timestamp-ms'] : Date.now(),
      'version-id': id
    }
    this.#changed = true
  }

  #properties (): Record<string, string> {
    if (!isObject(this.m.properties)) this.m.properties = Object.create(null)
    return this.m.properties as Record<string, string>
  }

  /** Java `ViewMetadata.Builder.build`: checks, version-log, expiry of old versions. */
  build (): Metadata | undefined {
    const m = this.m
    if (typeof m.location !== 'string') throw badRequest('Invalid location: null')
    const versions = list(m, 'versions')
    if (versions.length === 0) throw badRequest('Invalid view: no versions were added')
    const current = versions.find(v => v['version-id'] === m['current-version-id'])
    if (current === undefined) {
      throw badRequest(`Cannot find current version ${String(m['current-version-id'])} in view versions: ${versions.map(v => v['version-id'] as number).join(', ')}`)
    }
    const history = list(m, 'version-log')
    if (this.#historyEntry !== undefined) history.push(this.#historyEntry)

    const props = this.#properties()
    const dropAllowed = props[DROP_DIALECT_ALLOWED]?.toLowerCase() === 'true'
    if (dropAllowed && props[APPEND_DIALECT_ALLOWED]?.toLowerCase() === 'true') {
      throw badRequest(`Cannot set both ${DROP_DIALECT_ALLOWED} and ${APPEND_DIALECT_ALLOWED} to true`)
    }
    if (this.#previous !== undefined && !dropAllowed) {
      const before = [...new Set(sqlDialects(this.#previous))]
      const after = new Set(sqlDialects(current))
      if (!before.every(d => after.has(d))) {
        throw badRequest(`Cannot replace view due to loss of view dialects (${DROP_DIALECT_ALLOWED}=false): previous dialects: [${before.join(', ')}], new dialects: [${[...after].join(', ')}]`)
      }
    }

    const rawSize = props[HISTORY_SIZE]
    const historySize = rawSize === undefined ? HISTORY_SIZE_DEFAULT : Number(rawSize)
    if (!Number.isInteger(historySize) || historySize <= 0) throw badRequest(`${HISTORY_SIZE} must be positive but was ${rawSize as string}`)
    // Keep at least the versions added in this commit and the current one.
    const keep = Math.max(new Set([...this.#addedVersions, current['version-id'] as number]).size, historySize)
    if (versions.length > keep) {
      m.versions = expireVersions(versions, keep, current)
      const kept = new Set((m.versions as JsonObject[]).map(v => v['version-id']))
      m['version-log'] = retainHistory(history, kept)
    }

    if (!this.#changed) return undefined
    m['view-uuid'] ??= randomUUID()
    return canonicalViewMetadata(m)
  }
}

/** Java `expireVersions`: the current version first, then the highest ids (ids are assigned in order). */
function expireVersions (versions: JsonObject[], keep: number, current: JsonObject): JsonObject[] {
  const byIdDesc = [...versions].sort((a, b) => (b['version-id'] as number) - (a['version-id'] as number))
  const retained = [current]
  for (const v of byIdDesc.slice(0, keep)) {
    if (retained.length === keep) break
    if (v['version-id'] !== current['version-id']) retained.push(v)
  }
  return retained
}

/** Java `updateHistory`: an entry for an expired version drops the history before it. */
function retainHistory (history: JsonObject[], kept: Set<unknown>): JsonObject[] {
  const out: JsonObject[] = []
  for (const entry of history) {
    if (kept.has(entry['version-id'])) out.push(entry)
    else out.length = 0
  }
  return out
}

const ACTIONS: Record<string, (b: ViewMetadataBuilder, u: Update) => void> = {
  'assign-uuid': (b, u) => b.assignUuid(u.uuid as string),
  'upgrade-format-version': (b, u) => b.upgradeFormatVersion(u['format-version'] as number),
  'add-schema': (b, u) => { b.addSchema(u.schema) },
  'set-location': (b, u) => b.setLocation(u.location as string),
  'set-properties': (b, u) => b.setProperties(stringMap(u.updates ?? u.updated, 'set-properties updates')),
  'remove-properties': (b, u) => b.removeProperties(stringList(u.removals ?? u.removed, 'remove-properties removals')),
  'add-view-version': (b, u) => { b.addVersion(u['view-version']) },
  'set-current-view-version': (b, u) => b.setCurrentVersion(u['view-version-id'] as number)
}

const KEY_ORDER = ['view-uuid', 'format-version', 'location', 'properties', 'schemas', 'current-version-id', 'versions', 'version-log']

/** View metadata in Java's key order (`ViewMetadataParser.toJson`); `properties` is always written. */
export function canonicalViewMetadata (m: Metadata): Metadata {
  const out: Metadata = {}
  for (const key of KEY_ORDER) if (m[key] !== undefined) out[key] = m[key]
  for (const key of Object.keys(m)) if (!Object.hasOwn(out, key) && m[key] !== undefined) defineOwn(out, key, m[key])
  return out
}
