/**
 * A mutable copy of a schema that the changes are applied to, one after the other, and the ways to
 * find a column in it by path.
 *
 * Paths are dotted names from the root. A list's element is `element` and a map's key and value are
 * `key` and `value` (as in `schema-index.ts`); like Java's `IndexByName` short names, a struct inside
 * a list element or map value may also be reached without that segment (`points.x` for
 * `points.element.x`). A name that itself contains dots is matched whole before it is split.
 */
import type { IcebergType, NestedField, PrimitiveType, Schema, StructType } from '../iceberg/types.js'

export interface WField {
  id: number
  name: string
  required: boolean
  type: WType
  doc?: string
  initialDefault?: unknown
  writeDefault?: unknown
}
export interface WStruct { kind: 'struct', fields: WField[] }
export interface WList { kind: 'list', elementId: number, elementRequired: boolean, element: WType }
export interface WMap { kind: 'map', keyId: number, key: WType, valueId: number, valueRequired: boolean, value: WType }
export type WType = PrimitiveType | WStruct | WList | WMap

export function isPrimitive (t: IcebergType | WType): t is PrimitiveType {
  return t.kind !== 'struct' && t.kind !== 'list' && t.kind !== 'map'
}

/** A deep, mutable copy of a type (ids kept). */
export function thaw (t: IcebergType): WType {
  switch (t.kind) {
    case 'struct': return { kind: 'struct', fields: t.fields.map(thawField) }
    case 'list': return { kind: 'list', elementId: t.elementId, elementRequired: t.elementRequired, element: thaw(t.element) }
    case 'map': return { kind: 'map', keyId: t.keyId, key: thaw(t.key), valueId: t.valueId, valueRequired: t.valueRequired, value: thaw(t.value) }
    default: return t
  }
}

function thawField (f: NestedField): WField {
  const out: WField = { id: f.id, name: f.name, required: f.required, type: thaw(f.type) }
  if (f.doc !== undefined) out.doc = f.doc
  if (f.initialDefault !== undefined) out.initialDefault = f.initialDefault
  if (f.writeDefault !== undefined) out.writeDefault = f.writeDefault
  return out
}

/** The immutable schema of a working struct. */
export function freeze (root: WStruct, identifierFieldIds: readonly number[], schemaId?: number): Schema {
  const struct = thaw(root as StructType) as StructType
  return schemaId === undefined
    ? { identifierFieldIds: [...identifierFieldIds], struct }
    : { schemaId, identifierFieldIds: [...identifierFieldIds], struct }
}

/** Where a path leads: a struct field, a list element, or a map key or value. */
export type Slot =
  | { readonly kind: 'field', readonly path: string, readonly parent: WStruct, readonly field: WField }
  | { readonly kind: 'element', readonly path: string, readonly list: WList }
  | { readonly kind: 'key', readonly path: string, readonly map: WMap }
  | { readonly kind: 'value', readonly path: string, readonly map: WMap }

export function slotType (s: Slot): WType {
  switch (s.kind) {
    case 'field': return s.field.type
    case 'element': return s.list.element
    case 'key': return s.map.key
    case 'value': return s.map.value
  }
}

export function setSlotType (s: Slot, t: WType): void {
  switch (s.kind) {
    case 'field': s.field.type = t; return
    case 'element': s.list.element = t; return
    case 'key': s.map.key = t; return
    case 'value': s.map.value = t
  }
}

