/**
 * Gathers what the table page shows: the metadata read from the upstream as the viewer (relayed
 * refusals become a sentence on the page), the schema history, the effective policy, the contract
 * check and the overrides in force.
 */
import { checkContract } from '../../src/policy/contract.js'
import { contractReport } from '../../src/schemas/contract-report.js'
import { effectivePolicyToWire } from '../../src/schemas/effective-policy.js'
import { buildSchemaHistory, SCHEMA_PAGE_MAX, schemaPageStart, schemaPageToken, type SchemaHistory } from '../../src/schemas/schema-history.js'
import { FIRST_SCHEMA_PAGE, tableBody, type SchemaPages, type Shown, type TableView } from '../../src/console/table-page.js'
import type { Html } from '../../src/console/html.js'
import type { OverrideInForce, OverrideSource } from '../../src/console/override-source.js'
import { GateError } from '../../src/errors.js'
import type { TableMetadata } from '../../src/iceberg/types.js'
import { tableName } from '../../src/iceberg/rest-path.js'
import { namespaceFromPath, RelayedAnswer, type AdminPolicy, type TableReader, type ViewIndexReader } from '../admin/admin-context.js'

interface Sources {
  readonly tables: TableReader
  readonly policy: AdminPolicy
  readonly overrides?: OverrideSource | undefined
  readonly views?: ViewIndexReader | undefined
}

type Result = { readonly ok: true, readonly table: TableView['table'], readonly body: Html } | { readonly ok: false, readonly problem: string }

/**
 * Which schemas the timeline shows: `from`, a page token of the history (absent: the newest
 * page, the most useful one for a long history), and `count` schemas from there.
 */
interface SchemaWindow {
  readonly from?: string | undefined
  readonly count?: number | undefined
}

/** `prefix`: the catalog's `{prefix}` path segment, when the upstream uses one (as `?prefix=` in the admin API). */
export async function tableView (sources: Sources, namespaceSegment: string, name: string, prefix: string | undefined, authorization: string | undefined, window: SchemaWindow = {}): Promise<Result> {
  let namespace: string[]
  try {
    namespace = namespaceFromPath(namespaceSegment)
  } catch (err) {
    return { ok: false, problem: (err as Error).message }
  }
  const table = { namespace, name }
  const label = tableName(table)
  const metadata = await readMetadata(sources.tables, { ...table, prefix }, authorization)
  const resolved = sources.policy.resolve(table)
  let history: Shown<SchemaHistory>
  let pages: SchemaPages = {}
  if (!metadata.ok) history = metadata
  else {
    const shown = historyWindow(table, metadata.value, window)
    if (shown === undefined) return { ok: false, problem: `Cannot show the schemas of ${label}: "${window.from ?? ''}" is not a page token of this table's schemas` }
    history = { ok: true, value: shown.history }
    pages = shown.pages
  }
  let contract: TableView['contract']
  if (resolved.contract !== undefined) {
    if (!metadata.ok) contract = { ok: false, problem: `Cannot check the contract: ${metadata.problem}` }
    else {
      const m = metadata.value
      const current = m.schemas.find(s => s.schemaId === m.currentSchemaId)
      contract = current === undefined
        ? { ok: false, problem: `Cannot check the contract of ${label}: its metadata has no current schema ${m.currentSchemaId}` }
        : { ok: true, value: contractReport(table, resolved.contract, m.currentSchemaId, checkContract(resolved.contract, current, m.formatVersion)) }
    }
  }
  let overrides: Shown<readonly OverrideInForce[]>
  if (sources.overrides === undefined) overrides = { ok: false, problem: 'Override records are not available on this server.' }
  else {
    try {
      overrides = { ok: true, value: await sources.overrides.inForce(table, new Date()) }
    } catch (err) {
      overrides = { ok: false, problem: `Cannot list the overrides: ${(err as Error).message}` }
    }
  }
  // Readers are shown only to a viewer the catalog lets read the table, as the admin API's dependents.
  const dependents: TableView['dependents'] = sources.views === undefined
    ? { ok: false, problem: 'The view index is not available on this server.' }
    : !metadata.ok ? metadata : { ok: true, value: { views: sources.views.dependentsOf({ ...table, ...(prefix !== undefined && { prefix }) }), complete: sources.views.status().complete } }
  const view: TableView = { table, ...(prefix !== undefined && { prefix }), history, pages, policy: effectivePolicyToWire(resolved.explain()), contract, overrides, dependents }
  return { ok: true, table, body: tableBody(view) }
}

/**
 * One page of the history through its page tokens (the admin API's paging, unchanged): the newest
 * `count` schemas unless `from` names another page, and the window just before it as the older page.
 */
function historyWindow (table: { namespace: string[], name: string }, metadata: TableMetadata, window: SchemaWindow): { history: SchemaHistory, pages: SchemaPages } | undefined {
  const schemas = metadata.schemas
  const count = Math.min(Math.max(1, window.count ?? SCHEMA_PAGE_MAX), SCHEMA_PAGE_MAX)
  const start = window.from === undefined
    ? Math.max(0, schemas.length - count)
    : schemaPageStart(schemas, window.from === FIRST_SCHEMA_PAGE ? '' : window.from)
  if (start === undefined) return undefined
  const history = buildSchemaHistory(table, metadata, { pageToken: schemaPageToken(schemas, start), pageSize: count })
  if (history === undefined) return undefined
  const olderStart = Math.max(0, start - count)
  return {
    history,
    pages: {
      ...(start > 0 && { older: { from: schemaPageToken(schemas, olderStart), count: start - olderStart } }),
      ...(start + count < schemas.length && { newest: { count } })
    }
  }
}

async function readMetadata (tables: TableReader, table: { namespace: string[], name: string, prefix: string | undefined }, authorization: string | undefined): Promise<Shown<TableMetadata>> {
  try {
    return { ok: true, value: await tables.metadata(table, authorization === undefined ? {} : { authorization }) }
  } catch (err) {
    if (err instanceof RelayedAnswer) {
      let message = `the catalog answered ${err.statusCode}`
      try {
        const parsed = JSON.parse(err.body.toString('utf8')) as { error?: { message?: unknown } }
        if (typeof parsed.error?.message === 'string') message += `: ${parsed.error.message}`
      } catch {}
      return { ok: false, problem: `Cannot read table ${tableName(table)}: ${message}` }
    }
    if (err instanceof GateError) return { ok: false, problem: err.message }
    throw err
  }
}
