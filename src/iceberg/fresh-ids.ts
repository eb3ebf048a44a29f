/**
 * Java `TypeUtil.assignFreshIds`, as `TableMetadata.newTableMetadata` and a view's create use it:
 * ids restart at 1, and a struct's own fields are numbered before their children are visited.
 */
import type { IcebergType, NestedField, Schema, StructType } from './types.js'

interface FreshIds {
  readonly schema: Schema
  /** Old id → new id, to rebind partition and sort sources. */
  readonly ids: ReadonlyMap<number, number>
  /** Identifier field ids the schema does not have. */
  readonly unknownIdentifiers: readonly number[]
}

export function assignFreshIds (schema: Schema): FreshIds {
  let next = 0
  const ids = new Map<number, number>()
  const fresh = (old: number): number => {
    ids.set(old, ++next)
    return next
  }
  const visit = (t: IcebergType): IcebergType => {
    switch (t.kind) {
      case 'struct': {
        const renumbered = t.fields.map(f => ({ field: f, id: fresh(f.id) }))
        const fields: NestedField[] = renumbered.map(({ field, id }) => ({ ...field, id, type: visit(field.type) }))
        return { kind: 'struct', fields }
      }
      case 'list': {
        const elementId = fresh(t.elementId)
        return { ...t, elementId, element: visit(t.element) }
      }
      case 'map': {
        const keyId = fresh(t.keyId)
        const valueId = fresh(t.valueId)
        return { ...t, keyId, valueId, key: visit(t.key), value: visit(t.value) }
      }
      default: return t
    }
  }
  const struct = visit(schema.struct) as StructType
  const unknownIdentifiers = schema.identifierFieldIds.filter(id => !ids.has(id))
  return {
    schema: { schemaId: 0, identifierFieldIds: schema.identifierFieldIds.map(id => ids.get(id) ?? id), struct },
    ids,
    unknownIdentifiers
  }
}