/** Finds the column at `path`; undefined when there is none. */
export function resolvePath (root: WStruct, path: string): Slot | undefined {
  const segs = path.split('.')
  let t: WType = root
  let slot: Slot | undefined
  let at = ''
  let i = 0
  const join = (name: string): string => at === '' ? name : `${at}.${name}`
  while (i < segs.length) {
    if (t.kind === 'struct') {
      let found: WField | undefined
      let k = segs.length - i
      // Longest match first, so a field named "a.b" wins over struct "a" with field "b" only when it exists.
      for (; k >= 1; k--) {
        const name = segs.slice(i, i + k).join('.')
        found = t.fields.find(f => f.name === name)
        if (found !== undefined) break
      }
      if (found === undefined) return undefined
      at = join(found.name)
      slot = { kind: 'field', path: at, parent: t, field: found }
      t = found.type
      i += k
    } else if (t.kind === 'list') {
      if (segs[i] === 'element') {
        at = join('element')
        slot = { kind: 'element', path: at, list: t }
        t = t.element
        i++
      } else if (t.element.kind === 'struct') {
        at = join('element')
        t = t.element
      } else {
        return undefined
      }
    } else if (t.kind === 'map') {
      if (segs[i] === 'key' || segs[i] === 'value') {
        const which = segs[i] as 'key' | 'value'
        at = join(which)
        slot = which === 'key' ? { kind: 'key', path: at, map: t } : { kind: 'value', path: at, map: t }
        t = which === 'key' ? t.key : t.value
        i++
      } else if (t.value.kind === 'struct') {
        at = join('value')
        t = t.value
      } else {
        return undefined
      }
    } else {
      return undefined
    }
  }
  return slot
}

/** Splits `a.b.c` into its parent path `a.b` and last name `c` (no parent: `''`). */
export function splitPath (path: string): { parent: string, name: string } {
  const i = path.lastIndexOf('.')
  return i < 0 ? { parent: '', name: path } : { parent: path.slice(0, i), name: path.slice(i + 1) }
}

/**
 * The struct that new fields under `parentPath` go into: the root, a struct column, a list's
 * element struct or a map's value struct (Java `SchemaUpdate.addColumn`). A string on failure.
 */
export function structForAdd (root: WStruct, parentPath: string): { struct: WStruct, path: string } | string {
  if (parentPath === '') return { struct: root, path: '' }
  const slot = resolvePath(root, parentPath)
  if (slot === undefined) return `Cannot find parent struct: ${parentPath}`
  if (slot.kind === 'key') return `Cannot add fields to map keys: ${slot.path}`
  const t = slotType(slot)
  if (t.kind === 'struct') return { struct: t, path: slot.path }
  if (t.kind === 'list' && t.element.kind === 'struct') return { struct: t.element, path: `${slot.path}.element` }
  if (t.kind === 'map' && t.value.kind === 'struct') return { struct: t.value, path: `${slot.path}.value` }
  return `Cannot add to non-struct column: ${slot.path}`
}

/** Every id in a type tree (the type's own nested ids, not the column's). */
export function idsIn (t: WType, out: number[] = []): number[] {
  const stack: WType[] = [t]
  while (stack.length > 0) {
    const x = stack.pop() as WType
    if (x.kind === 'struct') for (const f of x.fields) { out.push(f.id); stack.push(f.type) }
    else if (x.kind === 'list') { out.push(x.elementId); stack.push(x.element) } else if (x.kind === 'map') { out.push(x.keyId, x.valueId); stack.push(x.key, x.value) }
  }
  return out
}

/**
 * A copy of `t` with fresh ids from `next`, in Java's `TypeUtil.assignFreshIds` order: a struct's
 * fields first, then what is inside each; a list's element; a map's key then value. Spec "Schema
 * Evolution": "Adding a new field assigns a new ID for that field and for any nested fields".
 */
export function withFreshIds (t: IcebergType | WType, next: () => number): WType {
  switch (t.kind) {
    case 'struct': {
      const ids = t.fields.map(() => next())
      return {
        kind: 'struct',
        fields: t.fields.map((f, i) => {
          const out: WField = { id: ids[i] as number, name: f.name, required: f.required, type: withFreshIds(f.type, next) }
          if (f.doc !== undefined) out.doc = f.doc
          return out
        })
      }
    }
    case 'list': {
      const elementId = next()
      return { kind: 'list', elementId, elementRequired: t.elementRequired, element: withFreshIds(t.element, next) }
    }
    case 'map': {
      const keyId = next()
      const valueId = next()
      return { kind: 'map', keyId, key: withFreshIds(t.key, next), valueId, valueRequired: t.valueRequired, value: withFreshIds(t.value, next) }
    }
    default: return t
  }
}
