/**
 * Shared pieces of the spec rules: which flows they apply to, which schemas they look at, and how
 * a field is named in a message. Rules stay small: they judge, these helpers only look things up.
 */
import { indexSchema, indexType, type IndexedField, type SchemaIndex } from '../../../iceberg/schema-index.js'
import { V3_ONLY_TYPES } from '../../../iceberg/promotion.js'
import type { MapType, PartitionSpec, Schema, SortOrder, StructType, TableMetadata } from '../../../iceberg/types.js'
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
  let guard = index.size
  while (p !== undefined && guard-- > 0) {
    const parent = index.byId.get(p)
    if (parent === undefined) return
    yield parent
    p = parent.parentId
  }
}

/**
 * What several rules ask of every field of a schema, gathered in one pass and cached, so that each
 * rule can skip its own walk when there is nothing for it to find (most schemas have no default,
 * no v3-only type and no dotted name).
 */
interface SchemaFacts {
  /** Every struct type: the root first, then in pre-order. */
  readonly structs: readonly StructType[]
  /** Map types, in pre-order. */
  readonly maps: readonly MapType[]
  /** Some field has a non-null initial-default or write-default. */
  readonly defaults: boolean
  /** Some field has a type that needs format version 3 (V3_ONLY_TYPES). */
  readonly v3Types: boolean
  /** Some name contains a dot, so two full names can collide. */
  readonly dottedNames: boolean
}

const factsCache = new WeakMap<Schema, SchemaFacts>()

export function schemaFacts (schema: Schema): SchemaFacts {
  const hit = factsCache.get(schema)
  if (hit !== undefined) return hit
  const structs: StructType[] = [schema.struct]
  const maps: MapType[] = []
  let defaults = false
  let v3Types = false
  let dottedNames = false
  const index = indexSchema(schema)
  for (let pos = 0; pos < index.size; pos++) {
    const t = index.typeAt(pos)
    if (t.kind === 'struct') structs.push(t)
    else if (t.kind === 'map') maps.push(t)
    else if (t.kind !== 'list' && !v3Types && V3_ONLY_TYPES.has(t.kind)) v3Types = true
    const nf = index.fieldAt(pos)
    if (!defaults && nf !== undefined && (!isNullDefault(nf.initialDefault) || !isNullDefault(nf.writeDefault))) defaults = true
    if (!dottedNames && index.nameAt(pos).includes('.')) dottedNames = true
  }
  const facts = { structs, maps, defaults, v3Types, dottedNames }
  factsCache.set(schema, facts)
  return facts
}

const keyCache = new WeakMap<Schema, ReadonlySet<number>>()

/** Ids of map keys and of everything nested inside them (Java refuses any change there). */
function mapKeyIds (schema: Schema): ReadonlySet<number> {
  const hit = keyCache.get(schema)
  if (hit !== undefined) return hit
  const ids = new Set<number>()
  for (const t of schemaFacts(schema).maps) {
    ids.add(t.keyId)
    // A struct (or list, or map) key: its fields are part of the key too.
    if (t.key.kind === 'struct' || t.key.kind === 'list' || t.key.kind === 'map') {
      const key = indexType(t.key)
      for (let pos = 0; pos < key.size; pos++) ids.add(key.idAt(pos))
    }
  }
  keyCache.set(schema, ids)
  return ids
}

/** How many look-ups `mapKeyTest` answers by walking up before it builds the whole id set. */
const KEY_WALKS = 64

/**
 * A test for "this id is a map key or nested inside one" in `schema`, the same answer as
 * `mapKeyIds(schema).has(id)`. A commit usually asks about a handful of changed fields, so each
 * question climbs from the field to the root (a few steps) instead of walking the whole schema;
 * after many questions, or when ids repeat (the climb would see only the first occurrence), it
 * falls back to the full set.
 */
export function mapKeyTest (schema: Schema): (id: number) => boolean {
  const index = indexSchema(schema)
  if (index.duplicateIds.length > 0 || keyCache.has(schema)) {
    const keys = mapKeyIds(schema)
    return id => keys.has(id)
  }
  let asked = 0
  let keys: ReadonlySet<number> | undefined
  return id => {
    if (keys !== undefined) return keys.has(id)
    if (++asked > KEY_WALKS) { keys = mapKeyIds(schema); return keys.has(id) }
    // Ids are unique here (checked above), so parents are found by position, with no lookups.
    let pos = index.positionOf(id)
    let guard = index.size
    while (pos >= 0 && guard-- > 0) {
      const parent = index.parentAt(pos)
      if (parent < 0) return false
      const t = index.typeAt(parent)
      if (t.kind === 'map' && t.keyId === index.idAt(pos) && index.indexAt(pos) === 0 && index.fieldAt(pos) === undefined) return true
      pos = parent
    }
    return false
  }
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
