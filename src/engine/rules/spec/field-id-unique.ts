import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { ALL_FLOWS, checkedSchemas, schemaLabel } from './helpers.js'

/**
 * Every field id occurs once in a schema, list elements and map keys/values included. Columns are
 * "selected by field id" (spec "Column Projection"); two fields with one id cannot both be read.
 * Java fails such a schema while parsing the request, outside its error handling.
 */
export const fieldIdUnique: Rule = {
  id: 'FIELD_ID_UNIQUE',
  category: 'spec',
  purpose: 'Every field id occurs once in a schema.',
  defaultSeverity: 'error',
  flows: ALL_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      if (index.duplicateIds.length === 0) continue
      const dups = new Set(index.duplicateIds)
      const paths = new Map<number, string[]>()
      for (let pos = 0; pos < index.size; pos++) {
        const id = index.idAt(pos)
        if (!dups.has(id)) continue
        const list = paths.get(id)
        if (list === undefined) paths.set(id, [index.pathAt(pos)])
        else list.push(index.pathAt(pos))
      }
      for (const [id, list] of paths) {
        out.push({
          rule: 'FIELD_ID_UNIQUE',
          message: `Cannot use field id twice: id ${id}${schemaLabel(schema, ctx)} is used by ${list.join(' and ')}`,
          fieldId: id,
          path: list[list.length - 1] as string,
          explanation: 'Give every field, list element and map key/value its own id.'
        })
      }
    }
    return out
  }
}
