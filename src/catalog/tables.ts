import { randomUUID } from 'node:crypto'
import { alreadyExists, badRequest } from './errors.js'
import { assertNameFree, type CatalogContext, type CatalogRequest, json, noContent, type Reply, requireNamespace, requireTable } from './context.js'
import { isObject, type JsonObject } from './json.js'
import { etagFor, loadResult, matchesEtag, type SnapshotMode } from './load-result.js'
import { MetadataBuilder } from './metadata-builder.js'
import { paginate } from './paging.js'
import { checkName, checkNamespace, nsKey, tableKey, tableName } from './paths.js'
import { assignFreshIds, normalizeSchema, stringMap } from './schema.js'
import type { CatalogState } from './store.js'

/** Table routes other than commits: list, create (and stage-create), load, exists, drop, rename, register. */

export function listTables (ctx: CatalogContext, req: CatalogRequest): Reply {
  const state = ctx.store.state
  requireNamespace(state, req.namespace)
  const key = nsKey(req.namespace)
  const names = [...state.tables.values()].filter(t => nsKey(t.namespace) === key).map(t => t.name)
  const { page, next } = paginate(names, name => name, req.query)
  return json({ identifiers: page.map(name => ({ namespace: req.namespace, name })), 'next-page-token': next ?? null })
}

function assertCanCreate (state: CatalogState, ns: readonly string[], name: string): void {
  requireNamespace(state, ns)
  assertNameFree(state, ns, name, 'table')
}

/** Rebinds partition or sort source ids to the fresh ids (Java binds them by column name; the mapping is the same). */
function rebind (raw: unknown, ids: Map<number, number>, what: string, dropFieldIds: boolean): JsonObject {
  if (raw === undefined || raw === null) return { fields: [] }
  if (!isObject(raw) || !Array.isArray(raw.fields)) throw badRequest(`Invalid ${what}: fields must be an array`)
  const mapId = (id: unknown): number => {
    const fresh = typeof id === 'number' ? ids.get(id) : undefined
    if (fresh === undefined) throw badRequest(`Invalid ${what}: cannot find source column ${String(id)}`)
    return fresh
  }
  return {
    fields: raw.fields.map(f => {
      if (!isObject(f)) throw badRequest(`Invalid ${what}: fields must be objects`)
      const out: JsonObject = { ...f }
      if (Array.isArray(f['source-ids'])) out['source-ids'] = f['source-ids'].map(mapId)
      else out['source-id'] = mapId(f['source-id'])
      if (dropFieldIds) delete out['field-id']
      return out
    })
  }
}

/**
 * createTable as `TableMetadata.newTableMetadata` does it: every field id is assigned fresh from 1,
 * partition and sort sources are rebound, partition field ids restart at 1000. The format version
 * comes from the `format-version` property (default 2), which is not kept as a property.
 */
export async function createTable (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid create table request: body must be an object')
  const ns = req.namespace
  const name = checkName('table', body.name)
  if (body.schema === undefined) throw badRequest('Invalid create table request: schema is required')
  const properties = stringMap(body.properties, 'table properties')
  let formatVersion = 2
  if (Object.hasOwn(properties, 'format-version')) {
    formatVersion = Number(properties['format-version'])
    delete properties['format-version']
  }
  if (body.location !== undefined && body.location !== null && (typeof body.location !== 'string' || body.location === '')) {
    throw badRequest('Invalid create table request: location must be a non-empty string')
  }
  const { schema, ids } = assignFreshIds(normalizeSchema(body.schema, 0))
  const builder = MetadataBuilder.fromEmpty(formatVersion)
  builder.assignUuid(randomUUID())
  builder.addSchema(schema)
  builder.setCurrentSchema(-1)
  builder.addSpec(rebind(body['partition-spec'], ids, 'partition spec', true))
  builder.setDefaultSpec(-1)
  builder.addSortOrder(rebind(body['write-order'], ids, 'sort order', false))
  builder.setDefaultSortOrder(-1)
  const location = typeof body.location === 'string' ? body.location.replace(/\/+$/, '') : ctx.store.defaultTableLocation(ns, name)
  builder.setLocation(location)
  builder.setProperties(properties)
  const metadata = builder.build() as JsonObject

  if (body['stage-create'] === true) {
    // Nothing is stored: the table appears with the client's later commit carrying assert-create.
    assertCanCreate(ctx.store.state, ns, name)
    return json({ 'metadata-location': null, metadata, config: {} })
  }
  const key = tableKey(ns, name)
  return await ctx.locks.run([key], async () => {
    assertCanCreate(ctx.store.state, ns, name)
    const metadataLocation = ctx.store.nextMetadataLocation(ns, name, metadata)
    await ctx.store.writeMetadata(metadataLocation, metadata)
    try {
      await ctx.store.update(draft => {
        assertCanCreate(draft, ns, name)
        draft.tables.set(key, { namespace: ns, name, metadataLocation })
      })
    } catch (err) {
      await ctx.store.forget(metadataLocation)
      throw err
    }
    return loadResult(metadataLocation, metadata)
  })
}

