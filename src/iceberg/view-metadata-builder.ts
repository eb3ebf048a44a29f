/**
 * The view metadata builder: applies view updates as Java's `ViewMetadata.Builder` does (reached
 * from `MetadataUpdate.applyTo`): schema and version ids reused for equal entries or assigned as
 * the highest + 1, `-1` meaning "last added", a version-log entry when the current version
 * changes, old versions expired past `version.history.num-entries`. Updates are read through the
 * one action table (`table-update.ts`) and schemas through the one schema reader, as a table's.
 * Problems never throw: each becomes an issue, as in `metadata-builder.ts`.
 */
import { type ApplyIssue } from './metadata-builder.js'
import { assignFreshIds } from './fresh-ids.js'
import { own, readStringMap, toInt, type JsonObject } from './json-values.js'
import { parseSchemaShape, plainRecord } from './parse.js'
import { fieldValue, readUpdate } from './table-update.js'
import { sameSchema } from './type-equality.js'
import type { Schema, ViewMetadata, WireObject } from './types.js'
import { parseViewVersion, sameViewVersion, sqlDialects, SUPPORTED_VIEW_FORMAT_VERSION } from './view-metadata.js'

const LAST_ADDED = -1
const HISTORY_SIZE = 'version.history.num-entries'
const HISTORY_SIZE_DEFAULT = 10
const DROP_DIALECT_ALLOWED = 'replace.drop-dialect.allowed'
const APPEND_DIALECT_ALLOWED = 'replace.append-dialect.allowed'

const versionIdOf = (v: WireObject): number => own(v, 'version-id') as number

type ViewBuildOutcome =
  | { readonly ok: true, readonly metadata: ViewMetadata | undefined }
  | { readonly ok: false, readonly issues: ApplyIssue[] }

export class ViewMetadataBuilder {
  readonly issues: ApplyIssue[] = []
  private viewUuid: string | undefined
  private readonly formatVersion: number
  private location: string | undefined
  private properties: Record<string, string>
  private readonly schemas: Schema[]
  private currentVersionId: number
  private readonly versions: WireObject[]
  private readonly versionLog: readonly WireObject[]
  private readonly extra: ViewMetadata['extra']
  private readonly now: number
  private changed: boolean
  private lastAddedSchemaId: number | undefined
  private lastAddedVersionId: number | undefined
  private readonly addedVersions = new Set<number>()
  private historyEntry: WireObject | undefined
  /** The current version before this change; a replace must keep its SQL dialects. */
  private readonly previous: WireObject | undefined

  private constructor (base: ViewMetadata, isNew: boolean, now: number) {
    this.viewUuid = base.viewUuid
    this.formatVersion = base.formatVersion
    this.location = base.location
    this.properties = Object.assign(plainRecord<string>(), base.properties)
    this.schemas = [...base.schemas]
    this.currentVersionId = base.currentVersionId
    this.versions = [...base.versions]
    this.versionLog = base.versionLog
    this.extra = base.extra
    this.now = now
    this.changed = isNew
    this.previous = isNew ? undefined : base.versions.find(v => versionIdOf(v) === base.currentVersionId)
  }

  /** A builder for a view that does not exist yet (`ViewMetadata.builder()`). */
  static fromEmpty (opts: { now?: number } = {}): ViewMetadataBuilder {
    const empty: ViewMetadata = {
      formatVersion: SUPPORTED_VIEW_FORMAT_VERSION,
      properties: plainRecord<string>(),
      schemas: [],
      currentVersionId: -1,
      versions: [],
      versionLog: [],
      extra: []
    }
    return new ViewMetadataBuilder(empty, true, opts.now ?? Date.now())
  }

  static from (base: ViewMetadata, opts: { now?: number } = {}): ViewMetadataBuilder {
    return new ViewMetadataBuilder(base, false, opts.now ?? Date.now())
  }

  private issue (at: string, message: string, exception: ApplyIssue['exception'] = 'IllegalArgumentException'): void {
    this.issues.push({ at, message, exception })
  }

