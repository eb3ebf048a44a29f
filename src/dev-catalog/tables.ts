import { randomUUID } from 'node:crypto'
import { ERRORS, GateError } from '../errors.js'
import { isObject } from '../iceberg/json-values.js'
import { newTableMetadata } from '../iceberg/new-table.js'
import { namespaceSegment, tableName } from '../iceberg/rest-path.js'
import { tableMetadataChunks } from '../iceberg/table-metadata.js'
import {
  assertNameFree, badRequest, type CatalogContext, type CatalogRequest, failOnIssues, json, noContent, type Reply,
  requireNamespace, requireTable, stringMap
} from './context.js'
import { etagFor, loadResult, matchesEtag, objectChunks, type SnapshotMode } from './load-result.js'
import { paginate } from './paging.js'
import { type CatalogState, checkName, checkNamespace, tableKey } from './store.js'

/** Table routes other than commits: list, create (and stage-create), load, exists, drop, rename, register. */

export function listTables (ctx: CatalogContext, req: CatalogRequest): Reply {
  const state = ctx.store.state
  requireNamespace(state, req.namespace)
  const key = namespaceSegment(req.namespace)
  const names = [...state.tables.values()].filter(t => namespaceSegment(t.namespace) === key).map(t => t.name)
  const { page, next } = paginate(names, name => name, req.query)
  return json({ identifiers: page.map(name => ({ namespace: req.namespace, name })), 'next-page-token': next ?? null })
}

function assertCanCreate (state: CatalogState, ns: readonly string[], name: string): void {
  requireNamespace(state, ns)
  assertNameFree(state, ns, name, 'table')
}

/** createTable: the new table's metadata is the model's (`newTableMetadata`, as Java's `newTableMetadata`). */
/**
 * A staged table carries `created-at` (ISO-8601, UTC) unless the request sets it, as the reference
 * server's staged create writes it (CatalogHandlers.stageTableCreate); the client's later commit
 * with assert-create then creates the table with it.
 */
function stageProperties (staged: boolean, properties: Record<string, string>): Record<string, string> {
  return staged ? { 'created-at': new Date().toISOString(), ...properties } : properties
}

export async function createTable (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid create table request: body must be an object')
  const ns = req.namespace
  const name = checkName('table', body.name)
  if (body.schema === undefined || body.schema === null) throw badRequest('Invalid create table request: schema is required')
  if (body.location !== undefined && body.location !== null && (typeof body.location !== 'string' || body.location === '')) {
    throw badRequest('Invalid create table request: location must be a non-empty string')
  }
  const { metadata, issues } = newTableMetadata({
    schema: body.schema,
    partitionSpec: body['partition-spec'],
    writeOrder: body['write-order'],
    location: typeof body.location === 'string' ? body.location.replace(/\/+$/, '') : ctx.store.defaultTableLocation(ns, name),
    properties: stageProperties(body['stage-create'] === true, stringMap(body.properties, 'table properties'))
  }, { uuid: randomUUID(), now: Date.now() })
  failOnIssues(issues)
  if (metadata === undefined) throw badRequest('Invalid create table request')

  if (body['stage-create'] === true) {
    // Nothing is stored: the table appears with the client's later commit carrying assert-create.
    assertCanCreate(ctx.store.state, ns, name)
    const chunks = objectChunks([['metadata-location', 'null'], ['metadata', tableMetadataChunks(metadata)], ['config', '{}']])
    return { status: 200, chunks }
  }
  const key = tableKey(ns, name)
  return await ctx.locks.run([key], async () => {
    assertCanCreate(ctx.store.state, ns, name)
    const metadataLocation = ctx.store.nextMetadataLocation(ns, name, metadata.location)
    await ctx.store.writeTable(metadataLocation, metadata)
    try {
      await ctx.store.update(draft => {
        assertCanCreate(draft, ns, name)
        draft.tables.set(key, { namespace: ns, name, metadataLocation })
      })
    } catch (err) {
      await ctx.store.forget(metadataLocation)
      throw err
    }
    return loadResult(ctx.store, metadataLocation, metadata)
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
  const metadata = await ctx.store.readTable(record.metadataLocation)
  return loadResult(ctx.store, record.metadataLocation, metadata, mode)
}

export function tableExists (ctx: CatalogContext, req: CatalogRequest): Reply {
  requireTable(ctx.store.state, req.namespace, req.table)
  return noContent()
}

export async function dropTable (ctx: CatalogContext, req: CatalogRequest, purge = req.query.get('purgeRequested') === 'true'): Promise<Reply> {
  const { namespace: ns, table: name } = req
  await ctx.locks.run([tableKey(ns, name)], async () => {
    const record = requireTable(ctx.store.state, ns, name)
    const metadata = purge ? await ctx.store.readTable(record.metadataLocation).catch(() => undefined) : undefined
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
      const what = `Cannot rename ${tableName(from.namespace, from.name)} to ${tableName(to.namespace, to.name)}`
      if (draft.tables.has(toKey)) throw new GateError(ERRORS.ALREADY_EXISTS, `${what}: table already exists`)
      if (draft.views.has(toKey)) throw new GateError(ERRORS.ALREADY_EXISTS, `${what}: view already exists`)
      draft.tables.delete(fromKey)
      // Files stay where they are, as in Java; the next commit writes beside the table's location.
      draft.tables.set(toKey, { namespace: to.namespace, name: to.name, metadataLocation: record.metadataLocation })
    })
  })
  return noContent()
}

/** A register request's metadata-location; a relative path names a file in the warehouse. */
export function resolveMetadataLocation (ctx: CatalogContext, raw: string): string {
  return ctx.store.localPath(raw) === undefined && !/^[a-z][a-z0-9+.-]*:/i.test(raw)
    ? `${ctx.store.rootUri}/${raw.replace(/^\.\//, '')}`
    : raw
}

/** registerTable: points an identifier at an existing metadata file (old v1 files are read as their legacy members say). */
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
    const metadata = await ctx.store.readTable(metadataLocation)
    await ctx.store.update(draft => {
      requireNamespace(draft, ns)
      // overwrite replaces a table's pointer, never a view.
      if (draft.views.has(key)) throw new GateError(ERRORS.ALREADY_EXISTS, `View with same name already exists: ${tableName(ns, name)}`)
      if (draft.tables.has(key) && body.overwrite !== true) throw new GateError(ERRORS.ALREADY_EXISTS, `Table already exists: ${tableName(ns, name)}`)
      draft.tables.set(key, { namespace: ns, name, metadataLocation })
    })
    return loadResult(ctx.store, metadataLocation, metadata)
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
