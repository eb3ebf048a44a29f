import { Type } from '@sinclair/typebox'
import type { PlatformRule } from './platform-rule.js'
import { addedFields, changesOf, isPseudoField, regexProblem } from './support.js'

const DEFAULT_COLUMN_NAME_PATTERN = '^[a-z][a-z0-9_]*$'

/** Naming conventions keep SQL portable across engines with different quoting and case rules. */
export const COLUMN_NAME_PATTERN: PlatformRule = {
  id: 'COLUMN_NAME_PATTERN',
  category: 'platform',
  purpose: 'Requires new and renamed column names to match a pattern (default lower snake_case).',
  defaultSeverity: 'off',
  optionsSchema: Type.Object({
    pattern: Type.String({ description: `Regular expression each column name (one level, not the dotted path) must match. Default \`${DEFAULT_COLUMN_NAME_PATTERN}\`.` })
  }),
  validateOptions: options => regexProblem(options, 'pattern'),
  * check (ctx) {
    const source = typeof ctx.options.pattern === 'string' ? ctx.options.pattern : DEFAULT_COLUMN_NAME_PATTERN
    const re = new RegExp(source)
    const named = [
      ...addedFields(ctx).filter(f => !isPseudoField(f)).map(f => ({ id: f.id, name: f.name, path: f.path })),
      ...changesOf(ctx.changes, 'field-renamed').map(c => ({ id: c.fieldId, name: c.newName, path: c.path }))
    ]
    for (const n of named) {
      if (re.test(n.name)) continue
      yield {
        rule: this.id,
        message: `Cannot name column ${n.path} (id ${n.id}): "${n.name}" does not match the pattern ${source}`,
        fieldId: n.id,
        path: n.path
      }
    }
  }
}