  /** Applies every update of a view commit in order. */
  applyAll (updates: unknown): void {
    if (updates === undefined || updates === null) return
    if (!Array.isArray(updates)) { this.issue('updates', 'Cannot read commit: updates must be an array'); return }
    for (let i = 0; i < updates.length; i++) {
      const read = readUpdate(updates[i], i, 'view', this.issues)
      if (read === undefined) continue
      const at = `updates[${i}]`
      const u = read.update
      const field = (name: string): unknown => {
        const spec = read.spec.fields.find(f => f.name === name)
        return spec === undefined ? undefined : fieldValue(u, spec)
      }
      switch (read.action) {
        case 'assign-uuid': this.assignUuid(field('uuid') as string, `${at}.uuid`); break
        case 'upgrade-format-version': this.upgradeFormatVersion(toInt(field('format-version')) as number, `${at}.format-version`); break
        case 'add-schema': {
          const schema = parseSchemaShape(field('schema'), `${at}.schema`, this.issues)
          if (schema !== undefined) this.addSchema(schema)
          break
        }
        case 'set-location': this.setLocation(field('location') as string, `${at}.location`); break
        case 'set-properties': this.setProperties(field('updates') as Readonly<Record<string, string>>); break
        case 'remove-properties': this.removeProperties(field('removals') as string[]); break
        case 'add-view-version': {
          const version = parseViewVersion(field('view-version'), `${at}.view-version`, this.issues)
          if (version !== undefined) this.addVersion(version, `${at}.view-version`)
          break
        }
        case 'set-current-view-version': this.setCurrentVersion(toInt(field('view-version-id')) as number, `${at}.view-version-id`); break
      }
    }
  }

  /** Java refuses a second uuid for a view (`Preconditions`: "Cannot reassign uuid"). */
  assignUuid (uuid: string, at = 'uuid'): void {
    if (uuid === this.viewUuid) return
    if (this.viewUuid !== undefined) { this.issue(at, `Cannot reassign uuid: ${this.viewUuid} -> ${uuid}`); return }
    this.viewUuid = uuid
    this.changed = true
  }

  upgradeFormatVersion (version: number, at = 'format-version'): void {
    if (version < this.formatVersion) { this.issue(at, `Cannot downgrade v${this.formatVersion} view to v${version}`); return }
    if (version === this.formatVersion) return
    // Java `ViewMetadata.check`: only view format v1 exists.
    this.issue(at, `Unsupported format version: ${version} (supported view format versions: ${SUPPORTED_VIEW_FORMAT_VERSION})`)
  }

  /** Java `addSchemaInternal`: an equal schema keeps its id; the client's schema-id is not used. */
  addSchema (schema: Schema): number {
    let id = 0
    for (const s of this.schemas) {
      if (sameSchema(s, schema)) return s.schemaId as number
      if ((s.schemaId as number) >= id) id = (s.schemaId as number) + 1
    }
    this.schemas.push({ ...schema, schemaId: id })
    this.lastAddedSchemaId = id
    this.changed = true
    return id
  }

  setLocation (location: string, at = 'location'): void {
    if (location === '') { this.issue(at, 'Cannot set location: it is empty'); return }
    if (location === this.location) return
    this.location = location
    this.changed = true
  }

  /** Java records set-properties and remove-properties as changes whenever they are not empty. */
  setProperties (updates: Readonly<Record<string, string>>): void {
    const keys = Object.keys(updates)
    if (keys.length === 0) return
    for (const key of keys) this.properties[key] = updates[key] as string
    this.changed = true
  }

  removeProperties (keys: readonly string[]): void {
    if (keys.length === 0) return
    for (const key of keys) delete this.properties[key]
    this.changed = true
  }

