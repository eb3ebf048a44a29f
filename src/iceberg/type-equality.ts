/**
 * Equality of types and schemas.
 *
 * `sameSchema` follows Java's `Schema.sameSchema` (struct equality + identifier ids), which decides
 * whether an `add-schema` reuses an existing schema id (TableMetadata.Builder.reuseOrCreateNewSchemaId).
 * `sameTypeShape` ignores ids, field order and docs: "would a reader see the same columns".
 */
import { jsonEquals } from './json-values.js'
import type { IcebergType, NestedField, PrimitiveType, Schema } from './types.js'

const DEFAULT_CRS = 'ogc:crs84'
const DEFAULT_ALGORITHM = 'spherical'

/** Primitive equality; geometry/geography parameters compare with their spec defaults filled in. */
export function samePrimitive (a: PrimitiveType, b: PrimitiveType): boolean {
  if (a.kind !== b.kind) return false
  switch (a.kind) {
    case 'decimal': return b.kind === 'decimal' && a.precision === b.precision && a.scale === b.scale
    case 'fixed': return b.kind === 'fixed' && a.length === b.length
    case 'geometry': return b.kind === 'geometry' && crs(a.crs) === crs(b.crs)
    case 'geography': return b.kind === 'geography' && crs(a.crs) === crs(b.crs) &&
      (a.algorithm ?? DEFAULT_ALGORITHM).toLowerCase() === (b.algorithm ?? DEFAULT_ALGORITHM).toLowerCase()
    default: return true
  }
}

function crs (c: string | undefined): string {
  return (c ?? DEFAULT_CRS).toLowerCase()
}

function isPrimitive (t: IcebergType): t is PrimitiveType {
  return t.kind !== 'struct' && t.kind !== 'list' && t.kind !== 'map'
}

/** An absent default and an explicit null mean the same thing (Java stores both as null). */
function sameDefault (a: unknown, b: unknown): boolean {
  return jsonEquals(a ?? null, b ?? null)
}

function sameField (a: NestedField, b: NestedField): boolean {
  return a.id === b.id && a.name === b.name && a.required === b.required && (a.doc ?? null) === (b.doc ?? null) &&
    sameDefault(a.initialDefault, b.initialDefault) && sameDefault(a.writeDefault, b.writeDefault)
}

/** Exact type equality, ids and field order included (Java `Type.equals`). */
function sameType (a: IcebergType, b: IcebergType): boolean {
  const stack: Array<[IcebergType, IcebergType]> = [[a, b]]
  while (stack.length > 0) {
    const [x, y] = stack.pop() as [IcebergType, IcebergType]
    if (isPrimitive(x) || isPrimitive(y)) {
      if (!isPrimitive(x) || !isPrimitive(y) || !samePrimitive(x, y)) return false
      continue
    }
    if (x.kind === 'struct' && y.kind === 'struct') {
      if (x.fields.length !== y.fields.length) return false
      for (let i = 0; i < x.fields.length; i++) {
        const fx = x.fields[i] as NestedField
        const fy = y.fields[i] as NestedField
        if (!sameField(fx, fy)) return false
        stack.push([fx.type, fy.type])
      }
    } else if (x.kind === 'list' && y.kind === 'list') {
      if (x.elementId !== y.elementId || x.elementRequired !== y.elementRequired) return false
      stack.push([x.element, y.element])
    } else if (x.kind === 'map' && y.kind === 'map') {
      if (x.keyId !== y.keyId || x.valueId !== y.valueId || x.valueRequired !== y.valueRequired) return false
      stack.push([x.key, y.key], [x.value, y.value])
    } else {
      return false
    }
  }
  return true
}

/** Java `Schema.sameSchema`: equal structs (order, ids, names, required, docs, types, defaults) and identifier ids. */
export function sameSchema (a: Schema, b: Schema): boolean {
  // add-schema compares the new schema with every schema of the table's history; most differ in
  // their column count, which is known before any set is built.
  if (a.struct.fields.length !== b.struct.fields.length) return false
  if (!sameIdSet(a.identifierFieldIds, b.identifierFieldIds)) return false
  return sameType(a.struct, b.struct)
}

/** The two lists hold the same ids (as sets: order and repeats do not matter). */
function sameIdSet (a: readonly number[], b: readonly number[]): boolean {
  if (a.length <= 8 && b.length <= 8) {
    // A few ids each (the usual identifier list): each side's ids found in the other is set equality.
    for (const id of a) if (!b.includes(id)) return false
    for (const id of b) if (!a.includes(id)) return false
    return true
  }
  const ia = new Set(a)
  const ib = new Set(b)
  if (ia.size !== ib.size) return false
  for (const id of ia) if (!ib.has(id)) return false
  return true
}

/** Structural equality: names, required flags and types; ids, field order and docs ignored. */
export function sameTypeShape (a: IcebergType, b: IcebergType): boolean {
  const stack: Array<[IcebergType, IcebergType]> = [[a, b]]
  while (stack.length > 0) {
    const [x, y] = stack.pop() as [IcebergType, IcebergType]
    if (isPrimitive(x) || isPrimitive(y)) {
      if (!isPrimitive(x) || !isPrimitive(y) || !samePrimitive(x, y)) return false
      continue
    }
    if (x.kind === 'struct' && y.kind === 'struct') {
      if (x.fields.length !== y.fields.length) return false
      const byName = new Map(y.fields.map(f => [f.name, f]))
      for (const fx of x.fields) {
        const fy = byName.get(fx.name)
        if (fy === undefined || fy.required !== fx.required) return false
        stack.push([fx.type, fy.type])
      }
    } else if (x.kind === 'list' && y.kind === 'list') {
      if (x.elementRequired !== y.elementRequired) return false
      stack.push([x.element, y.element])
    } else if (x.kind === 'map' && y.kind === 'map') {
      if (x.valueRequired !== y.valueRequired) return false
      stack.push([x.key, y.key], [x.value, y.value])
    } else {
      return false
    }
  }
  return true
}
