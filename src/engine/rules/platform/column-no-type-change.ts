import { typeToString } from '../../../iceberg/print.js'
import type { PlatformRule } from './platform-rule.js'

/**
 * Even a legal promotion (int → long) breaks readers that cannot widen: old clients holding the old
 * schema, typed exports, downstream systems with fixed column types (squawk `changing-column-type`).
 */
export const COLUMN_NO_TYPE_CHANGE: PlatformRule = {
  id: 'COLUMN_NO_TYPE_CHANGE',
  category: 'platform',
  purpose: 'Refuses any change of a column\'s type, even a promotion the spec allows.',
  defaultSeverity: 'off',
  * check (ctx) {
    for (const c of ctx.changes) {
      if (c.kind !== 'type-changed' && c.kind !== 'kind-changed') continue
      const from = typeToString(c.from)
      const to = typeToString(c.to)
      yield {
        rule: this.id,
        message: `Cannot change column type: ${c.path} (id ${c.fieldId}): ${from} -> ${to}: the policy forbids type changes on this table`,
        fieldId: c.fieldId,
        path: c.path,
        oldType: from,
        newType: to,
        explanation: 'Readers that hold the old schema or write to typed sinks cannot follow even a widening. Add a new column of the new type, backfill it, and move consumers.'
      }
    }
  }
}
