import { showValue } from '../../../iceberg/json-values.js'
import { indexSchema } from '../../../iceberg/schema-index.js'
import { defaultValueProblem } from '../../../iceberg/schema-compatibility.js'
import type { Rule, Violation } from '../rule.js'
import { checkedSchemas, isNullDefault, schemaFacts, schemaLabel, subject, TABLE_FLOWS } from './helpers.js'

/**
 * Default values fit their field: spec "Default values", Appendix E and Appendix D (single-value
 * JSON). A primitive default is a valid value of its type in the spec's JSON form: an int in range,
 * a decimal with the type's scale and no more digits than its precision, a real calendar date, a
 * timestamptz ending in `+00:00`, a fixed of the type's length in hex, and so on
 * (`single-value.ts`). A struct default is null or `{}` (Appendix E: sub-field defaults live on the
 * sub-fields); lists and maps default to null (no peer accepts another default for them); unknown,
 * variant, geometry and geography default to null, and an unknown column is optional.
 */
export const defaultValueValid: Rule = {
  id: 'DEFAULT_VALUE_VALID',
  category: 'spec',
  purpose: 'Default values are valid values of their field type (spec Appendix D), and null-only types (unknown, variant, geometry, geography) stay null and optional.',
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
          const problem = defaultValueProblem(f.type, value)
          if (problem === undefined) continue
          out.push({
            rule: 'DEFAULT_VALUE_VALID',
            message: `Cannot use default value: ${subject(f.path, f.id)}${where}: ${which} ${showValue(value)} ${problem}`,
            fieldId: f.id,
            path: f.path,
            explanation: 'Give a value in the single-value JSON form of the field type (spec Appendix D), or null.'
          })
        }
      }
    }
    return out
  }
}
