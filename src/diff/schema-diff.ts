/**
 * Diff of two schemas, paired by field id and never by name (spec "Schema Evolution": the id is
 * the identity, the name a label). Linear in the number of fields, apart from the n log n pass
 * that finds reordered siblings in the structs where a position changed.
 */
import { jsonEquals } from '../iceberg/json-values.js'
import { indexSchema, type IndexedField, type SchemaIndex } from '../iceberg/schema-index.js'
import { samePrimitive } from '../iceberg/type-equality.js'
import type { IcebergType, NestedField, PrimitiveType, Schema } from '../iceberg/types.js'
import type { Change } from './schema-change.js'

export type TypeKind = 'primitive' | 'struct' | 'list' | 'map'

/** primitive, struct, list or map: the kinds a field id may never leave. */
export function kindOf (t: IcebergType): TypeKind {
  return t.kind === 'struct' || t.kind === 'list' || t.kind === 'map' ? t.kind : 'primitive'
}

/** The field as a NestedField; list elements and map keys/values get one named after their role. */
export function asNestedField (f: IndexedField): NestedField {
  return f.field ?? { id: f.id, name: f.name, required: f.required, type: f.type }
}

const same = (a: unknown, b: unknown): boolean => jsonEquals(a ?? null, b ?? null)

/** Every change from `from` to `to`, field id by field id. `diffSchemas(s, s)` is empty. */
export function diffSchemas (from: Schema, to: Schema): Change[] {
  const a = indexSchema(from)
  const b = indexSchema(to)
  const changes: Change[] = []
  // Parents with a kept child at a new position: only their order needs the n log n look.
  let shifted: Set<number | undefined> | undefined
  let paired = 0

  // Indexed loops over the fields: they run once per field, often in code not yet optimised.
  const now = b.fields
  for (let i = 0; i < now.length; i++) {
    const f = now[i] as IndexedField
    if (b.byId.get(f.id) !== f) continue // a duplicate id: reported by FIELD_ID_UNIQUE, not diffable
    const old = a.byId.get(f.id)
    if (old === undefined) {
      // Only the top-most new field: its nested fields travel inside it.
      if (f.parentId === undefined || a.byId.has(f.parentId)) {
        changes.push({ kind: 'field-added', fieldId: f.id, path: f.path, ...(f.parentId === undefined ? {} : { parentId: f.parentId }), field: asNestedField(f) })
      }
      continue
    }
    paired++
    if (old.index !== f.index && old.parentId === f.parentId) (shifted ??= new Set()).add(f.parentId)
    compareField(old, f, changes)
  }

  if (shifted !== undefined) {
    if (shifted.has(undefined)) reorders(to.struct.fields, undefined, a, b, changes)
    for (const f of now) if (f.type.kind === 'struct' && shifted.has(f.id) && b.byId.get(f.id) === f) reorders(f.type.fields, f.id, a, b, changes)
  }

  // When every id of `from` was found again in `to`, nothing was dropped.
  if (paired < a.byId.size) {
    const was = a.fields
    for (let i = 0; i < was.length; i++) {
      const f = was[i] as IndexedField
      if (b.byId.has(f.id) || a.byId.get(f.id) !== f) continue
      if (f.parentId === undefined || b.byId.has(f.parentId)) {
        changes.push({ kind: 'field-dropped', fieldId: f.id, path: f.path, ...(f.parentId === undefined ? {} : { parentId: f.parentId }), field: asNestedField(f) })
      }
    }
  }

  const before = new Set(from.identifierFieldIds)
  const after = new Set(to.identifierFieldIds)
  const added = [...after].filter(id => !before.has(id))
  const removed = [...before].filter(id => !after.has(id))
  if (added.length > 0 || removed.length > 0) changes.push({ kind: 'identifier-fields-changed', added, removed })
  return changes
}

