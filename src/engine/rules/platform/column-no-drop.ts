import { Type } from '@sinclair/typebox'
import { typeToString } from '../../../iceberg/print.js'
import type { PlatformRule } from './platform-rule.js'
import { booleanOption, changesOf } from './support.js'

/**
 * Dropping a column removes it from every reader at once and cannot be undone through the catalog
 * (spec "Schema Evolution": a deleted field cannot be rolled back unless it was nullable or the
 * current snapshot has not changed). Atlas DS103, squawk `ban-drop-column`, buf FIELD_NO_DELETE.
 */
export const COLUMN_NO_DROP: PlatformRule = {
  id: 'COLUMN_NO_DROP',
  category: 'platform',
  purpose: 'Refuses dropping a column: every query and job that reads it breaks.',
  defaultSeverity: 'warn',
  optionsSchema: Type.Object({
    requiredOnly: Type.Boolean({ description: 'Only required columns may not be dropped (what FORWARD compatibility needs). Default false.' })
  }),
  * check (ctx) {
    const requiredOnly = booleanOption(ctx.options, 'requiredOnly', false)
    for (const c of changesOf(ctx.changes, 'field-dropped')) {
      if (requiredOnly && !c.field.required) continue
      yield {
        rule: this.id,
        message: `Cannot drop column ${c.path} (id ${c.fieldId}): the policy forbids dropping ${requiredOnly ? 'required ' : ''}columns`,
        fieldId: c.fieldId,
        path: c.path,
        oldType: typeToString(c.field.type),
        explanation: 'Every query, view and job that reads this column fails once it is gone. Deprecate it first (document it, stop writing it), move consumers, then drop it under a policy exception with an expiry date.'
      }
    }
  }
}
