import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { basePath, defaultSortOrder, subject, TABLE_FLOWS } from './helpers.js'

/**
 * Every source column of the default sort order exists in the current schema. Java's
 * `SortOrder.checkCompatibility` refuses otherwise ("Cannot find source column for sort field"),
 * and writers would no longer know how to order new files.
 */
export const sortSourceNotDropped: Rule = {
  id: 'SORT_SOURCE_NOT_DROPPED',
  category: 'spec',
  purpose: 'A column the default sort order uses is not dropped.',
  defaultSeverity: 'error',
  flows: TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    const order = defaultSortOrder(ctx.proposed)
    if (order === undefined) return out
    const index = indexSchema(ctx.proposedSchema)
    for (const sf of order.fields) {
      for (const id of sf.sourceIds) {
        if (index.byId.has(id)) continue
        const path = basePath(ctx, id)
        out.push({
          rule: 'SORT_SOURCE_NOT_DROPPED',
          message: path === undefined
            ? `Cannot find source column for sort field: id ${id} is not in the schema`
            : `Cannot drop sort source column: ${subject(path, id)}: default sort order ${order.orderId} sorts by it (${sf.transform} ${sf.direction})`,
          fieldId: id,
          ...(path === undefined ? {} : { path }),
          explanation: 'First set a default sort order that does not use the column, then drop it.'
        })
      }
    }
    return out
  }
}
