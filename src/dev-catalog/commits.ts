import { randomUUID } from 'node:crypto'
import { ERRORS, GateError } from '../errors.js'
import { isObject } from '../iceberg/json-values.js'
import { initialFormatVersion, TableMetadataBuilder } from '../iceberg/metadata-builder.js'
import { checkRequirements, requirementIssues } from '../iceberg/requirements.js'
import { tableName } from '../iceberg/rest-path.js'
import { updateIssues } from '../iceberg/table-update.js'
import type { WholeTableMetadata } from '../iceberg/types.js'
import { badRequest, type CatalogContext, type CatalogRequest, failOnIssues, noContent, type Reply, requireNamespace } from './context.js'
import { etagFor, metadataFile, objectChunks } from './load-result.js'
import { type CatalogState, checkName, checkNamespace, type TableRecord, tableKey } from './store.js'

/**
 * updateTable and transactions/commit (spec CommitTableRequest, CommitTransactionRequest), as the
 * reference server's `CatalogHandlers` runs them: the request is read whole first (a malformed one
 * is a 400 whatever else is wrong), then under the tables' locks (sorted, so two transactions cannot
 * deadlock) each change's requirements are checked against the current metadata (409 on a stale
 * base) and its updates applied by the one metadata builder (`src/iceberg`), the same the gate
 * judges with. New metadata files are written, then every table's pointer switches in one atomic
 * state write. Any failure leaves every table as it was.
 */

interface TableChange {
  readonly namespace: string[]
  readonly name: string
  readonly key: string
  readonly requirements: unknown[]
  readonly updates: unknown[]
}

interface Working {
  readonly change: TableChange
  readonly record: TableRecord | undefined
  metadata: WholeTableMetadata | undefined
  changed: boolean
}

function readChange (raw: unknown, namespace: string[], name: string): TableChange {
  if (!isObject(raw)) throw badRequest('Invalid commit: body must be an object')
  // The reference server reads a null list as none (UpdateTableRequestParser: hasNonNull).
  failOnIssues(requirementIssues(raw.requirements ?? undefined, 'table'))
  failOnIssues(updateIssues(raw.updates, 'table'))
  const requirements = Array.isArray(raw.requirements) ? raw.requirements : []
  if (requirements.some(r => isObject(r) && String(r.type).toLowerCase() === 'assert-create') && requirements.length !== 1) {
    throw badRequest('Invalid create requirements: assert-create must be the only requirement')
  }
  return { namespace, name, key: tableKey(namespace, name), requirements, updates: Array.isArray(raw.updates) ? raw.updates : [] }
}

export async function commitTable (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const change = readChange(req.body(), req.namespace, req.table)
  const [result] = await commitChanges(ctx, [change])
  const { location, metadata } = result as { location: string, metadata: WholeTableMetadata }
  const chunks = objectChunks([['metadata-location', JSON.stringify(location)], ['metadata', metadataFile(ctx.store, location, metadata, 'all')]])
  return { status: 200, chunks, headers: { etag: etagFor(location, 'all') } }
}

export async function commitTransaction (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body) || !Array.isArray(body['table-changes']) || body['table-changes'].length === 0) {
    throw badRequest('Invalid table changes: table-changes must be a non-empty array')
  }
  const changes = body['table-changes'].map(raw => {
    const id = isObject(raw) ? raw.identifier : undefined
    if (!isObject(id)) throw badRequest('Invalid table changes: table identifier is required')
    return readChange(raw, checkNamespace(id.namespace), checkName('table', id.name))
  })
  await commitChanges(ctx, changes)
  return noContent()
}

/** A create (assert-create) may not take a view's identifier (Java: "View with same name already exists"). */
function assertNoView (state: CatalogState, namespace: readonly string[], name: string): void {
  if (state.views.has(tableKey(namespace, name))) throw new GateError(ERRORS.ALREADY_EXISTS, `View with same name already exists: ${tableName(namespace, name)}`)
}

/** Applies one change to the table's current metadata: the new metadata, or undefined when nothing changed. */
function applyChange (ctx: CatalogContext, w: Working): WholeTableMetadata | undefined {
  const { change } = w
  let builder: TableMetadataBuilder
  if (w.metadata === undefined) {
    if (!change.requirements.some(r => isObject(r) && String(r.type).toLowerCase() === 'assert-create')) {
      throw new GateError(ERRORS.NO_SUCH_TABLE, `Table does not exist: ${tableName(change.namespace, change.name)}`)
    }
    requireNamespace(ctx.store.state, change.namespace)
    assertNoView(ctx.store.state, change.namespace, change.name)
    builder = TableMetadataBuilder.fromEmpty(initialFormatVersion(change.updates), { data: true })
  } else {
    const conflict = checkRequirements(w.metadata, change.requirements)[0]
    if (conflict !== undefined) throw new GateError(ERRORS.COMMIT_CONFLICT, conflict.message)
    builder = TableMetadataBuilder.from(w.metadata)
  }
  builder.applyAll(change.updates)
  // A table created by a commit without set-location lives in its default folder.
  if (w.metadata === undefined && !change.updates.some(u => isObject(u) && String(u.action).toLowerCase() === 'set-location')) {
    builder.setLocation(ctx.store.defaultTableLocation(change.namespace, change.name))
  }
  // The previous file enters metadata-log once, even when a transaction changes a table twice.
  const previousFile = w.record !== undefined && !w.changed ? w.record.metadataLocation : undefined
  const built = builder.build({ newUuid: randomUUID, ...(previousFile === undefined ? {} : { previousFile }) })
  if (!built.ok) failOnIssues(built.issues)
  return built.ok ? built.metadata : undefined
}

async function commitChanges (ctx: CatalogContext, changes: readonly TableChange[]): Promise<Array<{ location: string, metadata: WholeTableMetadata }>> {
  const { store } = ctx
  return await ctx.locks.run(changes.map(c => c.key), async () => {
    const working = new Map<string, Working>()
    const state = store.state
    for (const change of changes) {
      let w = working.get(change.key)
      if (w === undefined) {
        const record = state.tables.get(change.key)
        const metadata = record === undefined ? undefined : await store.readTable(record.metadataLocation)
        w = { change, record, metadata, changed: false }
        working.set(change.key, w)
      }
      const next = applyChange(ctx, { ...w, change })
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
        const metadata = w.metadata as WholeTableMetadata
        const location = store.nextMetadataLocation(namespace, name, metadata.location, w.record?.metadataLocation)
        await store.writeTable(location, metadata)
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
      return { location: locations.get(c.key) ?? (w.record as TableRecord).metadataLocation, metadata: w.metadata as WholeTableMetadata }
    })
  })
}
