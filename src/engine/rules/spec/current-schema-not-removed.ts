import type { Rule, Violation } from '../rule.js'
import { TABLE_FLOWS } from './helpers.js'

/**
 * `remove-schemas` never removes the current schema (Java: "Cannot remove current schema"): the
 * table would have no schema to read with.
 */
export const currentSchemaNotRemoved: Rule = {
  id: 'CURRENT_SCHEMA_NOT_REMOVED',
  category: 'spec',
  purpose: 'remove-schemas never removes the current schema.',
  defaultSeverity: 'error',
  flows: TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const issue of ctx.issues ?? []) {
      if (issue.rule === 'CURRENT_SCHEMA_NOT_REMOVED') out.push({ rule: 'CURRENT_SCHEMA_NOT_REMOVED', message: `${issue.message} (at ${issue.at})` })
    }
    return out
  }
}
