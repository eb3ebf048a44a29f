import { indexSchema } from '../../../iceberg/schema-index.js'
import { MAX_FIELD_ID } from '../../../iceberg/types.js'
import type { Rule, Violation } from '../rule.js'
import { checkedSchemas, schemaLabel, subject, TABLE_FLOWS } from './helpers.js'

/**
 * No field id above 2147483447 (Integer.MAX_VALUE - 200): spec "Reserved Field IDs" keeps that range
 * for metadata columns such as `_file` and `_pos`. Neither Java nor pyiceberg checks it.
 */
export const fieldIdNotReserved: Rule = {
  id: 'FIELD_ID_NOT_RESERVED',
  category: 'spec',
  purpose: `No field id lies in the range reserved for metadata columns (above ${MAX_FIELD_ID}).`,
  defaultSeverity: 'error',
  flows: TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      if (index.highestId <= MAX_FIELD_ID) continue
      for (let pos = 0; pos < index.size; pos++) {
        if (index.idAt(pos) <= MAX_FIELD_ID) continue
        const f = index.at(pos)
        out.push({
          rule: 'FIELD_ID_NOT_RESERVED',
          message: `Cannot use reserved field id: ${subject(f.path, f.id)}${schemaLabel(schema, ctx)}: ids above ${MAX_FIELD_ID} are reserved for metadata columns`,
          fieldId: f.id,
          path: f.path
        })
      }
    }
    return out
  }
}