  /**
   * Java `addVersionInternal`: a version equal to an existing one reuses its id; otherwise the id
   * is the client's, raised above every existing id. A schema-id of -1 means the schema added last
   * in this commit.
   */
  addVersion (given: WireObject, at = 'view-version'): number | undefined {
    let id = own(given, 'version-id') as number
    let same: WireObject | undefined
    for (const v of this.versions) {
      if (sameViewVersion(v, given)) { same = v; break }
      if (versionIdOf(v) >= id) id = versionIdOf(v) + 1
    }
    if (same !== undefined) {
      const existing = versionIdOf(same)
      this.lastAddedVersionId = this.addedVersions.has(existing) ? existing : undefined
      return existing
    }
    let schemaId = own(given, 'schema-id') as number
    if (schemaId === LAST_ADDED) {
      if (this.lastAddedSchemaId === undefined) { this.issue(`${at}.schema-id`, 'Cannot set last added schema: no schema has been added', 'ValidationException'); return undefined }
      schemaId = this.lastAddedSchemaId
    }
    if (!this.schemas.some(s => s.schemaId === schemaId)) { this.issue(`${at}.schema-id`, `Cannot add version with unknown schema: ${schemaId}`); return undefined }
    const version: WireObject = { ...given, 'version-id': id, 'schema-id': schemaId }
    const dialects = new Set<string>()
    for (const dialect of sqlDialects(version)) {
      if (dialects.has(dialect)) { this.issue(`${at}.representations`, `Cannot add view version: multiple queries for dialect ${dialect}`); return undefined }
      dialects.add(dialect)
    }
    this.versions.push(version)
    this.addedVersions.add(id)
    this.lastAddedVersionId = id
    this.changed = true
    return id
  }

  /** Java `setCurrentVersionId`; the version-log entry takes the version's own time when this commit added it. */
  setCurrentVersion (versionId: number, at = 'view-version-id'): void {
    let id = versionId
    if (id === LAST_ADDED) {
      if (this.lastAddedVersionId === undefined) { this.issue(at, 'Cannot set last version id: no current version id has been set', 'ValidationException'); return }
      id = this.lastAddedVersionId
    }
    if (id === this.currentVersionId) return
    const version = this.versions.find(v => versionIdOf(v) === id)
    if (version === undefined) { this.issue(at, `Cannot set current version to unknown version: ${id}`); return }
    this.currentVersionId = id
    this.historyEntry = { 'timestamp-ms': this.addedVersions.has(id) ? own(version, 'timestamp-ms') : this.now, 'version-id': id }
    this.changed = true
  }

  /** Java `ViewMetadata.Builder.build`: checks, version-log, expiry of old versions. */
  build (opts: { newUuid: () => string }): ViewBuildOutcome {
    if (this.issues.length > 0) return { ok: false, issues: this.issues }
    const fail = (message: string): ViewBuildOutcome => ({ ok: false, issues: [{ at: '', message }] })
    if (this.location === undefined) return fail('Cannot build view: location is missing')
    if (this.versions.length === 0) return fail('Cannot build view: no versions were added')
    const current = this.versions.find(v => versionIdOf(v) === this.currentVersionId)
    if (current === undefined) {
      return fail(`Cannot find current version ${this.currentVersionId} in view versions: ${this.versions.map(versionIdOf).join(', ')}`)
    }
    let history: WireObject[] = this.historyEntry === undefined ? [...this.versionLog] : [...this.versionLog, this.historyEntry]

    const props = this.properties
    const dropAllowed = props[DROP_DIALECT_ALLOWED]?.toLowerCase() === 'true'
    if (dropAllowed && props[APPEND_DIALECT_ALLOWED]?.toLowerCase() === 'true') {
      return fail(`Cannot set both ${DROP_DIALECT_ALLOWED} and ${APPEND_DIALECT_ALLOWED} to true`)
    }
    if (this.previous !== undefined && !dropAllowed) {
      const before = [...new Set(sqlDialects(this.previous))]
      const after = new Set(sqlDialects(current))
      if (!before.every(d => after.has(d))) {
        return fail(`Cannot replace view due to loss of view dialects (${DROP_DIALECT_ALLOWED}=false): previous dialects: [${before.join(', ')}], new dialects: [${[...after].join(', ')}]`)
      }
    }

    const rawSize = props[HISTORY_SIZE]
    const historySize = rawSize === undefined ? HISTORY_SIZE_DEFAULT : Number(rawSize)
    if (!Number.isInteger(historySize) || historySize <= 0) return fail(`${HISTORY_SIZE} must be positive but was ${rawSize as string}`)
    // Keep at least the versions added in this commit and the current one.
    const keep = Math.max(new Set([...this.addedVersions, versionIdOf(current)]).size, historySize)
    let versions: readonly WireObject[] = this.versions
    if (versions.length > keep) {
      versions = expireVersions(this.versions, keep, current)
      history = retainHistory(history, new Set(versions.map(versionIdOf)))
    }
    if (!this.changed) return { ok: true, metadata: undefined }
    return {
      ok: true,
      metadata: {
        formatVersion: this.formatVersion,
        viewUuid: this.viewUuid ?? opts.newUuid(),
        location: this.location,
        properties: this.properties,
        schemas: this.schemas,
        currentVersionId: this.currentVersionId,
        versions,
        versionLog: history,
        extra: this.extra
      }
    }
  }
}

