/**
 * What a view version reads, with the schemas of the tables it names loaded through `loadSchema`
 * (the gate loads them with the caller's credentials, the crawl with the catalog credential):
 * one pass finds the tables, a second resolves their columns to field ids.
 */
import type { Schema, WireObject } from '../iceberg/types.js'
import type { MissingRead, ViewReads } from '../iceberg/view-reads.js'
import { loadSqlParser } from './sql-reads.js'
import { viewVersionReads } from './view-reads.js'

/** A table's current schema by identifier (namespace levels then name); undefined when it is not there or cannot be read. */
export type LoadSchema = (table: readonly string[]) => Promise<Schema | undefined>

export interface ViewReading {
  readonly reads: ViewReads
  /** Columns the version reads that a table it names (and whose schema was read) does not have. */
  readonly missing: MissingRead[]
}

export async function readView (version: WireObject, loadSchema: LoadSchema): Promise<ViewReading> {
  await loadSqlParser()
  const first = viewVersionReads(version, () => undefined)
  const schemas = new Map<string, Schema>()
  await Promise.all(first.tables.map(async (tr) => {
    // A leading part that is not the default catalog may still be a catalog name (`spark_catalog.db.t`).
    let schema = await loadSchema(tr.table).catch(() => undefined)
    if (schema === undefined && tr.table.length >= 3) schema = await loadSchema(tr.table.slice(1)).catch(() => undefined)
    if (schema !== undefined) schemas.set(key(tr.table), schema)
  }))
  const reads = viewVersionReads(version, table => schemas.get(key(table)))
  const missing: MissingRead[] = []
  if (reads.parsed) {
    for (const tr of reads.tables) {
      if (!schemas.has(key(tr.table))) continue
      const columns = tr.columns.filter(c => c.fieldId === undefined).map(c => c.name)
      if (columns.length > 0) missing.push({ table: tr.table.join('.'), columns })
    }
  }
  return { reads, missing }
}

function key (table: readonly string[]): string {
  return table.map(p => p.toLowerCase()).join('\u0000')
}
