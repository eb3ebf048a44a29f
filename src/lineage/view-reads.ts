/**
 * What a view version reads, per base table: each SQL representation analysed (`sql-reads.ts`),
 * table names resolved against the version's `default-catalog` and `default-namespace` (spec "View
 * Metadata": "default-namespace … used to resolve unqualified identifiers"), and columns resolved
 * to field ids through each table's current schema, so a later rename is still recognised.
 *
 * A text no dialect parses is kept as unparsed: it is taken to read every column (`star`) of every
 * table it seems to name (`unparsed-tables.ts`).
 */
import type { IcebergType, NestedField, Schema, WireObject } from '../iceberg/types.js'
import type { ReadColumn, TableRead, ViewReads } from '../iceberg/view-reads.js'
import { sqlReads, type RawTableRead } from './sql-reads.js'
import { unparsedTables } from './unparsed-tables.js'

/** A table's current schema, by its resolved identifier (namespace levels then name); undefined when unknown. */
export type SchemaOf = (table: readonly string[]) => Schema | undefined

/** Reads every SQL representation of a view version (`loadSqlParser` must have finished). */
export function viewVersionReads (version: WireObject, schemaOf: SchemaOf): ViewReads {
  const context = nameContext(version)
  const reps = Array.isArray(version.representations) ? version.representations : []
  const dialects: string[] = []
  const raw: RawTableRead[] = []
  let parsed = false
  const unparsed: RawTableRead[] = []
  const columnsOf = (parts: readonly string[]): ReadonlySet<string> | undefined => {
    const schema = schemaOf(resolveTable(parts, context))
    return schema === undefined ? undefined : new Set(schema.struct.fields.map(f => f.name.toLowerCase()))
  }
  for (const rep of reps) {
    if (typeof rep !== 'object' || rep === null) continue
    const { type, sql, dialect } = rep as Record<string, unknown>
    if (typeof type !== 'string' || type.toLowerCase() !== 'sql' || typeof sql !== 'string' || typeof dialect !== 'string') continue
    dialects.push(dialect.toLowerCase())
    const reads = sqlReads(sql, dialect, columnsOf)
    if (reads !== undefined) {
      parsed = true
      raw.push(...reads)
    } else {
      unparsed.push(...unparsedTables(sql).map(table => ({ table, columns: [], star: true })))
    }
  }
  // One representation that parses tells what the view reads; the others are the same view in another dialect.
  const tables = mergeReads(parsed ? raw : unparsed, context, schemaOf)
  return { dialects: [...new Set(dialects)], parsed, tables }
}

interface NameContext {
  readonly catalog?: string
  readonly namespace: readonly string[]
}

function nameContext (version: WireObject): NameContext {
  const ns = version['default-namespace']
  const catalog = version['default-catalog']
  return {
    namespace: Array.isArray(ns) ? ns.filter((l): l is string => typeof l === 'string') : [],
    ...(typeof catalog === 'string' && catalog !== '' && { catalog })
  }
}

/**
 * A table name as the SQL wrote it → its identifier in this catalog. One part is a table of the
 * default namespace; a leading part equal to the default catalog is that catalog. Other names are
 * kept whole: `dependentsMatch` also accepts them with an unknown catalog in front.
 */
export function resolveTable (parts: readonly string[], context: NameContext): string[] {
  if (parts.length === 1) return [...context.namespace, parts[0] as string]
  if (parts.length >= 3 && context.catalog !== undefined && (parts[0] as string).toLowerCase() === context.catalog.toLowerCase()) return parts.slice(1)
  return [...parts]
}

/** Whether a table a view reads (`read`, as resolved) may be `table` (namespace levels then name). */
export function readsTable (read: readonly string[], table: readonly string[]): boolean {
  const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((p, i) => p.toLowerCase() === (b[i] as string).toLowerCase())
  return same(read, table) || (read.length === table.length + 1 && same(read.slice(1), table))
}

function mergeReads (raw: readonly RawTableRead[], context: NameContext, schemaOf: SchemaOf): TableRead[] {
  const byTable = new Map<string, { table: string[], columns: Map<string, ReadColumn>, star: boolean }>()
  for (const r of raw) {
    const table = resolveTable(r.table, context)
    const key = table.map(p => p.toLowerCase()).join('\u0000')
    let e = byTable.get(key)
    if (e === undefined) {
      e = { table, columns: new Map(), star: false }
      byTable.set(key, e)
    }
    e.star ||= r.star
    const schema = schemaOf(table)
    for (const path of r.columns) {
      const column = resolveColumn(path, schema)
      e.columns.set(column.name.toLowerCase(), column)
    }
  }
  return [...byTable.values()].map(e => ({ table: e.table, columns: [...e.columns.values()], star: e.star }))
}

/**
 * A column path → the fields it names in the schema, matched as Spark and Trino match names
 * (case-insensitively). The path stops at the first part the schema does not have: `s.a.b` where
 * `s` has no `a` is a read of `s` (the rest may be a map key or an engine function). Through a
 * list or map the path continues in its element or value struct (Spark's `items.sku`).
 */
export function resolveColumn (path: readonly string[], schema: Schema | undefined): ReadColumn {
  if (schema === undefined) return { name: path.join('.') }
  const names: string[] = []
  const ids: number[] = []
  let fields: readonly NestedField[] | undefined = schema.struct.fields
  for (const part of path) {
    const field: NestedField | undefined = fields?.find(f => f.name.toLowerCase() === part.toLowerCase())
    if (field === undefined) break
    names.push(field.name)
    ids.push(field.id)
    fields = structFields(field.type)
  }
  if (ids.length === 0) return { name: path.join('.') }
  return { name: names.join('.'), fieldId: ids.at(-1) as number, pathIds: ids }
}

function structFields (type: IcebergType): readonly NestedField[] | undefined {
  switch (type.kind) {
    case 'struct': return type.fields
    case 'list': return structFields(type.element)
    case 'map': return structFields(type.value)
    default: return undefined
  }
}