function snapshotMode (query: URLSearchParams): SnapshotMode {
  const mode = query.get('snapshots') ?? 'all'
  if (mode !== 'all' && mode !== 'refs') throw badRequest(`Invalid snapshots mode: ${mode}: must be all or refs`)
  return mode
}

export async function loadTable (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const record = requireTable(ctx.store.state, req.namespace, req.table)
  const mode = snapshotMode(req.query)
  const etag = etagFor(record.metadataLocation, mode)
  if (matchesEtag(req.headers, etag)) return { status: 304, headers: { etag } }
  const metadata = await ctx.store.readMetadata(record.metadataLocation)
  return loadResult(record.metadataLocation, metadata, mode)
}

export function tableExists (ctx: CatalogContext, req: CatalogRequest): Reply {
  requireTable(ctx.store.state, req.namespace, req.table)
  return noContent()
}

export async function dropTable (ctx: CatalogContext, req: CatalogRequest, purge = req.query.get('purgeRequested') === 'true'): Promise<Reply> {
  const { namespace: ns, table: name } = req
  await ctx.locks.run([tableKey(ns, name)], async () => {
    const record = requireTable(ctx.store.state, ns, name)
    const metadata = purge ? await ctx.store.readMetadata(record.metadataLocation).catch(() => undefined) : undefined
    await ctx.store.update(draft => {
      requireTable(draft, ns, name)
      draft.tables.delete(tableKey(ns, name))
    })
    if (metadata !== undefined) await ctx.store.purge(metadata, record.metadataLocation, ctx.store.defaultTableLocation(ns, name))
  })
  return noContent()
}

/** A `TableIdentifier` in a request body (rename source and destination, for tables and views). */
export function identifier (raw: unknown, what: string, kind: 'table' | 'view' = 'table'): { namespace: string[], name: string } {
  if (!isObject(raw)) throw badRequest(`Invalid ${what}: must be a ${kind} identifier`)
  return { namespace: checkNamespace(raw.namespace), name: checkName(kind, raw.name) }
}

export async function renameTable (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid rename request: body must be an object')
  const from = identifier(body.source, 'source')
  const to = identifier(body.destination, 'destination')
  const fromKey = tableKey(from.namespace, from.name)
  const toKey = tableKey(to.namespace, to.name)
  await ctx.locks.run([fromKey, toKey], async () => {
    await ctx.store.update(draft => {
      const record = requireTable(draft, from.namespace, from.name)
      requireNamespace(draft, to.namespace)
      if (draft.tables.has(toKey)) throw alreadyExists(`Cannot rename ${tableName(from.namespace, from.name)} to ${tableName(to.namespace, to.name)}: table already exists`)
      if (draft.views.has(toKey)) throw alreadyExists(`Cannot rename ${tableName(from.namespace, from.name)} to ${tableName(to.namespace, to.name)}: view already exists`)
      draft.tables.delete(fromKey)
      // Files stay where they are, as in Java; the next commit writes beside the table's location.
      draft.tables.set(toKey, { namespace: to.namespace, name: to.name, metadataLocation: record.metadataLocation })
    })
  })
  return noContent()
}

