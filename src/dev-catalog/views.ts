import { randomUUID } from 'node:crypto'
import { ERRORS, GateError } from '../errors.js'
import { isObject } from '../iceberg/json-values.js'
import { checkViewRequirements, requirementIssues } from '../iceberg/requirements.js'
import { namespaceSegment, tableName } from '../iceberg/rest-path.js'
import { updateIssues } from '../iceberg/table-update.js'
import type { ViewMetadata } from '../iceberg/types.js'
import { newViewMetadata, ViewMetadataBuilder } from '../iceberg/view-metadata-builder.js'
import {
  assertNameFree, badRequest, type CatalogContext, type CatalogRequest, failOnIssues, json, noContent, type Reply,
  requireNamespace, requireView
} from './context.js'
import { objectChunks } from './load-result.js'
import { paginate } from './paging.js'
import { type CatalogState, checkName, tableKey } from './store.js'
import { identifier, resolveMetadataLocation } from './tables.js'

/**
 * View routes (spec: listViews, createView, loadView, viewExists, replaceView, dropView,
 * renameView, registerView), as the Java reference server runs them (`CatalogHandlers` over a
 * `ViewCatalog`). Views share the identifier space, the per-identifier locks, the state file and
 * the metadata-file layout of tables; a table and a view never share a name.
 */

/** LoadViewResult: `metadata-location` and `metadata` (spec ~3900); no ETag is defined for views. */
const viewResult = (ctx: CatalogContext, metadataLocation: string, metadata: ViewMetadata): Reply => ({
  status: 200,
  chunks: objectChunks([['metadata-location', JSON.stringify(metadataLocation)], ['metadata', ctx.store.viewFile(metadataLocation, metadata)], ['config', '{}']])
})

export function listViews (ctx: CatalogContext, req: CatalogRequest): Reply {
  const state = ctx.store.state
  requireNamespace(state, req.namespace)
  const key = namespaceSegment(req.namespace)
  const names = [...state.views.values()].filter(v => namespaceSegment(v.namespace) === key).map(v => v.name)
  const { page, next } = paginate(names, name => name, req.query)
  return json({ identifiers: page.map(name => ({ namespace: req.namespace, name })), 'next-page-token': next ?? null })
}

function assertCanCreate (state: CatalogState, ns: readonly string[], name: string): void {
  requireNamespace(state, ns)
  assertNameFree(state, ns, name, 'view')
}

/** Writes a new view's first metadata file and points the identifier at it, or leaves nothing behind. */
async function storeNewView (ctx: CatalogContext, ns: string[], name: string, metadata: ViewMetadata, metadataLocation: string, write: boolean): Promise<void> {
  if (write) await ctx.store.writeView(metadataLocation, metadata)
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

/** createView: the new view's metadata is the model's (`newViewMetadata`, as Java's `BaseViewBuilder.create`). */
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
  const { metadata, issues } = newViewMetadata({
    schema: body.schema,
    viewVersion: body['view-version'],
    properties: body.properties,
    location: typeof body.location === 'string' ? body.location.replace(/\/+$/, '') : ctx.store.defaultTableLocation(ns, name)
  }, { uuid: randomUUID(), now: Date.now() })
  failOnIssues(issues)
  if (metadata === undefined) throw badRequest('Invalid create view request')

  return await ctx.locks.run([tableKey(ns, name)], async () => {
    assertCanCreate(ctx.store.state, ns, name)
    const metadataLocation = ctx.store.nextMetadataLocation(ns, name, metadata.location)
    await storeNewView(ctx, ns, name, metadata, metadataLocation, true)
    return viewResult(ctx, metadataLocation, metadata)
  })
}

export async function loadView (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const record = requireView(ctx.store.state, req.namespace, req.table)
  return viewResult(ctx, record.metadataLocation, await ctx.store.readView(record.metadataLocation))
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
  // Optional in CommitViewRequest; Java reads a null list as none (hasNonNull).
  failOnIssues(requirementIssues(body.requirements ?? undefined, 'view'))
  failOnIssues(updateIssues(body.updates, 'view'))
  const requirements = Array.isArray(body.requirements) ? body.requirements : []
  const { namespace: ns, table: name } = req
  const key = tableKey(ns, name)
  return await ctx.locks.run([key], async () => {
    const record = requireView(ctx.store.state, ns, name)
    const base = await ctx.store.readView(record.metadataLocation)
    const conflict = checkViewRequirements(base.viewUuid, requirements)[0]
    if (conflict !== undefined) throw new GateError(ERRORS.COMMIT_CONFLICT, conflict.message)
    const builder = ViewMetadataBuilder.from(base)
    builder.applyAll(body.updates)
    const built = builder.build({ newUuid: randomUUID })
    if (!built.ok) failOnIssues(built.issues)
    const next = built.ok ? built.metadata : undefined
    if (next === undefined) return viewResult(ctx, record.metadataLocation, base)
    const location = ctx.store.nextMetadataLocation(ns, name, next.location, record.metadataLocation)
    await ctx.store.writeView(location, next)
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
    return viewResult(ctx, location, next)
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
      if (draft.tables.has(toKey)) throw new GateError(ERRORS.ALREADY_EXISTS, `${what}: table already exists`)
      if (draft.views.has(toKey)) throw new GateError(ERRORS.ALREADY_EXISTS, `${what}: view already exists`)
      draft.views.delete(fromKey)
      draft.views.set(toKey, { namespace: to.namespace, name: to.name, metadataLocation: record.metadataLocation })
    })
  })
  return noContent()
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
    const metadata = await ctx.store.readView(metadataLocation)
    await storeNewView(ctx, ns, name, metadata, metadataLocation, false)
    return viewResult(ctx, metadataLocation, metadata)
  })
}
