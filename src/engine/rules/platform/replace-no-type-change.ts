import { typeToString } from '../../../iceberg/print.js'
import type { PlatformRule } from './platform-rule.js'

/**
 * CREATE OR REPLACE TABLE reuses field ids by name and may give a column a completely different
 * type under its old id (Java `TableMetadata.buildReplacement`). Time travel, branches and any
 * reader still holding the old schema then see values of one type where another is declared.
 */
export const REPLACE_NO_TYPE_CHANGE: PlatformRule = {
  id: 'REPLACE_NO_TYPE_CHANGE',
  category: 'platform',
  purpose: 'Refuses a create-or-replace that changes a column\'s type under its existing field id.',
  defaultSeverity: 'warn',
  flows: ['replace'],
  * check (ctx) {
    for (const c of ctx.changes) {
      if (c.kind !== 'type-changed' && c.kind !== 'kind-changed') continue
      const from = typeToString(c.from)
      const to = typeToString(c.to)
      yield {
        rule: this.id,
        message: `Cannot replace table with column ${c.path} (id ${c.fieldId}) changed from ${from} to ${to}: the replacement keeps the field id but not the type`,
        fieldId: c.fieldId,
        path: c.path,
        oldType: from,
        newType: to,
        explanation: 'A replace keeps ids by name, so snapshots written before the replace now carry data of the old type under an id declared with the new one. Give the column a new name in the replacement (a new id), or drop and recreate the table if its history does not matter.'
      }
    }
  }
}