/** Java `expireVersions`: the current version first, then the highest ids (ids are assigned in order). */
function expireVersions (versions: readonly WireObject[], keep: number, current: WireObject): WireObject[] {
  const byIdDesc = [...versions].sort((a, b) => versionIdOf(b) - versionIdOf(a))
  const retained = [current]
  for (const v of byIdDesc.slice(0, keep)) {
    if (retained.length === keep) break
    if (versionIdOf(v) !== versionIdOf(current)) retained.push(v)
  }
  return retained
}

/** Java `updateHistory`: an entry for an expired version drops the history before it. */
function retainHistory (history: readonly WireObject[], kept: Set<number>): WireObject[] {
  const out: WireObject[] = []
  for (const entry of history) {
    if (kept.has(own(entry, 'version-id') as number)) out.push(entry)
    else out.length = 0
  }
  return out
}

interface NewViewRequest {
  /** The request's `schema`, `view-version` and `properties`, as wire JSON. */
  readonly schema: unknown
  readonly viewVersion: unknown
  readonly properties: unknown
  readonly location: string
}

/**
 * A new view's metadata, as Java's `BaseViewBuilder.create` makes it: field ids assigned fresh
 * from 1, schema 0, version 1 stamped with the server's clock and made current (one version-log
 * entry). The request's version id, timestamp and schema id are not used; its summary is kept.
 */
export function newViewMetadata (req: NewViewRequest, opts: { uuid: string, now: number }): { metadata?: ViewMetadata, issues: ApplyIssue[] } {
  const issues: ApplyIssue[] = []
  const properties = readStringMap(req.properties)
  if (properties === undefined) issues.push({ at: 'properties', message: 'Cannot create view: view properties must be an object of strings' })
  const version = parseViewVersion(req.viewVersion, 'view-version', issues)
  if (version !== undefined && (own(version, 'representations') as unknown[]).length === 0) {
    issues.push({ at: 'view-version.representations', message: 'Cannot create view without specifying a query' })
  }
  const parsed = parseSchemaShape(req.schema, 'schema', issues)
  if (properties === undefined || version === undefined || parsed === undefined || issues.length > 0) return { issues }
  const { schema } = assignFreshIds(parsed)
  const b = ViewMetadataBuilder.fromEmpty({ now: opts.now })
  b.setProperties(properties)
  b.setLocation(req.location)
  const schemaId = b.addSchema(schema)
  const versionId = b.addVersion({ ...version, 'version-id': 1, 'timestamp-ms': opts.now, 'schema-id': schemaId } satisfies JsonObject)
  if (versionId !== undefined) b.setCurrentVersion(versionId)
  const built = b.build({ newUuid: () => opts.uuid })
  return built.ok ? { metadata: built.metadata as ViewMetadata, issues: [] } : { issues: built.issues }
}
