import { alreadyExists, badRequest } from './errors.js'
import {
  assertNameFree, type CatalogContext, type CatalogRequest, json, noContent, type Reply, requireNamespace, requireView
} from './context.js'
import { isObject, type JsonObject } from './json.js'
import { paginate } from './paging.js'
import { checkName, nsKey, tableKey, tableName } from './paths.js'
import { assignFreshIds, normalizeSchema, stringMap } from './schema.js'
import type { CatalogState } from './store.js'
import { identifier, resolveMetadataLocation } from './tables.js'
import { SUPPORTED_VIEW_FORMAT_VERSION, ViewMetadataBuilder } from './view-metadata-builder.js'
import { checkViewRequirements, parseViewRequirements, parseViewUpdates } from './view-updates.js'
import { parseViewVersion } from './view-version.js'

/**
 * View routes (spec: listViews, createView, loadView, viewExists, replaceView, dropView,
 * renameView, registerView), as the Java reference server runs them (`CatalogHandlers` over a
 * `ViewCatalog`). Views share the identifier space, the per-identifier locks, the state file and
 * the metadata-file layout of tables; a table and a view never share a name.
 */

/** LoadViewResult: `metadata-location` and `metadata` (spec ~3900); no ETag is defined for views. */
const viewResult = (metadataLocation: string, metadata: JsonObject): Reply =>
  json({ 'metadata-location': metadataLocation, metadata, config: {} })

export function listViews (ctx: CatalogContext, req: CatalogRequest): Reply {
  const state = ctx.store.state
  requireNamespace(state, req.namespace)
  const key = nsKey(req.namespace)
  const names = [...state.views.values()].filter(v => nsKey(v.namespace) === key).map(v => v.name)
  const { page, next } = paginate(names, name => name, req.query)
  return json({ identifiers: page.map(name => ({ namespace: req.namespace, name })), 'next-page-token': next ?? null })
}

function assertCanCreate (state: CatalogState, ns: readonly string[], name: string): void {
  requireNamespace(state, ns)
  assertNameFree(state, ns, name, 'view')
}

/** Writes a new view's first metadata file and points the identifier at it, or leaves nothing behind. */
async function storeNewView (ctx: CatalogContext, ns: string[], name: string, metadata: JsonObject, metadataLocation: string, write: boolean): Promise<void> {
  if (write) await ctx.store.writeMetadata(metadataLocation, metadata)
  try {
    await ctx.store.update(draft => {
      assertCanCreate(draft, ns, name)
      draft.views.set(tableKey(ns, name), { namespace: ns, name, metadataLocation })
    })
  } catch (err) {
    if (write) await ctx.store.forget(metadataLocation)
    throw err
  }
}

/**
 * createView as Java's `BaseViewBuilder.create` does it: field ids assigned fresh from 1, schema 0,
 * version 1 stamped with the server's clock, made current (one version-log entry). The request's
 * version id, timestamp and schema id are not authoritative; its summary is kept.
 */
export async function createView (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid create view request: body must be an object')
  const ns = req.namespace
  const name = checkName('view', body.name)
  if (body.schema === undefined || body.schema === null) throw badRequest('Invalid create view request: schema is required')
  if (body['view-version'] === undefined || body['view-version'] === null) throw badRequest('Invalid create view request: view-version is required')
  if (body.location !== undefined && body.location !== null && (typeof body.location !== 'string' || body.location === '')) {
    throw badRequest('Invalid create view request: location must be a non-empty string')
  }
  const properties = stringMap(body.properties, 'view properties')
  const version = parseViewVersion(body['view-version'])
  if ((version.representations as unknown[]).length === 0) throw badRequest('Invalid create view request: Cannot create view without specifying a query')
  const { schema } = assignFreshIds(normalizeSchema(body.schema, 0))

  const builder = ViewMetadataBuilder.fromEmpty()
  builder.setProperties(properties)
  builder.setLocation(typeof body.location === 'string' ? body.location.replace(/\/+$/, '') : ctx.store.defaultTableLocation(ns, name))
  const schemaId = builder.addSchema(schema)
  builder.setCurrentVersion(builder.addVersion({ ...version, 'version-id': 1, 'timestamp-ms': Date.now(), 'schema-id': schemaId }))
  const metadata = builder.build() as JsonObject

  return await ctx.locks.run([tableKey(ns, name)], async () => {
    assertCanCreate(ctx.store.state, ns, name)
    const metadataLocation = ctx.store.nextMetadataLocation(ns, name, metadata)
    await storeNewView(ctx, ns, name, metadata, metadataLocation, true)
    return viewResult(metadataLocation, metadata)
  })
}

export async function loadView (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const record = requireView(ctx.store.state, req.namespace, req.table)
  return viewResult(record.metadataLocation, await ctx.store.readMetadata(record.metadataLocation))
}

