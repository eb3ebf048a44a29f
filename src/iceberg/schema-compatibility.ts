/**
 * What a schema must satisfy to be stored in a table of a given format version, as a catalog
 * enforces it when it builds metadata (Java `Schema.checkCompatibility`, and `SchemaParser` reading
 * each default with `SingleValueParser`): no v3-only type and no non-null `initial-default` below
 * v3 (spec Appendix E), and every default a valid value of its field (Appendix D). The rules
 * FORMAT_VERSION_TYPES and DEFAULT_VALUE_VALID judge the same facts with their own explanations;
 * this is the catalog's side, so the embedded catalog refuses what the gate refuses.
 */
import { isObject } from './json-values.js'
import { V3_ONLY_TYPES } from './promotion.js'
import { indexSchema } from './schema-index.js'
import { singleValueProblem } from './single-value.js'
import type { IcebergType, Schema } from './types.js'

interface CompatibilityProblem {
  readonly rule: 'FORMAT_VERSION_TYPES' | 'DEFAULT_VALUE_VALID'
  readonly fieldId: number
  readonly path: string
  readonly message: string
}

/** Why `value` cannot be a default of a field of type `t`, or undefined when it can. */
export function defaultValueProblem (t: IcebergType, value: unknown): string | undefined {
  switch (t.kind) {
    case 'struct': return isObject(value) && Object.keys(value).length === 0 ? undefined : 'must be null or {} for a struct (sub-field defaults belong to the sub-fields)'
    case 'list':
    case 'map': return `must be null for a ${t.kind}`
    default: return singleValueProblem(t, value)
  }
}

/** Every problem of `schema` in a table of `formatVersion`, in field order. */
export function schemaCompatibilityProblems (schema: Schema, formatVersion: number): CompatibilityProblem[] {
  const out: CompatibilityProblem[] = []
  for (const f of indexSchema(schema).fields) {
    const t = f.type
    const at = `${f.path} (id ${f.id})`
    if (formatVersion < 3 && t.kind !== 'struct' && t.kind !== 'list' && t.kind !== 'map' && V3_ONLY_TYPES.has(t.kind)) {
      out.push({ rule: 'FORMAT_VERSION_TYPES', fieldId: f.id, path: f.path, message: `Invalid type for ${at}: ${t.kind} is not supported until v3` })
    }
    if (t.kind === 'unknown' && f.required) {
      out.push({ rule: 'DEFAULT_VALUE_VALID', fieldId: f.id, path: f.path, message: `Cannot create required field with unknown type: ${at}` })
    }
    const field = f.field
    if (field === undefined) continue
    const initial = field.initialDefault
    if (formatVersion < 3 && initial !== undefined && initial !== null) {
      out.push({ rule: 'FORMAT_VERSION_TYPES', fieldId: f.id, path: f.path, message: `Invalid initial default for ${at}: non-null default is not supported until v3` })
    }
    for (const [which, value] of [['initial-default', initial], ['write-default', field.writeDefault]] as const) {
      if (value === undefined || value === null) continue
      const problem = defaultValueProblem(t, value)
      if (problem !== undefined) out.push({ rule: 'DEFAULT_VALUE_VALID', fieldId: f.id, path: f.path, message: `Invalid ${which} for ${at}: ${JSON.stringify(value)} ${problem}` })
    }
  }
  return out
}
