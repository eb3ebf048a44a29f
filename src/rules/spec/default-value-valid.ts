import { isLossless, isObject, showValue } from '../../iceberg/json-values.js'
import { typeToString } from '../../iceberg/print.js'
import { indexSchema } from '../../iceberg/schema-index.js'
import type { IcebergType } from '../../iceberg/types.js'
import type { Rule, Violation } from '../rule.js'
import { checkedSchemas, isNullDefault, schemaFacts, schemaLabel, subject, TABLE_FLOWS } from './helpers.js'

/** Types whose columns "must default to null" (spec "Default values"). */
const NULL_ONLY = new Set(['unknown', 'variant', 'geometry', 'geography'])
const INT32 = 2147483647

/**
 * Default values fit their field: spec "Default values" and Appendix D (single-value JSON):
 * a struct default is null or `{}`; lists and maps default to null; unknown, variant, geometry
 * and geography default to null, and an unknown column is optional. Otherwise the value must have
 * the JSON shape of the type (a number for int, a string for decimal, date, uuid, ...).
 */
export const defaultValueValid: Rule = {
  id: 'DEFAULT_VALUE_VALID',
  category: 'spec',
  purpose: 'Default values match their field type, and null-only types (unknown, variant, geometry, geography) stay null and optional.',
  defaultSeverity: 'error',
  flows: TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const schema of checkedSchemas(ctx)) {
      // Only defaults and the null-only types (all v3-only) can be wrong here.
      const facts = schemaFacts(schema)
      if (!facts.v3Types && !facts.defaults) continue
      const where = schemaLabel(schema, ctx)
      for (const f of indexSchema(schema).fields) {
        if (f.type.kind === 'unknown' && f.required) {
          out.push({ rule: 'DEFAULT_VALUE_VALID', message: `Cannot create required field with unknown type: ${subject(f.path, f.id)}${where}`, fieldId: f.id, path: f.path })
        }
        const nf = f.field
        if (nf === undefined || (isNullDefault(nf.initialDefault) && isNullDefault(nf.writeDefault))) continue
        for (const [which, value] of [['initial-default', nf.initialDefault], ['write-default', nf.writeDefault]] as const) {
          if (isNullDefault(value)) continue
          const problem = defaultProblem(f.type, value)
          if (problem === undefined) continue
          out.push({
            rule: 'DEFAULT_VALUE_VALID',
            message: `Cannot use default value: ${subject(f.path, f.id)}${where}: ${which} ${showValue(value)} ${problem}`,
            fieldId: f.id,
            path: f.path,
            explanation: 'Give a value in the single-value JSON form of the field type, or null.'
          })
        }
      }
    }
    return out
  }
}

function isInteger (v: unknown): boolean {
  return (typeof v === 'number' && Number.isInteger(v)) || (isLossless(v) && /^-?\d+$/.test(v.toString()))
}

function defaultProblem (t: IcebergType, v: unknown): string | undefined {
  if (NULL_ONLY.has(t.kind)) return `must be null for type ${typeToString(t)}`
  switch (t.kind) {
    case 'struct': return isObject(v) && Object.keys(v).length === 0 ? undefined : 'must be null or {} for a struct'
    case 'list':
    case 'map': return `must be null for a ${t.kind}`
    case 'boolean': return typeof v === 'boolean' ? undefined : 'is not a boolean'
    case 'int': return isInteger(v) && Math.abs(Number(isLossless(v) ? v.toString() : v)) <= INT32 ? undefined : 'is not an int'
    case 'long': return isInteger(v) ? undefined : 'is not a long'
    case 'float':
    case 'double': return typeof v === 'number' || isLossless(v) ? undefined : `is not a ${t.kind}`
    default: return typeof v === 'string' ? undefined : `is not a ${typeToString(t)} string`
  }
}
