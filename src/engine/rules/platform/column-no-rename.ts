import type { PlatformRule } from './platform-rule.js'
import { changesOf } from './support.js'

/**
 * Iceberg renames are safe for readers that resolve by field id, but SQL, dashboards and most jobs
 * name columns, and they break. Atlas BC102, squawk `renaming-column`.
 */
export const COLUMN_NO_RENAME: PlatformRule = {
  id: 'COLUMN_NO_RENAME',
  category: 'platform',
  purpose: 'Refuses renaming a column: every consumer that reads it by name breaks.',
  defaultSeverity: 'warn',
  * check (ctx) {
    for (const c of changesOf(ctx.changes, 'field-renamed')) {
      yield {
        rule: this.id,
        message: `Cannot rename column ${c.oldPath} (id ${c.fieldId}) to ${c.newName}: the policy forbids renames`,
        fieldId: c.fieldId,
        path: c.oldPath,
        explanation: 'Iceberg keeps the data (columns are tracked by id), but every query, view and job that names the old column breaks. Add the new name as a view alias, or add a new column and backfill it, and retire the old one later.'
      }
    }
  }
}
