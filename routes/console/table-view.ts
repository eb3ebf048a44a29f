/**
 * Gathers what the table page shows: the metadata read from the upstream as the viewer (relayed
 * refusals become a sentence on the page), the schema history, the effective policy, the contract
 * check and the overrides in force.
 */
import { checkContract } from '../../src/policy/contract.js'
import { contractReport } from '../../src/schemas/contract-report.js'
import { effectivePolicyToWire } from '../../src/schemas/effective-policy.js'
import { buildSchemaHistory, SCHEMA_PAGE_MAX, type SchemaHistory } from '../../src/schemas/schema-history.js'
import { tableBody, type Shown, type TableView } from '../../src/console/table-page.js'
import type { Html } from '../../src/console/html.js'
import type { OverrideInForce, OverrideSource } from '../../src/console/override-source.js'
import { GateError } from '../../src/errors.js'
import type { TableMetadata } from '../../src/iceberg/types.js'
import { tableName } from '../../src/iceberg/rest-path.js'
import { namespaceFromPath, RelayedAnswer, type AdminPolicy, type TableReader } from '../admin/admin-context.js'

interface Sources {
  readonly tables: TableReader
  readonly policy: AdminPolicy
  readonly overrides?: OverrideSource | undefined
}

type Result = { readonly ok: true, readonly table: TableView['table'], readonly body: Html } | { readonly ok: false, readonly problem: string }

/** `prefix`: the catalog's `{prefix}` path segment, when the upstream uses one (as `?prefix=` in the admin API). */
export async function tableView (sources: Sources, namespaceSegment: string, name: string, prefix: string | undefined, authorization: string | undefined): Promise<Result> {
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
  // The first page from the oldest schema (no page token, so never undefined), at the largest page size.
  const history: Shown<SchemaHistory> = metadata.ok ? { ok: true, value: buildSchemaHistory(table, metadata.value, { pageSize: SCHEMA_PAGE_MAX }) as SchemaHistory } : metadata
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
      overrides = { ok: true, value: await sources.overrides.inForce(label, new Date()) }
    } catch (err) {
      overrides = { ok: false, problem: `Cannot list the overrides: ${(err as Error).message}` }
    }
  }
  const view: TableView = { table, history, policy: effectivePolicyToWire(resolved.explain()), contract, overrides }
  return { ok: true, table, body: tableBody(view) }
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
