import { Type } from '@sinclair/typebox'
import { indexSchema } from '../../../iceberg/schema-index.js'
import type { PlatformRule } from './platform-rule.js'
import { addedFields, columnDepth, isPseudoField, numberOption } from './support.js'

const DEFAULT_NESTING_DEPTH_MAX = 8

/**
 * Deeply nested columns are hard to query and to evolve (struct regrouping is not allowed by the
 * spec). Depth counts named columns: `a.b.c` is 3; list elements and map values add no level.
 */
export const NESTING_DEPTH_MAX: PlatformRule = {
  id: 'NESTING_DEPTH_MAX',
  category: 'platform',
  purpose: 'Limits how deeply new columns may be nested.',
  defaultSeverity: 'off',
  optionsSchema: Type.Object({
    max: Type.Integer({ minimum: 1, description: `Deepest nesting allowed (a top-level column is 1). Default ${DEFAULT_NESTING_DEPTH_MAX}.` })
  }),
  * check (ctx) {
    const max = numberOption(ctx.options, 'max', DEFAULT_NESTING_DEPTH_MAX)
    const index = indexSchema(ctx.proposedSchema)
    for (const f of addedFields(ctx)) {
      if (isPseudoField(f)) continue
      const depth = columnDepth(f, index)
      if (depth <= max) continue
      // Report the shallowest offender of a subtree only: its children are deeper still.
      const parent = f.parentId === undefined ? undefined : index.byId.get(f.parentId)
      if (parent !== undefined && columnDepth(parent, index) > max) continue
      yield {
        rule: this.id,
        message: `Cannot add column ${f.path} (id ${f.id}) nested ${depth} levels deep: the policy allows at most ${max}`,
        fieldId: f.id,
        path: f.path
      }
    }
  }
}