/** Fills what old v1 files may lack (schemas, specs, sort orders, refs) so later commits can build on it. */
function normalizeRegistered (m: JsonObject, location: string): JsonObject {
  const v = m['format-version']
  if (v !== 1 && v !== 2 && v !== 3) throw badRequest(`Cannot register ${location}: unsupported format-version ${String(v)}`)
  if (typeof m.location !== 'string') throw badRequest(`Cannot register ${location}: metadata has no location`)
  if (typeof m['view-uuid'] === 'string' && m['table-uuid'] === undefined) {
    throw badRequest(`Cannot register ${location}: it is view metadata; register it with register-view`)
  }
  const out: JsonObject = { ...m }
  if (!Array.isArray(out.schemas)) {
    if (!isObject(m.schema)) throw badRequest(`Cannot register ${location}: metadata has no schema`)
    out.schemas = [normalizeSchema(m.schema, typeof m.schema['schema-id'] === 'number' ? m.schema['schema-id'] : 0)]
    out['current-schema-id'] = (out.schemas as JsonObject[])[0]?.['schema-id']
  }
  if (!Array.isArray(out['partition-specs'])) {
    out['partition-specs'] = [{ 'spec-id': 0, fields: Array.isArray(m['partition-spec']) ? m['partition-spec'] : [] }]
    out['default-spec-id'] = 0
  }
  if (!Array.isArray(out['sort-orders'])) {
    out['sort-orders'] = [{ 'order-id': 0, fields: [] }]
    out['default-sort-order-id'] = 0
  }
  const current = out['current-snapshot-id']
  if (!isObject(out.refs)) {
    out.refs = current !== undefined && current !== null && current !== -1 ? { main: { 'snapshot-id': current, type: 'branch' } } : {}
  }
  return out
}

/** A register request's metadata-location; a relative path names a file in the warehouse. */
export function resolveMetadataLocation (ctx: CatalogContext, raw: string): string {
  return ctx.store.localPath(raw) === undefined && !/^[a-z][a-z0-9+.-]*:/i.test(raw)
    ? `${ctx.store.rootUri}/${raw.replace(/^\.\//, '')}`
    : raw
}

export async function registerTable (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid register table request: body must be an object')
  const ns = req.namespace
  const name = checkName('table', body.name)
  const raw = body['metadata-location']
  if (typeof raw !== 'string' || raw === '') throw badRequest('Invalid register table request: metadata-location is required')
  const metadataLocation = resolveMetadataLocation(ctx, raw)
  const key = tableKey(ns, name)
  return await ctx.locks.run([key], async () => {
    requireNamespace(ctx.store.state, ns)
    const metadata = normalizeRegistered(await ctx.store.readMetadata(metadataLocation), metadataLocation)
    ctx.store.remember(metadataLocation, metadata)
    await ctx.store.update(draft => {
      requireNamespace(draft, ns)
      // overwrite replaces a table's pointer, never a view.
      if (draft.views.has(key)) throw alreadyExists(`View with same name already exists: ${tableName(ns, name)}`)
      if (draft.tables.has(key) && body.overwrite !== true) throw alreadyExists(`Table already exists: ${tableName(ns, name)}`)
      draft.tables.set(key, { namespace: ns, name, metadataLocation })
    })
    return loadResult(metadataLocation, metadata)
  })
}

/** Metrics reports are accepted and dropped (the Java client sends one after every scan and commit). */
export function reportMetrics (ctx: CatalogContext, req: CatalogRequest): Reply {
  requireTable(ctx.store.state, req.namespace, req.table)
  return noContent()
}

/** The embedded catalog vends no credentials: local files need none. */
export function loadCredentials (ctx: CatalogContext, req: CatalogRequest): Reply {
  requireTable(ctx.store.state, req.namespace, req.table)
  return json({ 'storage-credentials': [] })
}
