/**
 * Domain types → the spec's spelling (Appendix C). `typeToJson`/`schemaToJson` round-trip with
 * `parseType`/`parseSchema`; `typeToString` is the one-line form used in messages.
 */
import type { IcebergType, NestedField, PrimitiveType, Schema } from './types.js'

/** Spec spelling of a primitive: `decimal(10, 2)`, `fixed[16]`, `geography(OGC:CRS84, karney)`. */
export function primitiveToString (t: PrimitiveType): string {
  switch (t.kind) {
    case 'decimal': return `decimal(${t.precision}, ${t.scale})`
    case 'fixed': return `fixed[${t.length}]`
    case 'geometry': return t.crs === undefined ? 'geometry' : `geometry(${t.crs})`
    case 'geography':
      if (t.crs === undefined && t.algorithm === undefined) return 'geography'
      return t.algorithm === undefined ? `geography(${t.crs ?? 'OGC:CRS84'})` : `geography(${t.crs ?? 'OGC:CRS84'}, ${t.algorithm})`
    default: return t.kind
  }
}

/** One-line rendering: primitives as the spec spells them, `struct<a: int>`, `list<long>`, `map<string, int>`. */
export function typeToString (t: IcebergType): string {
  // Iterative so that even a pathological hand-built tree cannot overflow the stack.
  const out: string[] = []
  const stack: Array<IcebergType | string> = [t]
  while (stack.length > 0) {
    const item = stack.pop() as IcebergType | string
    if (typeof item === 'string') { out.push(item); continue }
    switch (item.kind) {
      case 'struct': {
        const parts: Array<IcebergType | string> = ['struct<']
        item.fields.forEach((f, i) => {
          parts.push(`${i > 0 ? ', ' : ''}${f.name}: `, f.type)
        })
        parts.push('>')
        for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i] as IcebergType | string)
        break
      }
      case 'list': stack.push('>', item.element, 'list<'); break
      case 'map': stack.push('>', item.value, ', ', item.key, 'map<'); break
      default: out.push(primitiveToString(item))
    }
  }
  return out.join('')
}

function fieldToJson (f: NestedField): Record<string, unknown> {
  const out: Record<string, unknown> = { id: f.id, name: f.name, required: f.required, type: typeToJson(f.type) }
  if (f.doc !== undefined) out.doc = f.doc
  if (f.initialDefault !== undefined) out['initial-default'] = f.initialDefault
  if (f.writeDefault !== undefined) out['write-default'] = f.writeDefault
  return out
}

/** Wire JSON of a type (Appendix C). */
export function typeToJson (t: IcebergType): unknown {
  switch (t.kind) {
    case 'struct': return { type: 'struct', fields: t.fields.map(fieldToJson) }
    case 'list': return { type: 'list', 'element-id': t.elementId, element: typeToJson(t.element), 'element-required': t.elementRequired }
    case 'map': return {
      type: 'map',
      'key-id': t.keyId,
      key: typeToJson(t.key),
      'value-id': t.valueId,
      value: typeToJson(t.value),
      'value-required': t.valueRequired
    }
    default: return primitiveToString(t)
  }
}

/** Wire JSON of a schema, as carried by `add-schema` and table metadata. */
export function schemaToJson (s: Schema): unknown {
  return {
    type: 'struct',
    ...(s.schemaId === undefined ? {} : { 'schema-id': s.schemaId }),
    'identifier-field-ids': [...s.identifierFieldIds],
    fields: s.struct.fields.map(fieldToJson)
  }
}
