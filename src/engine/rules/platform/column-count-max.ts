import { Type } from '@sinclair/typebox'
import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Schema } from '../../../iceberg/types.js'
import type { PlatformRule } from './platform-rule.js'
import { isNewTable, numberOption } from './support.js'

const DEFAULT_COLUMN_COUNT_MAX = 1000

/**
 * Very wide tables slow planning, bloat manifests' column stats and usually mean an auto-evolving
 * writer has run away. Counts every named column at any depth. A table already over the limit is
 * only refused when a commit makes it wider, so it can still shrink.
 */
export const COLUMN_COUNT_MAX: PlatformRule = {
  id: 'COLUMN_COUNT_MAX',
  category: 'platform',
  purpose: 'Limits the number of columns (nested ones included) a table may have.',
  defaultSeverity: 'off',
  optionsSchema: Type.Object({
    max: Type.Integer({ minimum: 1, description: `Most columns allowed, nested included. Default ${DEFAULT_COLUMN_COUNT_MAX}.` })
  }),
  * check (ctx) {
    const max = numberOption(ctx.options, 'max', DEFAULT_COLUMN_COUNT_MAX)
    const count = columnCount(ctx.proposedSchema)
    if (count <= max) return
    const before = isNewTable(ctx) || ctx.baseSchema === undefined ? 0 : columnCount(ctx.baseSchema)
    if (!isNewTable(ctx) && count <= before) return
    yield {
      rule: this.id,
      message: `Cannot ${isNewTable(ctx) ? 'create a table with' : 'grow the table to'} ${count} columns: the policy allows at most ${max}`
    }
  }
}

/** Named columns, nested ones included; list elements and map keys/values are not columns. */
function columnCount (schema: Schema): number {
  const index = indexSchema(schema)
  let count = 0
  for (let pos = 0; pos < index.size; pos++) if (index.fieldAt(pos) !== undefined) count++
  return count
}
