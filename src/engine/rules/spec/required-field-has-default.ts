import { indexSchema } from '../../../iceberg/schema-index.js'
import { showValue } from '../../../iceberg/json-values.js'
import type { Rule, Violation } from '../rule.js'
import { isNullDefault, subject } from './helpers.js'

/**
 * A required field added to an existing table needs a value for the rows already written: spec
 * "Schema Evolution": "When a required field is added, both defaults must be set to a non-null
 * value". Defaults exist only from format version 3, so on v1/v2 a required column cannot be added.
 * Only the top-most added field counts: a required field inside a new optional struct is fine,
 * because old rows read the whole struct as null.
 */
export const requiredFieldHasDefault: Rule = {
  id: 'REQUIRED_FIELD_HAS_DEFAULT',
  category: 'spec',
  purpose: 'A new required field has non-null initial-default and write-default (format version 3 only).',
  defaultSeverity: 'error',
  flows: ['update'],
  check (ctx) {
    const out: Violation[] = []
    const proposed = indexSchema(ctx.proposedSchema)
    const v = ctx.proposed.formatVersion
    for (const c of ctx.changes) {
      if (c.kind !== 'field-added' || !c.field.required) continue
      // A new list element or map value is FIELD_KIND_STABLE's business.
      const parent = c.parentId === undefined ? undefined : proposed.byId.get(c.parentId)
      if (parent !== undefined && parent.type.kind !== 'struct') continue
      const s = subject(c.path, c.fieldId)
      if (v < 3) {
        out.push({
          rule: 'REQUIRED_FIELD_HAS_DEFAULT',
          message: `Cannot add required column: ${s}: a v${v} table has no default values, so existing rows would have none`,
          fieldId: c.fieldId,
          path: c.path,
          explanation: 'Add the column as optional, or upgrade the table to format version 3 and give it an initial-default and write-default.'
        })
        continue
      }
      const missing = [
        ...(isNullDefault(c.field.initialDefault) ? ['initial-default'] : []),
        ...(isNullDefault(c.field.writeDefault) ? ['write-default'] : [])
      ]
      if (missing.length === 0) continue
      out.push({
        rule: 'REQUIRED_FIELD_HAS_DEFAULT',
        message: `Cannot add required column without a default: ${s}: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} ${missing.map(m => showValue(m === 'initial-default' ? c.field.initialDefault : c.field.writeDefault)).join('/')}`,
        fieldId: c.fieldId,
        path: c.path,
        explanation: 'Set both initial-default (the value old rows read) and write-default to a non-null value, or add the column as optional.'
      })
    }
    return out
  }
}
