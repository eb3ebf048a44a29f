import { Type } from '@sinclair/typebox'
import type { PlatformRule } from './platform-rule.js'
import { booleanOption, changesOf, nameKey, nameReuseExplanation } from './support.js'

/**
 * Drop `x` and add `x` in one commit: Java's SchemaUpdate and pyiceberg allow it (apache/iceberg
 * PR #2204), and it looks like a type change or a rename. It is neither: the new column gets a
 * fresh id and reads as null for all existing data (apache/auron #2321, #2375; #17773).
 */
export const DROP_THEN_ADD_SAME_NAME: PlatformRule = {
  id: 'DROP_THEN_ADD_SAME_NAME',
  category: 'platform',
  purpose: 'Refuses dropping a column and adding a new one with the same name in one commit: the new column is empty for all old data.',
  defaultSeverity: 'error',
  optionsSchema: Type.Object({
    caseSensitive: Type.Boolean({ description: 'Compare names case-sensitively. Default false: Spark, Trino and Hive treat `Amount` and `amount` as one name.' })
  }),
  * check (ctx) {
    const caseSensitive = booleanOption(ctx.options, 'caseSensitive', false)
    const dropped = new Map(changesOf(ctx.changes, 'field-dropped').map(c => [nameKey(c.path, caseSensitive), c]))
    for (const added of changesOf(ctx.changes, 'field-added')) {
      const old = dropped.get(nameKey(added.path, caseSensitive))
      if (old === undefined) continue
      yield {
        rule: this.id,
        message: `Cannot drop and re-add column ${added.path} in one commit: the new ${added.path} (id ${added.fieldId}) is a new, empty column, not the dropped one (id ${old.fieldId}); this is not a rename`,
        fieldId: added.fieldId,
        path: added.path,
        explanation: nameReuseExplanation(added.path, added.fieldId, old.fieldId)
      }
    }
  }
}
