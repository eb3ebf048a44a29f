import { Type } from '@sinclair/typebox'
import type { PlatformRule } from './platform-rule.js'
import { booleanOption, changesOf, nameKey, regexProblem } from './support.js'

/**
 * Rename `x` to `x__legacy` and add a new `x` in one commit: the "archive" pattern. Java's
 * SchemaUpdate refuses it in one update ("Cannot add column, name already exists", apache/iceberg
 * #11762), but a raw add-schema can do it. It is sometimes exactly what the team wants (the
 * backfill recipe of DROP_THEN_ADD_SAME_NAME), and sometimes an accident; the policy decides.
 */
export const RENAME_THEN_ADD_SAME_NAME: PlatformRule = {
  id: 'RENAME_THEN_ADD_SAME_NAME',
  category: 'platform',
  purpose: 'Warns when a column is renamed and a new column takes its old name in the same commit (the archive pattern), unless allowed.',
  defaultSeverity: 'warn',
  optionsSchema: Type.Object({
    allow: Type.Boolean({ description: 'Allow the pattern everywhere this rule applies. Default false.' }),
    archivePattern: Type.String({ description: 'Regular expression: allowed when the renamed column\'s new name matches it, e.g. `__legacy$`.' })
  }),
  validateOptions: options => regexProblem(options, 'archivePattern'),
  * check (ctx) {
    if (booleanOption(ctx.options, 'allow', false)) return
    const pattern = typeof ctx.options.archivePattern === 'string' ? new RegExp(ctx.options.archivePattern) : undefined
    const renamedFrom = new Map(changesOf(ctx.changes, 'field-renamed').map(c => [nameKey(c.oldPath, false), c]))
    for (const added of changesOf(ctx.changes, 'field-added')) {
      const renamed = renamedFrom.get(nameKey(added.path, false))
      if (renamed === undefined) continue
      if (pattern?.test(renamed.newName)) continue
      yield {
        rule: this.id,
        message: `Cannot rename column ${renamed.oldPath} (id ${renamed.fieldId}) to ${renamed.newName} and add a new ${added.path} (id ${added.fieldId}) in one commit: readers that name ${added.path} now read the new, empty column`,
        fieldId: added.fieldId,
        path: added.path,
        explanation: `The old data stays with id ${renamed.fieldId} under ${renamed.path}; the new ${added.path} is null for every existing row until it is backfilled. If this is the intended archive step, backfill ${added.path} from ${renamed.path} right after, or allow the pattern with the rule's \`archivePattern\` option.`
      }
    }
  }
}
