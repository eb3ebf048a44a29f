import { alreadyExists, badRequest, noSuchTable } from './errors.js'
import { type CatalogContext, type CatalogRequest, noContent, type Reply, requireNamespace } from './context.js'
import { isObject, type JsonObject } from './json.js'
import { etagFor } from './load-result.js'
import { MetadataBuilder } from './metadata-builder.js'
import { checkName, checkNamespace, tableKey, tableName } from './paths.js'
import { checkRequirements, parseRequirements, type Requirement } from './requirements.js'
import type { CatalogState, TableRecord } from './store.js'
import { parseUpdates, type Update } from './table-updates.js'

/**
 * updateTable and transactions/commit (spec CommitTableRequest, CommitTransactionRequest).
 * One path for both: take the tables' locks (sorted, so two transactions cannot deadlock),
 * check requirements against the current metadata, apply the updates to copies, write the new
 * metadata files, then switch every table's pointer in one atomic state write. Any failure
 * leaves every table as it was.
 */

interface TableChange {
  readonly namespace: string[]
  readonly name: string
  readonly key: string
  readonly requirements: Requirement[]
  readonly updates: Update[]
}

interface Working {
  readonly change: TableChange
  readonly record: TableRecord | undefined
  metadata: JsonObject | undefined
  changed: boolean
}

function parseChange (raw: unknown, namespace: string[], name: string): TableChange {
  if (!isObject(raw)) throw badRequest('Invalid commit: body must be an object')
  // Parse everything before checking anything, as the Java server does: malformed is 400 first.
  const requirements = parseRequirements(raw.requirements)
  const updates = parseUpdates(raw.updates)
  return { namespace, name, key: tableKey(namespace, name), requirements, updates }
}

export async function commitTable (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const change = parseChange(req.body(), req.namespace, req.table)
  const [result] = await commitChanges(ctx, [change])
  const { location, metadata } = result as { location: string, metadata: JsonObject }
  return { status: 200, body: { 'metadata-location': location, metadata }, headers: { etag: etagFor(location, 'all') } }
}

export async function commitTransaction (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body) || !Array.isArray(body['table-changes']) || body['table-changes'].length === 0) {
    throw badRequest('Invalid table changes: table-changes must be a non-empty array')
  }
  const changes = body['table-changes'].map(raw => {
    const id = isObject(raw) ? raw.identifier : undefined
    if (!isObject(id)) throw badRequest('Invalid table changes: table identifier is required')
    return parseChange(raw, checkNamespace(id.namespace), checkName('table', id.name))
  })
  await commitChanges(ctx, changes)
  return noContent()
}

/** A create (assert-create) may not take a view's identifier (Java: "View with same name already exists"). */
function assertNoView (state: CatalogState, namespace: readonly string[], name: string): void {
  if (state.views.has(tableKey(namespace, name))) throw alreadyExists(`View with same name already exists: ${tableName(namespace, name)}`)
}

function formatVersionOf (updates: readonly Update[]): number {
  const upgrade = updates.find(u => u.action === 'upgrade-format-version')
  return upgrade === undefined ? 2 : upgrade['format-version'] as number
}

async function commitChanges (ctx: CatalogContext, changes: readonly TableChange[]): Promise<Array<{ location: string, metadata: JsonObject }>> {
  const { store } = ctx
  return await ctx.locks.run(changes.map(c => c.key), async () => {
    const working = new Map<string, Working>()
    const state = store.state
    for (const change of changes) {
      let w = working.get(change.key)
      if (w === undefined) {
        const record = state.tables.get(change.key)
        const metadata = record === undefined ? undefined : await store.readMetadata(record.metadataLocation)
        w = { change, record, metadata, changed: false }
        working.set(change.key, w)
      }
      const isCreate = change.requirements.some(r => r.type === 'assert-create')
      let builder: MetadataBuilder
      if (w.metadata === undefined) {
        if (!isCreate) throw noSuchTable(`Table does not exist: ${tableName(change.namespace, change.name)}`)
        if (change.requirements.length !== 1) throw badRequest('Invalid create requirements: assert-create must be the only requirement')
        requireNamespace(state, change.namespace)
        assertNoView(state, change.namespace, change.name)
        builder = MetadataBuilder.fromEmpty(formatVersionOf(change.updates))
      } else {
        checkRequirements(change.requirements, w.metadata)
        builder = MetadataBuilder.from(w.metadata)
      }
      for (const update of change.updates) builder.apply(update)
      if (typeof builder.m.location !== 'string') builder.m.location = store.defaultTableLocation(change.namespace, change.name)
      // The previous file enters metadata-log once, even when a transaction changes a table twice.
      const previous = w.record !== undefined && !w.changed
        ? { location: w.record.metadataLocation, lastUpdatedMs: (w.metadata as JsonObject)['last-updated-ms'] }
        : undefined
      const next = builder.build(previous)
      if (next !== undefined) {
        w.metadata = next
        w.changed = true
      }
    }

    const locations = new Map<string, string>()
    try {
      for (const [key, w] of working) {
        if (!w.changed) continue
        const { namespace, name } = w.change
        const location = store.nextMetadataLocation(namespace, name, w.metadata as JsonObject, w.record?.metadataLocation)
        await store.writeMetadata(location, w.metadata as JsonObject)
        locations.set(key, location)
      }
      if (locations.size > 0) {
        await store.update(draft => {
          for (const [key, location] of locations) {
            const w = working.get(key) as Working
            const { namespace, name } = w.change
            // The table locks guarantee this; checked anyway so a bug can never lose an update.
            if (draft.tables.get(key)?.metadataLocation !== w.record?.metadataLocation) {
              throw new Error(`concurrent change of ${tableName(namespace, name)} while locked`)
            }
            if (w.record === undefined) {
              requireNamespace(draft, namespace)
              assertNoView(draft, namespace, name)
            }
            draft.tables.set(key, { namespace, name, metadataLocation: location })
          }
        })
      }
    } catch (err) {
      for (const location of locations.values()) await store.forget(location)
      throw err
    }
    return changes.map(c => {
      const w = working.get(c.key) as Working
      return { location: locations.get(c.key) ?? (w.record as TableRecord).metadataLocation, metadata: w.metadata as JsonObject }
    })
  })
}
