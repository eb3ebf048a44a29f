import { indexSchema, type SchemaIndex } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { checkedSchemas, EXISTING_TABLE_FLOWS, schemaLabel, subject } from './helpers.js'

/**
 * A new field gets an id above the table's `last-column-id`. Spec "Table Metadata": last-column-id
 * "is used to ensure columns are always assigned an unused ID when evolving schemas". An id at or
 * below it may have belonged to a column whose data still sits in old files. Ids found in an older
 * schema are FIELD_ID_NOT_REUSED's; this rule covers ids no schema ever showed.
 */
export const fieldIdNewAboveLast: Rule = {
  id: 'FIELD_ID_NEW_ABOVE_LAST',
  category: 'spec',
  purpose: "A new field's id is above the table's last-column-id.",
  defaultSeverity: 'error',
  flows: EXISTING_TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    if (ctx.base === undefined || ctx.baseSchema === undefined) return out
    const last = ctx.base.lastColumnId
    const current = indexSchema(ctx.baseSchema)
    // Older schemas are indexed only if some id at or below last-column-id is not in the current one.
    let history: SchemaIndex[] | undefined
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      for (let pos = 0; pos < index.size; pos++) {
        const id = index.idAt(pos)
        if (id > last || current.positionOf(id) >= 0) continue
        history ??= ctx.base.schemas.map(indexSchema)
        if (history.some(h => h.positionOf(id) >= 0)) continue
        const f = index.at(pos)
        out.push({
          rule: 'FIELD_ID_NEW_ABOVE_LAST',
          message: `Cannot assign field id: ${subject(f.path, f.id)}${schemaLabel(schema, ctx)}: new ids must be above the table's last-column-id ${last}`,
          fieldId: f.id,
          path: f.path,
          explanation: `Let the catalog client assign ids (the next free id is ${last + 1}).`
        })
      }
    }
    return out
  }
}
