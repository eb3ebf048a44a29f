/**
 * Finding a schema equal to a new one among a table's history (Java `Schema.sameSchema`, which
 * decides whether an add-schema reuses an existing schema id) without comparing every field of
 * every schema.
 */
import { sameSchema } from './type-equality.js'
import type { IcebergType, Schema } from './types.js'

/**
 * A number that equal schemas share (`sameSchema`): ids, names, required flags, docs and type
 * kinds, hashed (FNV-1a). An add-schema compares its schema with every schema of the table's
 * history; most of them differ in their column count, and those that do not are told apart by this
 * number before any field is compared. Computed once per schema (schemas are immutable values).
 */
const fingerprints = new WeakMap<Schema, number>()

function fingerprint (schema: Schema): number {
  let h = fingerprints.get(schema)
  if (h !== undefined) return h
  h = 0x811c9dc5
  const mix = (text: string): void => {
    for (let i = 0; i < text.length; i++) h = Math.imul((h as number) ^ text.charCodeAt(i), 0x01000193)
  }
  const stack: IcebergType[] = [schema.struct]
  while (stack.length > 0) {
    const t = stack.pop() as IcebergType
    if (t.kind === 'struct') {
      mix(`s${t.fields.length}`)
      for (const f of t.fields) {
        mix(`|${f.id}:${f.name}:${f.required ? 1 : 0}:${f.doc ?? ''}`)
        stack.push(f.type)
      }
    } else if (t.kind === 'list') {
      mix(`l${t.elementId}:${t.elementRequired ? 1 : 0}`)
      stack.push(t.element)
    } else if (t.kind === 'map') {
      mix(`m${t.keyId}:${t.valueId}:${t.valueRequired ? 1 : 0}`)
      stack.push(t.key, t.value)
    } else {
      // Parameters that compare loosely (geometry CRS case, defaults) are left to sameSchema.
      mix(t.kind === 'decimal' ? `d${t.precision},${t.scale}` : t.kind === 'fixed' ? `f${t.length}` : t.kind)
    }
  }
  fingerprints.set(schema, h)
  return h
}

/** The schema of `schemas` that is the same as `schema` (Java `Schema.sameSchema`), if any. */
export function findSameSchema (schemas: readonly Schema[], schema: Schema): Schema | undefined {
  const width = schema.struct.fields.length
  for (const s of schemas) {
    if (s.struct.fields.length !== width || fingerprint(s) !== fingerprint(schema)) continue
    if (sameSchema(s, schema)) return s
  }
  return undefined
}
