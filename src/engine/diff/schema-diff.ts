/**
 * Diff of two schemas, paired by field id and never by name (spec "Schema Evolution": the id is
 * the identity, the name a label). Linear in the number of fields, apart from the n log n pass
 * that finds reordered siblings in the structs where a position changed.
 */
import { jsonEquals } from '../../iceberg/json-values.js'
import { indexSchema, type IndexedField, type SchemaIndex } from '../../iceberg/schema-index.js'
import { samePrimitive } from '../../iceberg/type-equality.js'
import type { IcebergType, NestedField, PrimitiveType, Schema } from '../../iceberg/types.js'
import type { Change } from './schema-change.js'

type TypeKind = 'primitive' | 'struct' | 'list' | 'map'

/** primitive, struct, list or map: the kinds a field id may never leave. */
function kindOf (t: IcebergType): TypeKind {
  return t.kind === 'struct' || t.kind === 'list' || t.kind === 'map' ? t.kind : 'primitive'
}

/** The field as a NestedField; list elements and map keys/values get one named after their role. */
function asNestedField (f: IndexedField): NestedField {
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

  // Positional walks: unchanged fields, the vast majority, cost a few loads and no allocation.
  for (let pos = 0; pos < b.size; pos++) {
    const id = b.idAt(pos)
    if (b.positionOf(id) !== pos) continue // a duplicate id: reported by FIELD_ID_UNIQUE, not diffable
    const was = a.positionOf(id)
    const parent = b.parentAt(pos)
    const parentId = parent < 0 ? undefined : b.idAt(parent)
    if (was < 0) {
      // Only the top-most new field: its nested fields travel inside it.
      if (parentId === undefined || a.positionOf(parentId) >= 0) {
        changes.push({ kind: 'field-added', fieldId: id, path: b.pathAt(pos), ...(parentId === undefined ? {} : { parentId }), field: asNestedField(b.at(pos)) })
      }
      continue
    }
    paired++
    const oldParent = a.parentAt(was)
    const oldParentId = oldParent < 0 ? undefined : a.idAt(oldParent)
    if (a.indexAt(was) !== b.indexAt(pos) && oldParentId === parentId) (shifted ??= new Set()).add(parentId)
    compareField(a, was, oldParentId, b, pos, parentId, changes)
  }

  if (shifted !== undefined) {
    if (shifted.has(undefined)) reorders(to.struct.fields, undefined, a, b, changes)
    for (let pos = 0; pos < b.size; pos++) {
      const t = b.typeAt(pos)
      const id = b.idAt(pos)
      if (t.kind === 'struct' && shifted.has(id) && b.positionOf(id) === pos) reorders(t.fields, id, a, b, changes)
    }
  }

  // When every id of `from` was found again in `to`, nothing was dropped.
  if (paired < a.byId.size) {
    for (let pos = 0; pos < a.size; pos++) {
      const id = a.idAt(pos)
      if (b.positionOf(id) >= 0 || a.positionOf(id) !== pos) continue
      const parent = a.parentAt(pos)
      const parentId = parent < 0 ? undefined : a.idAt(parent)
      if (parentId === undefined || b.positionOf(parentId) >= 0) {
        changes.push({ kind: 'field-dropped', fieldId: id, path: a.pathAt(pos), ...(parentId === undefined ? {} : { parentId }), field: asNestedField(a.at(pos)) })
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

/** Compares the field at `i` of `a` with the same id at `j` of `b`; changes go to `out`. */
function compareField (a: SchemaIndex, i: number, oldParentId: number | undefined, b: SchemaIndex, j: number, parentId: number | undefined, out: Change[]): void {
  const moved = oldParentId !== parentId
  const oldName = a.nameAt(i)
  const newName = b.nameAt(j)
  const renamed = oldName !== newName
  const oldType = a.typeAt(i)
  const newType = b.typeAt(j)
  const ka = kindOf(oldType)
  const kb = kindOf(newType)
  const retyped = ka === kb && ka === 'primitive' && oldType !== newType && !samePrimitive(oldType as PrimitiveType, newType as PrimitiveType)
  const oldRequired = a.requiredAt(i)
  const newRequired = b.requiredAt(j)
  const oldField = a.fieldAt(i)
  const newField = b.fieldAt(j)
  const docs = oldField !== undefined && newField !== undefined
  const docChanged = docs && (oldField.doc ?? undefined) !== (newField.doc ?? undefined)
  const initialChanged = docs && (oldField.initialDefault !== undefined || newField.initialDefault !== undefined) && !same(oldField.initialDefault, newField.initialDefault)
  const writeChanged = docs && (oldField.writeDefault !== undefined || newField.writeDefault !== undefined) && !same(oldField.writeDefault, newField.writeDefault)
  if (!moved && !renamed && ka === kb && !retyped && oldRequired === newRequired && !docChanged && !initialChanged && !writeChanged) return

  const base = { fieldId: b.idAt(j), path: b.pathAt(j) }
  if (moved) {
    out.push({ ...base, kind: 'field-moved', oldPath: a.pathAt(i), ...(oldParentId === undefined ? {} : { oldParentId }), ...(parentId === undefined ? {} : { newParentId: parentId }) })
  } else if (renamed) {
    out.push({ ...base, kind: 'field-renamed', oldPath: a.pathAt(i), oldName, newName })
  }
  if (ka !== kb) out.push({ ...base, kind: 'kind-changed', from: oldType, to: newType })
  else if (retyped) out.push({ ...base, kind: 'type-changed', from: oldType, to: newType })
  if (oldRequired !== newRequired) {
    out.push({ ...base, kind: 'nullability-changed', from: oldRequired ? 'required' : 'optional', to: newRequired ? 'required' : 'optional' })
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