export function viewExists (ctx: CatalogContext, req: CatalogRequest): Reply {
  requireView(ctx.store.state, req.namespace, req.table)
  return noContent()
}

/**
 * replaceView (spec CommitViewRequest): parse everything, then under the view's lock check the
 * requirements against the current metadata, apply the updates to a copy, write the new file and
 * switch the pointer. A commit that changes nothing writes nothing and answers the current view.
 */
export async function commitView (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid commit: body must be an object')
  const requirements = parseViewRequirements(body.requirements)
  const updates = parseViewUpdates(body.updates)
  const { namespace: ns, table: name } = req
  const key = tableKey(ns, name)
  return await ctx.locks.run([key], async () => {
    const record = requireView(ctx.store.state, ns, name)
    const base = await ctx.store.readMetadata(record.metadataLocation)
    checkViewRequirements(requirements, base)
    const builder = ViewMetadataBuilder.from(base)
    for (const update of updates) builder.apply(update)
    const next = builder.build()
    if (next === undefined) return viewResult(record.metadataLocation, base)
    const location = ctx.store.nextMetadataLocation(ns, name, next, record.metadataLocation)
    await ctx.store.writeMetadata(location, next)
    try {
      await ctx.store.update(draft => {
        // The view lock guarantees this; checked anyway so a bug can never lose an update.
        if (draft.views.get(key)?.metadataLocation !== record.metadataLocation) {
          throw new Error(`concurrent change of view ${tableName(ns, name)} while locked`)
        }
        draft.views.set(key, { namespace: record.namespace, name: record.name, metadataLocation: location })
      })
    } catch (err) {
      await ctx.store.forget(location)
      throw err
    }
    return viewResult(location, next)
  })
}

/** dropView: the identifier is released; metadata files stay where they are, as in Java. */
export async function dropView (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const { namespace: ns, table: name } = req
  await ctx.locks.run([tableKey(ns, name)], async () => {
    await ctx.store.update(draft => {
      requireView(draft, ns, name)
      draft.views.delete(tableKey(ns, name))
    })
  })
  return noContent()
}

/** renameView (spec: body is a RenameTableRequest). The destination may be neither a table nor a view. */
export async function renameView (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid rename request: body must be an object')
  const from = identifier(body.source, 'source', 'view')
  const to = identifier(body.destination, 'destination', 'view')
  const fromKey = tableKey(from.namespace, from.name)
  const toKey = tableKey(to.namespace, to.name)
  await ctx.locks.run([fromKey, toKey], async () => {
    await ctx.store.update(draft => {
      const record = requireView(draft, from.namespace, from.name)
      requireNamespace(draft, to.namespace)
      const what = `Cannot rename ${tableName(from.namespace, from.name)} to ${tableName(to.namespace, to.name)}`
      if (draft.tables.has(toKey)) throw alreadyExists(`${what}: table already exists`)
      if (draft.views.has(toKey)) throw alreadyExists(`${what}: view already exists`)
      draft.views.delete(fromKey)
      draft.views.set(toKey, { namespace: to.namespace, name: to.name, metadataLocation: record.metadataLocation })
    })
  })
  return noContent()
}

/** The fields every view metadata file has (spec `ViewMetadata` required list), checked before registering it. */
function checkViewMetadata (m: JsonObject, location: string): void {
  const fail = (what: string): never => { throw badRequest(`Cannot register view ${location}: ${what}`) }
  if (typeof m['view-uuid'] !== 'string') fail('metadata has no view-uuid (is it a table metadata file?)')
  if (m['format-version'] !== SUPPORTED_VIEW_FORMAT_VERSION) fail(`unsupported format-version ${String(m['format-version'])}`)
  if (typeof m.location !== 'string') fail('metadata has no location')
  for (const key of ['schemas', 'versions', 'version-log']) if (!Array.isArray(m[key])) fail(`metadata has no ${key}`)
  const versions = m.versions as JsonObject[]
  if (!versions.some(v => isObject(v) && v['version-id'] === m['current-version-id'])) {
    fail(`current-version-id ${String(m['current-version-id'])} names no version`)
  }
}

/** registerView (spec RegisterViewRequest: name, metadata-location): points a new view at an existing file. */
export async function registerView (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid register view request: body must be an object')
  const ns = req.namespace
  const name = checkName('view', body.name)
  const raw = body['metadata-location']
  if (typeof raw !== 'string' || raw === '') throw badRequest('Invalid register view request: metadata-location is required')
  const metadataLocation = resolveMetadataLocation(ctx, raw)
  return await ctx.locks.run([tableKey(ns, name)], async () => {
    assertCanCreate(ctx.store.state, ns, name)
    const metadata = await ctx.store.readMetadata(metadataLocation)
    checkViewMetadata(metadata, metadataLocation)
    await storeNewView(ctx, ns, name, metadata, metadataLocation, false)
    return viewResult(metadataLocation, metadata)
  })
}