function compareField (old: IndexedField, f: IndexedField, out: Change[]): void {
  // Unchanged fields (the vast majority) cost a few comparisons and no allocation.
  const moved = old.parentId !== f.parentId
  const renamed = old.name !== f.name
  const ka = kindOf(old.type)
  const kb = kindOf(f.type)
  const retyped = ka === kb && ka === 'primitive' && old.type !== f.type && !samePrimitive(old.type as PrimitiveType, f.type as PrimitiveType)
  const oldField = old.field
  const newField = f.field
  const docs = oldField !== undefined && newField !== undefined
  const docChanged = docs && (oldField.doc ?? undefined) !== (newField.doc ?? undefined)
  const initialChanged = docs && (oldField.initialDefault !== undefined || newField.initialDefault !== undefined) && !same(oldField.initialDefault, newField.initialDefault)
  const writeChanged = docs && (oldField.writeDefault !== undefined || newField.writeDefault !== undefined) && !same(oldField.writeDefault, newField.writeDefault)
  if (!moved && !renamed && ka === kb && !retyped && old.required === f.required && !docChanged && !initialChanged && !writeChanged) return

  const base = { fieldId: f.id, path: f.path }
  if (moved) {
    out.push({ ...base, kind: 'field-moved', oldPath: old.path, ...(old.parentId === undefined ? {} : { oldParentId: old.parentId }), ...(f.parentId === undefined ? {} : { newParentId: f.parentId }) })
  } else if (renamed) {
    out.push({ ...base, kind: 'field-renamed', oldPath: old.path, oldName: old.name, newName: f.name })
  }
  if (ka !== kb) out.push({ ...base, kind: 'kind-changed', from: old.type, to: f.type })
  else if (retyped) out.push({ ...base, kind: 'type-changed', from: old.type, to: f.type })
  if (old.required !== f.required) {
    out.push({ ...base, kind: 'nullability-changed', from: old.required ? 'required' : 'optional', to: f.required ? 'required' : 'optional' })
  }
  if (docChanged) {
    out.push({ ...base, kind: 'doc-changed', ...(oldField?.doc === undefined ? {} : { from: oldField.doc }), ...(newField?.doc === undefined ? {} : { to: newField.doc }) })
  }
  if (initialChanged) out.push({ ...base, kind: 'default-changed', which: 'initial-default', from: oldField?.initialDefault, to: newField?.initialDefault })
  if (writeChanged) out.push({ ...base, kind: 'default-changed', which: 'write-default', from: oldField?.writeDefault, to: newField?.writeDefault })
}

/**
 * Siblings that kept their parent, in new order. Those on a longest run whose old order increases
 * stayed put; the others were moved, so a move-first of one column reports one change, not n.
 * Called only for parents where a kept child changed position; a drop before it is no reorder.
 */
function reorders (fields: readonly NestedField[], parentId: number | undefined, a: SchemaIndex, b: SchemaIndex, out: Change[]): void {
  let last = -1
  let sorted = true
  for (const f of fields) {
    const old = a.byId.get(f.id)
    if (old === undefined || old.parentId !== parentId) continue
    if (old.index < last) { sorted = false; break }
    last = old.index
  }
  if (sorted) return
  const kept: IndexedField[] = []
  for (const f of fields) {
    const old = a.byId.get(f.id)
    const now = b.byId.get(f.id)
    if (old !== undefined && now !== undefined && old.parentId === parentId && now.field === f) kept.push(now)
  }
  const oldIdx = kept.map(f => (a.byId.get(f.id) as IndexedField).index)
  const keep = longestIncreasing(oldIdx)
  kept.forEach((f, i) => {
    if (!keep.has(i)) out.push({ kind: 'field-reordered', fieldId: f.id, path: f.path, oldIndex: oldIdx[i] as number, newIndex: f.index })
  })
}

/** Positions of one longest strictly increasing subsequence (patience sorting, n log n). */
function longestIncreasing (xs: readonly number[]): Set<number> {
  const tails: number[] = []
  const prev = new Array<number>(xs.length).fill(-1)
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i] as number
    let lo = 0
    let hi = tails.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((xs[tails[mid] as number] as number) < x) lo = mid + 1
      else hi = mid
    }
    if (lo > 0) prev[i] = tails[lo - 1] as number
    tails[lo] = i
  }
  const keep = new Set<number>()
  let k = tails.length > 0 ? tails[tails.length - 1] as number : -1
  while (k !== -1) { keep.add(k); k = prev[k] as number }
  return keep
}
