/**
 * Shared pieces of the spec rules: which flows they apply to, which schemas they look at, and how
 * a field is named in a message. Rules stay small: they judge, these helpers only look things up.
 */
import { indexSchema, type IndexedField, type SchemaIndex } from '../../iceberg/schema-index.js'
import type { PartitionSpec, Schema, SortOrder, TableMetadata } from '../../iceberg/types.js'
import type { CommitFlow, RuleContext } from '../rule.js'

/** Evolution of an existing table: old data must stay readable under the new schema. */
export const EVOLUTION_FLOWS: readonly CommitFlow[] = ['update', 'revert']
/** Every table flow: checks of the resulting metadata on its own. */
export const TABLE_FLOWS: readonly CommitFlow[] = ['update', 'revert', 'create', 'staged-create', 'replace']
/** Table flows plus views: purely structural checks. */
export const ALL_FLOWS: readonly CommitFlow[] = [...TABLE_FLOWS, 'view']
/** Flows with an existing table whose ids must stay meaningful (a replace keeps ids by name). */
export const EXISTING_TABLE_FLOWS: readonly CommitFlow[] = ['update', 'revert', 'replace']

/** `price (id 3)`: how every message names a field. */
export function subject (path: string, id: number): string {
  return `${path} (id ${id})`
}

/** The schema made current plus every other schema the commit adds (structural checks cover all). */
export function checkedSchemas (ctx: RuleContext): Schema[] {
  const out = [ctx.proposedSchema]
  for (const s of ctx.addedSchemas) {
    if (s !== ctx.proposedSchema && (s.schemaId === undefined || s.schemaId !== ctx.proposedSchema.schemaId)) out.push(s)
  }
  return out
}

/** `schema 2` / `the new schema`, for messages about a schema that is not current. */
export function schemaLabel (s: Schema, ctx: RuleContext): string {
  return s === ctx.proposedSchema || s.schemaId === ctx.proposedSchema.schemaId ? '' : ` in added schema ${s.schemaId ?? '?'}`
}

/** Walks up from a field: parent, grandparent, ... (bounded by the index, so it always ends). */
export function * ancestors (index: SchemaIndex, f: IndexedField): Generator<IndexedField> {
  let p = f.parentId
  let guard = index.fields.length
  while (p !== undefined && guard-- > 0) {
    const parent = index.byId.get(p)
    if (parent === undefined) return
    yield parent
    p = parent.parentId
  }
}

const keyCache = new WeakMap<SchemaIndex, ReadonlySet<number>>()

/** Ids of map keys and of everything nested inside them (Java refuses any change there). */
export function mapKeyIds (index: SchemaIndex): ReadonlySet<number> {
  const hit = keyCache.get(index)
  if (hit !== undefined) return hit
  const ids = new Set<number>()
  for (const f of index.fields) {
    if (f.parentId === undefined) continue
    if (ids.has(f.parentId) || (f.field === undefined && f.name === 'key' && index.byId.get(f.parentId)?.type.kind === 'map')) ids.add(f.id)
  }
  keyCache.set(index, ids)
  return ids
}

export function defaultSpec (m: TableMetadata): PartitionSpec | undefined {
  return m.partitionSpecs.find(s => s.specId === m.defaultSpecId)
}

export function defaultSortOrder (m: TableMetadata): SortOrder | undefined {
  return m.sortOrders.find(o => o.orderId === m.defaultSortOrderId)
}

/** Transform name without parameters, lower-case: `bucket[16]` → `bucket`. */
export function transformName (t: string): string {
  return t.trim().toLowerCase().replace(/\[.*$/, '')
}

/** Where a field id lived in the base: current schema first, then older schemas. */
export function basePath (ctx: RuleContext, id: number): string | undefined {
  if (ctx.baseSchema !== undefined) {
    const f = indexSchema(ctx.baseSchema).byId.get(id)
    if (f !== undefined) return f.path
  }
  for (const s of ctx.base?.schemas ?? []) {
    const f = indexSchema(s).byId.get(id)
    if (f !== undefined) return f.path
  }
  return undefined
}

/** A null or absent default (the spec treats them alike). */
export function isNullDefault (v: unknown): boolean {
  return v === undefined || v === null
}
