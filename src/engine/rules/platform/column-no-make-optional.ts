import type { PlatformRule } from './platform-rule.js'
import { changesOf } from './support.js'

/**
 * Required → optional is legal and old data stays readable, but consumers that rely on the column
 * never being null (joins, keys, NOT NULL sinks) start seeing nulls. It also happens silently:
 * pyiceberg's union_by_name relaxes columns when a PyArrow field is nullable (#3105).
 */
export const COLUMN_NO_MAKE_OPTIONAL: PlatformRule = {
  id: 'COLUMN_NO_MAKE_OPTIONAL',
  category: 'platform',
  purpose: 'Refuses making a required column optional: consumers that rely on it never being null start seeing nulls.',
  defaultSeverity: 'warn',
  * check (ctx) {
    for (const c of changesOf(ctx.changes, 'nullability-changed')) {
      if (c.from !== 'required' || c.to !== 'optional') continue
      yield {
        rule: this.id,
        message: `Cannot make column ${c.path} (id ${c.fieldId}) optional: it is required now and consumers may rely on it never being null`,
        fieldId: c.fieldId,
        path: c.path,
        explanation: 'Check the writer: tools that derive the schema from a nullable DataFrame or Arrow field relax required columns without being asked. Keep writing the column as required, or agree the change with its consumers and allow it with a policy exception.'
      }
    }
  }
}
